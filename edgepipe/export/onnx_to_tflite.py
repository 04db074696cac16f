"""Float TFLite from an ONNX file through onnx2tf, run as a subprocess.

onnx2tf is pinned to 1.28.8 (it declares no dependencies and works with TF 2.21 and
numpy 2). It runs in its own process because it prints heavily, seeds global random
state and can abort the interpreter on models it cannot convert; a failure there is
a :class:`ConversionError` the export stage reports, never a crash of the build.

- Recurrent ops (LSTM, GRU) are unrolled (``-eru``): shapes are static, and the TF RNN layer fails on them.
- Every input keeps its ONNX shape (``-kat``), NCHW included, so one dataset feeds the
  ONNX and the TFLite artifacts alike; onnx2tf inserts the transposes.
- Calibration data is always given (``-cind``, already normalised: mean 0, std 1): without it
  onnx2tf downloads sample images. For 3-channel NHWC inputs it loads them even so; they are written
  into its working folder first (:data:`SAMPLE_IMAGES`), so it never reads the network. With float
  inputs onnx2tf also writes a full-integer TFLite (``-oiqt``, the TF converter calibrated on that
  data), which :func:`int8_output` finds for the quantize stage: on NCHW CNNs it tracks the float
  model more closely than quantizing the float TFLite afterwards.
- onnx2tf runs ``onnxsim`` as a subprocess, so the environment's ``bin`` folder goes on PATH.
- Padded MaxPools are rewritten first (:mod:`edgepipe.export.onnx_max_pool_pads`): onnx2tf pads them with zeros;
  so are Slices that reverse a whole axis (:mod:`edgepipe.export.onnx_reverse_slices`): onnx2tf gets them wrong;
  and Conv1Ds written as 2-D Convs over an inserted unit axis (tf2onnx's and Paddle's Unsqueeze -> Conv -> Squeeze,
  :mod:`edgepipe.export.onnx_conv1d`) are folded into 1-D Convs: onnx2tf fails on them.
- ONNX Runtime's fused contrib ops (FusedConv, FusedGemm, FusedMatMul) are expanded into standard ops
  (:mod:`edgepipe.export.onnx_fused_contrib`): onnx2tf's shape estimation skips a graph holding them.
- Node names TensorFlow refuses as scope names (PaddlePaddle's ``Softmax@0``) are rewritten
  (:mod:`edgepipe.export.onnx_node_names`): onnx2tf names TF ops after them and fails.
- LSTMs without initial states get explicit zero ones (:mod:`edgepipe.export.onnx_lstm_states`): onnx2tf fails
  on them. edgepipe then runs onnxsim itself, and onnx2tf does not (``-nuo``): it would drop the zeros again.
- A :class:`~edgepipe.export.tflite_routes.Route` says what edgepipe does first when onnx2tf's own conversion
  failed: unroll LSTM, GRU and RNN nodes into their defining ops (:mod:`edgepipe.export.onnx_unroll_rnn`),
  approximate ops that need Select TF ops, rewrite nodes onnx2tf fails on
  (:mod:`edgepipe.export.onnx_layout_rewrites`), or give onnx2tf a parameter replacement file (``-prf``).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.export.tflite_routes import Route

log = logging.getLogger(__name__)

TIMEOUT_S = 900
_ONNX2TF_MAIN = "from onnx2tf import main; main()"
#: Every ONNX file onnx2tf was started on in this process, in order: a build converts its model once
#: (float and full-integer TFLite from one run), which the build-performance tests count here.
RUNS: list[Path] = []


class ConversionError(Exception):
    """onnx2tf could not convert the model; the message is its last meaningful line of output, ``node`` the ONNX
    node it failed at when it names one, ``suggested`` the parameter replacement file it wrote for the failure."""

    def __init__(self, message: str, node: str | None = None, suggested: Path | None = None):
        super().__init__(message)
        self.node = node
        self.suggested = suggested


class SelectOpsError(ConversionError):
    """onnx2tf's TFLite needs Select TF (Flex) ops, which LiteRT and every NPU delegate refuse; ``ops`` names them."""

    def __init__(self, message: str, ops: list[str]):
        super().__init__(message)
        self.ops = ops


