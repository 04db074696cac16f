"""Float ONNX from a float TFLite file through tf2onnx's TFLite front end (``tf2onnx.convert.from_tflite``).

A TFLite model (MediaPipe's, or any exported one) otherwise reaches only the TFLite targets
and gets only the TFLite quantizer: no fallback ladder (mixed precision, QAT), no QDQ ONNX for
the QNN HTP, no float ONNX for Rockchip's compiler. The ONNX keeps the TFLite's layout, input
and output names and shapes (tf2onnx transposes NHWC internally), so one dataset feeds both.

tf2onnx writes a graph even when it meets an op it cannot translate (it leaves the TFLite op in
place, e.g. MediaPipe's ``Convolution2DTransposeBias``): the result is only kept when ONNX
Runtime loads it and gives the TFLite's outputs (LiteRT) on real samples, within
:data:`TOLERANCE` of each output's range; otherwise :class:`ToolFailed` says which check failed.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from edgepipe.errors import ToolFailed

log = logging.getLogger(__name__)

#: ONNX opset of converted models (as for tf2onnx's Keras/SavedModel export).
OPSET = 17
#: Largest difference from LiteRT's outputs, relative to each output's largest magnitude.
TOLERANCE = 1e-3
_NEXT = ("targets that deploy TFLite are still built and checked; for ONNX targets give the model as ONNX "
         "or as its source (.keras, SavedModel), or replace the op tf2onnx names")


def _failed(message: str) -> ToolFailed:
    return ToolFailed("tf2onnx", message, _NEXT)


def _unsupported_ops(model: object) -> list[str]:
    """Op types of nodes tf2onnx left untranslated (their domain is no ONNX domain it imports)."""
    from onnx import defs

    known = {schema.name for schema in defs.get_all_schemas_with_history()}
    return sorted({n.op_type for n in model.graph.node if n.op_type not in known})  # type: ignore[attr-defined]


def _litert_outputs(tflite_path: Path, samples: list[list[np.ndarray]]) -> tuple[list[str], list[list[np.ndarray]]]:
    """LiteRT's output names and, per sample, its outputs."""
    from edgepipe.runtimes import open_runner

    with open_runner(tflite_path) as runner:
        names = [spec.name for spec in runner.signature.outputs]
        return names, [[np.asarray(out) for out in runner.infer(sample)] for sample in samples]


def _check_same_function(onnx_path: Path, tflite_path: Path, samples: list[list[np.ndarray]]) -> None:
    """Raise :class:`ToolFailed` unless ONNX Runtime loads ``onnx_path`` and matches LiteRT on ``samples``."""
    import onnxruntime as ort
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidGraph, NotImplemented

    try:
        session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    except (Fail, InvalidArgument, InvalidGraph, NotImplemented) as exc:
        raise _failed(f"ONNX Runtime cannot load tf2onnx's output: {str(exc).splitlines()[0][:240]}") from exc
    names = [i.name for i in session.get_inputs()]
    litert_names, outputs = _litert_outputs(tflite_path, samples)
    onnx_names = [o.name for o in session.get_outputs()]
    order = ([onnx_names.index(n) for n in litert_names] if sorted(onnx_names) == sorted(litert_names)
             else list(range(len(onnx_names))))
    for sample, expected in zip(samples, outputs):
        run = session.run(None, {name: np.asarray(x, np.float32) for name, x in zip(names, sample)})
        got = [run[k] for k in order if k < len(run)]
        if len(run) != len(expected):
            raise _failed(f"tf2onnx's ONNX has {len(got)} outputs, the TFLite {len(expected)}")
        for index, (ref, out) in enumerate(zip(expected, got)):
            if ref.shape != out.shape:
                raise _failed(f"output {index}: ONNX shape {out.shape}, TFLite {ref.shape}")
            scale = max(float(np.max(np.abs(ref))), 1e-12)
            diff = float(np.max(np.abs(ref.astype(np.float64) - out))) / scale
            if diff > TOLERANCE:
                raise _failed(f"output {index} differs from LiteRT's by {diff:.2e} of its range "
                              f"(tolerance {TOLERANCE:g})")


def _fix_stored_shapes(model: object, tflite_path: Path, onnx_path: Path) -> None:
    """Give the ONNX inputs the shapes the TFLite stores (what LiteRT allocates, batch size 1) where tf2onnx kept the
    shape signature's -1 as a dynamic dimension: a converted Keras model's batch is ``None``, and NPU compilers
    (rknn-toolkit2) refuse dynamic inputs."""
    from ai_edge_litert.interpreter import Interpreter

    from edgepipe.load.onnx_shapes import dynamic_inputs, fix_input_shapes

    dynamic = dynamic_inputs(model)
    if not dynamic:
        return
    stored = {d["name"]: [int(s) for s in d["shape"]] for d in Interpreter(model_path=str(tflite_path))
              .get_input_details()}
    shapes = {name: stored[name] for name in dynamic if name in stored and all(s > 0 for s in stored[name])}
    fix_input_shapes(model, shapes, onnx_path)


def convert_tflite_to_onnx(tflite_path: Path, onnx_path: Path, samples: list[list[np.ndarray]]) -> Path:
    """Write the float ONNX of the float TFLite ``tflite_path`` to ``onnx_path``, checked on ``samples``.

    Raises :class:`ToolFailed` (nothing is left at ``onnx_path``) when tf2onnx's output is not the
    same function; tf2onnx's own exceptions propagate for the caller's tool boundary.
    """
    import onnx
    import tf2onnx  # heavy optional dependency (imports TensorFlow)

    checked = False
    try:
        model, _ = tf2onnx.convert.from_tflite(str(tflite_path), opset=OPSET)
        unsupported = _unsupported_ops(model)
        if unsupported:
            raise _failed(f"no ONNX translation for the TFLite op(s) {', '.join(unsupported)}")
        model.producer_name = "edgepipe (tf2onnx from TFLite)"
        _fix_stored_shapes(model, tflite_path, onnx_path)
        onnx.save(model, str(onnx_path))
        _check_same_function(onnx_path, tflite_path, samples)
        checked = True
    finally:
        if not checked:  # whatever failed, no unchecked ONNX stays behind
            onnx_path.unlink(missing_ok=True)
    log.info("converted %s to ONNX (tf2onnx, opset %d), same outputs as LiteRT on %d samples",
             tflite_path.name, OPSET, len(samples))
    return onnx_path