#: Select TF ops onnx2tf writes for ONNX ops TFLite has no builtin for, and the ONNX op edgepipe can write in builtin
#: ops instead (an approximation: :mod:`edgepipe.export.onnx_erf`).
APPROXIMABLE = {"FlexErf": "Erf"}


def approximable(select_ops: list[str]) -> list[str] | None:
    """The ONNX ops whose approximations replace every one of ``select_ops``, or None if one has none."""
    names = [APPROXIMABLE.get(op) for op in select_ops]
    return None if not names or None in names else sorted({n for n in names if n})


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env.setdefault("CUDA_VISIBLE_DEVICES", "")
    env.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    return env


def onnx2tf_name(name: str, integer: bool) -> str:
    """The name onnx2tf gives an input before it looks up ``-kat`` and ``-cind`` by it: ':' becomes '__', and a
    leading '/' becomes 'wa/' when it writes an integer TFLite."""
    sanitized = name.replace(":", "__")
    return re.sub("^/", "wa/", sanitized) if integer else sanitized


def _calibration_args(calibration: Dataset, input_names: list[str], scratch: Path, integer: bool) -> list[str]:
    """``-cind NAME FILE.npy MEAN STD`` per input: one sample-major array per model input, used as is."""
    args: list[str] = []
    for index, (name, array) in enumerate(zip(input_names, calibration.inputs)):
        path = scratch / f"onnx2tf_calib_{index}.npy"
        np.save(path, np.asarray(array))
        args += ["-cind", onnx2tf_name(name, integer), str(path), "0.0", "1.0"]
    return args


#: The sample images onnx2tf loads from its working folder, or else downloads from GitHub, whenever every input of
#: the model is a 3-channel NHWC image (an image classifier's build failed offline). With ``-cind`` given it never uses
#: them, so edgepipe writes the calibration images there and onnx2tf reads no network.
SAMPLE_IMAGES = "calibration_image_sample_data_20x128x128x3_float32.npy"


def _offline_sample_images(calibration: Dataset, scratch: Path) -> None:
    """Write onnx2tf's sample images (:data:`SAMPLE_IMAGES`) into ``scratch``: the first calibration input's
    samples when they are 3-channel NHWC images, else zeros of the shape the file name gives."""
    first = np.asarray(calibration.inputs[0]) if calibration.inputs else np.zeros(0)
    images = first[:20].astype(np.float32) if first.ndim == 4 and first.shape[-1] == 3 else \
        np.zeros((20, 128, 128, 3), np.float32)
    np.save(scratch / SAMPLE_IMAGES, images)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
#: onnx2tf's advice printed after every failure, whatever the cause: never the reason a conversion failed.
_BOILERPLATE = ("The trace log is below", "input_onnx_file_path:", "onnx_op_name:", "Read this and deal with it",
                "Alternatively, if the input OP", "If the input OP of ONNX", "Also, for models that include")
_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?\w+(?:Error|Exception): .+")
_FAILED_OP = re.compile(r"onnx_op_name: (\S+)")


def failed_node(output: str) -> str | None:
    """The ONNX node onnx2tf names as the one it failed at (its ``wa/`` prefix read back as ``/``)."""
    failed = _FAILED_OP.search(_ANSI.sub("", output))
    if failed is None:
        return None
    node = failed.group(1)
    return "/" + node[3:] if node.startswith("wa/") else node


def last_error(output: str) -> str:
    """The reason onnx2tf gives for a failure, and the ONNX node it failed on: its own ``ERROR:`` line about the
    op, else the exception that ended it, else the last line that mentions an error."""
    lines = [line.strip() for line in _ANSI.sub("", output).splitlines() if line.strip()]
    own = [line.removeprefix("ERROR:").strip() for line in lines
           if line.startswith("ERROR:") and not any(text in line for text in _BOILERPLATE)]
    exceptions = [line for line in lines if _EXCEPTION.match(line)]
    errors = [line for line in lines if "error" in line.lower() and not any(text in line for text in _BOILERPLATE)]
    reason = (own or exceptions[-1:] or errors[-1:] or lines[-1:] or ["no output"])[0]
    node = failed_node(output)
    return (reason + (f" (at ONNX node {node})" if node else ""))[:400]


def kept_input_names(input_names: list[str]) -> list[str]:
    """Each input name as given and as onnx2tf renames it (:func:`onnx2tf_name`), so an input PyTorch named
    'onnx::Flatten_0' keeps its shape (wake-word classifiers: else [1, 16, 96] became [1, 96, 16] and the
    TFLite was refused)."""
    variants = (v for name in input_names for v in (name, onnx2tf_name(name, False), onnx2tf_name(name, True)))
    return list(dict.fromkeys(variants))


def command(onnx_path: Path, out_dir: Path, input_names: list[str], calibration_args: list[str],
            integer: bool, simplified: bool = False, replacements: Path | None = None) -> list[str]:
    """The onnx2tf command line: float32 TFLite (and full-integer with ``integer``), input shapes kept, quiet;
    with ``simplified`` (edgepipe ran onnxsim already) onnx2tf does not run it again (``-nuo``); ``replacements``
    is a parameter replacement file (``-prf``)."""
    return [sys.executable, "-c", _ONNX2TF_MAIN, "-i", str(onnx_path), "-o", str(out_dir),
            "-kat", *kept_input_names(input_names), "-eru", "-n", *(["-oiqt"] if integer else []),
            *(["-nuo"] if simplified else []), *(["-prf", str(replacements)] if replacements else []),
            *calibration_args]


def _sidecar(float_path: Path) -> Path:
    return float_path.with_name(f".{float_path.stem}.onnx2tf-int8.tflite")


def int8_output(float_path: Path) -> Path | None:
    """onnx2tf's full-integer TFLite (int8 inputs and outputs) made with the float TFLite at ``float_path``."""
    sidecar = _sidecar(float_path)
    return sidecar if sidecar.is_file() else None


def discard(float_path: Path) -> None:
    """Remove a float TFLite that is not kept, and onnx2tf's full-integer file made with it."""
    float_path.unlink(missing_ok=True)
    _sidecar(float_path).unlink(missing_ok=True)


def _exact_rewrites(path: Path) -> None:
    """Rewrite the padded MaxPools, the reversing Slices, the unit-axis Conv1D chains, ONNX Runtime's fused
    contrib ops, data-dependent Ifs, 3-D pools and ONNX-ML Scalers of the ONNX file at ``path`` (onnx2tf's private
    copy) so that onnx2tf converts them exactly into builtins (:mod:`edgepipe.export.onnx_max_pool_pads`,
    :mod:`edgepipe.export.onnx_reverse_slices`, :mod:`edgepipe.export.onnx_conv1d`,
    :mod:`edgepipe.export.onnx_fused_contrib`, :mod:`edgepipe.export.onnx_if_where`,
    :mod:`edgepipe.export.onnx_pool3d`, :mod:`edgepipe.export.onnx_ml_scaler`), and give its nodes names
    TensorFlow takes as scope names (:mod:`edgepipe.export.onnx_node_names`)."""
    import onnx

    from edgepipe.export.onnx_conv1d import fold_conv1d_chains
    from edgepipe.export.onnx_fused_contrib import expand_fused_contrib_ops
    from edgepipe.export.onnx_if_where import if_as_where
    from edgepipe.export.onnx_max_pool_pads import exact_max_pools
    from edgepipe.export.onnx_ml_scaler import scalers_as_arithmetic
    from edgepipe.export.onnx_node_names import scope_safe_node_names
    from edgepipe.export.onnx_pool3d import pools_3d_as_2d
    from edgepipe.export.onnx_reverse_slices import reverse_slices_as_gathers

    model = onnx.load(str(path))
    fused = expand_fused_contrib_ops(model)  # first: the rewrites below infer shapes, which needs standard ops
    scalers = scalers_as_arithmetic(model)
    branches = if_as_where(model)
    pools, slices, convs = exact_max_pools(model), reverse_slices_as_gathers(model), fold_conv1d_chains(model)
    volumes = pools_3d_as_2d(model)
    renamed = scope_safe_node_names(model)
    if pools or slices or convs or fused or branches or volumes or scalers or renamed:
        log.info("rewrote %d padded MaxPool(s), %d reversing Slice(s), %d unit-axis Conv1D(s), %d fused contrib "
                 "op(s), %d If(s), %d 3-D pool(s) and %d Scaler(s) of %s for onnx2tf, renamed %d node(s)", pools,
                 slices, convs, fused, branches, volumes, scalers, path.name, renamed)
        onnx.save(model, str(path))


def _approximations(path: Path, ops: tuple[str, ...]) -> None:
    """Write the ``ops`` of the ONNX file at ``path`` (onnx2tf's private copy) in ops TFLite has builtins for."""
    import onnx

    from edgepipe.export.onnx_erf import erf_as_tanh

    model = onnx.load(str(path))
    if "Erf" in ops:
        log.info("wrote %d Erf(s) of %s as the tanh approximation for onnx2tf", erf_as_tanh(model), path.name)
    onnx.save(model, str(path))


def _explicit_lstm_states(path: Path) -> bool:
    """Give the LSTMs of the ONNX file at ``path`` (onnx2tf's private copy) explicit zero initial states, after
    running onnxsim on it as onnx2tf would (:mod:`edgepipe.export.onnx_lstm_states`); True when onnx2tf must then
    not simplify it again."""
    import onnx

    from edgepipe.export.onnx_lstm_states import add_zero_states, has_lstm, simplify

    if not has_lstm(onnx.load(str(path))) or not simplify(path, _environment()):
        return False
    model = onnx.load(str(path))
    count = add_zero_states(model)
    if count:
        log.info("gave %d LSTM(s) of %s explicit zero initial states for onnx2tf", count, path.name)
        onnx.save(model, str(path))
    return True


def _unrolled_recurrent_ops(path: Path) -> bool:
    """Unroll the LSTM, GRU and RNN nodes of the ONNX file at ``path`` (onnx2tf's private copy) after running
    onnxsim on it (:mod:`edgepipe.export.onnx_unroll_rnn`); True when onnx2tf must then not simplify it again."""
    import onnx

    from edgepipe.export.onnx_lstm_states import simplify
    from edgepipe.export.onnx_unroll_rnn import unroll_recurrent

    simplified = simplify(path, _environment())
    model = onnx.load(str(path))
    count = unroll_recurrent(model)
    if count:
        log.info("unrolled %d recurrent op(s) of %s for onnx2tf", count, path.name)
        onnx.save(model, str(path))
        simplified = simplify(path, _environment())  # folds the stacking into the reshapes that read it
    return simplified


def _route_rewrites(path: Path, rewrites: tuple[str, ...]) -> None:
    """Apply the graph rewrites a route names to the ONNX file at ``path`` (onnx2tf's private copy)."""
    import onnx

    from edgepipe.export.onnx_layout_rewrites import REWRITES
    from edgepipe.graph.onnx_edit import drop_unread_initializers

    model = onnx.load(str(path))
    for name in rewrites:
        log.info("rewrote %d node(s) of %s for onnx2tf: %s", REWRITES[name].apply(model), path.name,
                 REWRITES[name].says)
    drop_unread_initializers(model)  # the constants a rewrite replaced by reshaped copies
    onnx.save(model, str(path))


def _suggested_replacements(out_dir: Path, onnx_path: Path, scratch: Path) -> Path | None:
    """The parameter replacement file onnx2tf writes (``<model>_auto.json``) when its conversion fails at a node,
    moved out of its output folder (emptied by the next run); None when it wrote none."""
    written = out_dir / f"{onnx_path.stem}_auto.json"
    if not written.is_file():
        return None
    kept = scratch / f"onnx2tf_suggested_{len(list(scratch.glob('onnx2tf_suggested_*.json')))}.json"
    shutil.copyfile(written, kept)
    return kept


def convert_onnx_to_tflite(onnx_path: Path, out_path: Path, calibration: Dataset, input_names: list[str],
                           scratch: Path, route: Route | None = None) -> Path:
    """Write the float32 TFLite of the (static-shape) ONNX model at ``onnx_path`` to ``out_path`` along ``route``
    (:mod:`edgepipe.export.tflite_routes`: edgepipe's unrolling, approximations and rewrites first, onnx2tf's own
    parameter replacement file; onnx2tf's own conversion without one)."""
    route = route or Route()
    onnx_path, scratch = onnx_path.resolve(), scratch.resolve()  # onnx2tf runs in ``scratch``
    # onnx2tf runs onnxsim on its input and writes the result back to the same file: it gets a copy, so the
    # float artifact stays the model that was loaded (onnxsim drops the domain of com.microsoft ops)
    private = scratch / "onnx2tf_input"
    private.mkdir(parents=True, exist_ok=True)
    onnx_path = Path(shutil.copyfile(onnx_path, private / onnx_path.name))
    _exact_rewrites(onnx_path)
    if route.approximate:
        _approximations(onnx_path, route.approximate)
    if route.rewrites:
        _route_rewrites(onnx_path, route.rewrites)
    simplified = _unrolled_recurrent_ops(onnx_path) if route.unroll else _explicit_lstm_states(onnx_path)
    out_dir = scratch / "onnx2tf"
    shutil.rmtree(out_dir, ignore_errors=True)
    integer = all(np.issubdtype(array.dtype, np.floating) for array in calibration.inputs)
    _offline_sample_images(calibration, scratch)
    args = command(onnx_path, out_dir, input_names, _calibration_args(calibration, input_names, scratch, integer),
                   integer, simplified, route.replacements)
    log.info("running onnx2tf on %s", onnx_path.name)
    RUNS.append(onnx_path)
    try:
        done = subprocess.run(args, capture_output=True, text=True, env=_environment(), timeout=TIMEOUT_S,
                              cwd=scratch, check=False)
    except subprocess.TimeoutExpired:
        raise ConversionError(f"onnx2tf did not finish within {TIMEOUT_S} s") from None
    produced = out_dir / f"{onnx_path.stem}_float32.tflite"
    if not produced.is_file():
        log.debug("onnx2tf output:\n%s\n%s", done.stdout[-4000:], done.stderr[-4000:])
        output = done.stdout + done.stderr
        raise ConversionError(f"onnx2tf failed (exit {done.returncode}): {last_error(output)}", failed_node(output),
                              _suggested_replacements(out_dir, onnx_path, scratch))
    if done.returncode != 0:  # the float model was written; only its integer quantization failed
        log.warning("onnx2tf wrote the float TFLite but failed afterwards: %s", last_error(done.stdout + done.stderr))
        for partial in out_dir.glob("*_quant*.tflite"):
            partial.unlink()
    shutil.copyfile(produced, out_path)
    integer_file = out_dir / f"{onnx_path.stem}_full_integer_quant.tflite"
    if integer_file.is_file():  # kept beside the float file (hidden name) for the quantize stage
        shutil.copyfile(integer_file, _sidecar(out_path))
    return out_path
