"""Making a float ONNX model quantizable by ONNX Runtime's QDQ quantizer, and recording what was done and why.

Real exports need more than ``quant_pre_process``:

- **opset < 13** (PaddlePaddle's paddle2onnx writes 11/12): ``DequantizeLinear`` has no
  ``axis`` before opset 13, so per-channel weights would give a model no runtime loads.
  The model is upgraded with ``onnx.version_converter.convert_version`` and kept only when
  ONNX Runtime gives the same outputs as before on real samples; otherwise it stays at its
  opset and is quantized per-tensor, and the note says why.
- **biases that are not 1-D** (a ``Gemm`` C input of shape ``(1, N)``: exporters write
  ``MatMul + Add`` with such a bias and ORT's pre-processing fuses them into ``Gemm``):
  with per-channel weights, ORT's ``QDQQuantizer._adjust_weight_scale_for_int32_bias``
  takes ``bias[i]`` per output channel, which is a row, and compares it with ``<`` —
  ``ValueError: The truth value of an array with more than one element is ambiguous``.
  ``(1, N)`` biases are reshaped to ``(N,)`` (same values, same broadcast); for any
  other 2-D bias the quantizer option ``QDQDisableWeightAdjustForInt32Bias`` skips that
  adjustment (:func:`needs_bias_adjust_off`).
- **one bias initializer shared by several nodes** (tf2onnx merges equal constants): ORT's
  quantizer gives each extra user a copy named ``<bias><N>`` checking only initializer names,
  so the copy can take the name of an activation (``conv1d_25`` + ``2`` = ``conv1d_252``, a
  Conv output) and rewire its readers to the bias: the int8 model then fails to load
  ("All inputs to Concat must have same rank"). Every user gets its own copy first, named so
  that nothing else in the graph has that name (:func:`unshare_biases`).

- **operations written as several nodes** (PaddlePaddle's HardSwish, constant scales after a Conv):
  rewritten exactly before quantization (:mod:`.onnx_fusions`), so int8 tensors sit where the
  model's operations are; checked like the opset upgrade and undone when outputs change.

The result is cached beside the prepared file (``<name>.json``), so every caller of
:func:`prepare_onnx` on the same file gets the same model and the same notes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import tempfile
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.quantize.onnx_fusions import (
    HARDSWISH_OPSET,
    fold_affine_into_conv,
    fuse_decomposed_hardswish,
    has_decomposed_hardswish,
    name_nodes,
)

log = logging.getLogger(__name__)

#: First opset whose ``QuantizeLinear``/``DequantizeLinear`` take ``axis`` (per-channel scales).
PER_CHANNEL_OPSET = 13
#: Largest relative output difference (max |a-b| / max |a|) an opset upgrade may cause and still be kept.
UPGRADE_TOLERANCE = 1e-4


@dataclass
class PreparedOnnx:
    """The float model the quantizer reads, its opset, whether per-channel weights are possible, and why."""

    path: Path
    opset: int
    per_channel: bool
    notes: list[str] = field(default_factory=list)


def default_opset(model: Any) -> int:
    """The model's ``ai.onnx`` opset version."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)


def _run(model: Any, samples: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return [session.run(None, dict(zip(names, sample))) for sample in samples]


def outputs_differ(before: Any, after: Any, samples: list[list[np.ndarray]]) -> str | None:
    """None when ``after`` gives ``before``'s outputs on ``samples`` (within :data:`UPGRADE_TOLERANCE`); else why."""
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidGraph, NotImplemented

    try:
        reference, got = _run(before, samples), _run(after, samples)
    except (Fail, InvalidArgument, InvalidGraph, NotImplemented) as exc:
        return f"ONNX Runtime cannot run the upgraded model ({str(exc).splitlines()[0][:200]})"
    for ref_outs, got_outs in zip(reference, got):
        for index, (ref, out) in enumerate(zip(ref_outs, got_outs)):
            ref64, out64 = np.asarray(ref, np.float64), np.asarray(out, np.float64)
            if ref64.shape != out64.shape:
                return f"output {index} changed shape {ref64.shape} -> {out64.shape}"
            scale = max(float(np.max(np.abs(ref64))) if ref64.size else 0.0, 1e-12)
            diff = float(np.max(np.abs(ref64 - out64))) / scale if ref64.size else 0.0
            if diff > UPGRADE_TOLERANCE:
                return f"output {index} differs by {diff:.2e} of its range (tolerance {UPGRADE_TOLERANCE:g})"
    return None


def upgrade_opset(model: Any, samples: list[list[np.ndarray]], target: int = PER_CHANNEL_OPSET) -> tuple[Any, str]:
    """``model`` converted to opset ``target`` and checked on ``samples``; the original and the reason if not.

    Returns ``(model, note)``; the model is the upgraded one only when the note starts with ``"opset"``.
    """
    from onnx.version_converter import convert_version

    before = default_opset(model)
    try:
        upgraded = convert_version(model, target)
    except (RuntimeError, ValueError, IndexError, KeyError) as exc:  # what the C++ converter raises through pybind
        reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        return model, f"onnx's version converter could not upgrade opset {before} to {target} ({reason})"
    problem = outputs_differ(model, upgraded, samples)
    if problem is not None:
        return model, f"opset {before} -> {target} upgrade rejected: {problem}"
    return upgraded, (f"opset {before} upgraded to {target} (onnx version converter) for per-channel weights; "
                      f"same outputs in ONNX Runtime on {len(samples)} samples")


def flatten_gemm_biases(model: Any) -> list[str]:
    """Reshape 2-D ``Gemm`` C initializers of shape ``(1, N)`` to ``(N,)`` in place; returns their names.

    Same values and the same broadcast over the rows; ORT's QDQ bias quantizer needs a 1-D bias.
    """
    from onnx import numpy_helper

    initializers = {init.name: init for init in model.graph.initializer}
    users: dict[str, int] = {}
    for node in model.graph.node:
        for name in node.input:
            users[name] = users.get(name, 0) + 1
    changed = []
    for node in model.graph.node:
        if node.op_type != "Gemm" or len(node.input) < 3 or node.input[2] not in initializers:
            continue
        bias = initializers[node.input[2]]
        if len(bias.dims) != 2 or bias.dims[0] != 1 or users.get(bias.name, 0) != 1:
            continue
        array = numpy_helper.to_array(bias).reshape(-1)
        bias.CopyFrom(numpy_helper.from_array(array, bias.name))
        changed.append(bias.name)
    return changed


#: Ops whose input 2 ORT's QDQ quantizer quantizes as an int32 bias.
_BIAS_OPS = ("Conv", "ConvTranspose", "Gemm")


def unshare_biases(model: Any) -> list[str]:
    """Give every node after the first that reads a shared bias initializer its own copy; returns the new names.

    The copies are named ``<bias>__bias<k>`` with ``k`` chosen so that no tensor, initializer or
    graph input/output of the model already has that name (ORT's own copies only avoid initializer names).
    """
    initializers = {init.name: init for init in model.graph.initializer}
    taken = set(initializers) | {v.name for v in (*model.graph.input, *model.graph.output)}
    taken |= {name for node in model.graph.node for name in (*node.input, *node.output)}
    seen: set[str] = set()
    created: list[str] = []
    for node in model.graph.node:
        if node.op_type not in _BIAS_OPS or len(node.input) < 3 or node.input[2] not in initializers:
            continue
        name = node.input[2]
        if name not in seen:
            seen.add(name)
            continue
        k = 1
        while f"{name}__bias{k}" in taken:
            k += 1
        copy = model.graph.initializer.add()
        copy.CopyFrom(initializers[name])
        copy.name = f"{name}__bias{k}"
        taken.add(copy.name)
        node.input[2] = copy.name
        created.append(copy.name)
    return created


def fuse_for_quantization(model: Any, samples: list[list[np.ndarray]]) -> tuple[Any, list[str]]:
    """``model`` with unnamed nodes named and :mod:`.onnx_fusions`' rewrites applied, and notes saying what was
    done; the rewrites are undone (and the note says why) when ONNX Runtime's outputs on ``samples`` change."""
    import onnx

    candidate = onnx.ModelProto()
    candidate.CopyFrom(model)
    name_nodes(candidate)
    notes, done = [], []
    if has_decomposed_hardswish(candidate) and default_opset(candidate) < HARDSWISH_OPSET:
        upgraded, note = upgrade_opset(candidate, samples, HARDSWISH_OPSET)
        if note.startswith("opset"):
            candidate = upgraded
        notes.append(note if note.startswith("opset") else f"decomposed HardSwish kept: {note}")
    if default_opset(candidate) >= HARDSWISH_OPSET and (fused := fuse_decomposed_hardswish(candidate)):
        done.append(f"{fused} decomposed HardSwish (x * clip(x + 3, 0, 6) / 6) fused into HardSwish")
    if folded := fold_affine_into_conv(candidate):
        done.append(f"{folded} constant Mul/Div/Add/Sub after a Conv folded into its weights and bias")
    if not done:
        return candidate, notes
    problem = outputs_differ(model, candidate, samples)
    if problem is not None:
        name_nodes(model)
        return model, [f"rewrites for quantization undone ({'; '.join(done)}): {problem}"]
    return candidate, notes + [f"{'; '.join(done)} (same outputs in ONNX Runtime on {len(samples)} samples), "
                               "so int8 tensors sit between whole operations"]


def needs_bias_adjust_off(model: Any) -> bool:
    """True when some ``Gemm`` bias initializer is still not 1-D (ORT's bias-scale adjustment fails on it)."""
    initializers = {init.name: init for init in model.graph.initializer}
    return any(n.op_type == "Gemm" and len(n.input) > 2 and n.input[2] in initializers
               and len(initializers[n.input[2]].dims) > 1 for n in model.graph.node)


def synthetic_samples(model: Any, count: int = 2, seed: int = 0) -> list[list[np.ndarray]]:
    """Standard-normal inputs for ``model`` (dynamic dims as 1), for checks when no data is given."""
    from onnx.helper import tensor_dtype_to_np_dtype

    rng = np.random.default_rng(seed)
    initializers = {init.name for init in model.graph.initializer}
    specs = [(tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type),
              [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1 for d in v.type.tensor_type.shape.dim])
             for v in model.graph.input if v.name not in initializers]
    return [[rng.standard_normal(shape).astype(dtype) for dtype, shape in specs] for _ in range(count)]


def _raised_in_symbolic_inference(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside ONNX Runtime's symbolic shape inference (a TypeError on a Slice of a tensor
    whose shape it could not infer after a DFT, as in a forecaster's periodogram), not in what runs after it."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and frames[-1].filename.endswith("symbolic_shape_infer.py")


def _standard_ops(float_path: Path, scratch: Path) -> tuple[str, int]:
    """The file the quantizer pre-processes: ``float_path`` itself, or a copy in ``scratch`` with ONNX Runtime's
    fused contrib ops expanded (:mod:`edgepipe.export.onnx_fused_contrib`: ORT's shape inference and quantizer do
    not know them); and how many were expanded."""
    import onnx

    from edgepipe.export.onnx_fused_contrib import expand_fused_contrib_ops

    model = onnx.load(str(float_path))
    expanded = expand_fused_contrib_ops(model)
    if not expanded:
        return str(float_path), 0
    copy = scratch / float_path.name
    onnx.save(model, str(copy))
    return str(copy), expanded


def prepare_onnx(float_path: Path, out_path: Path, samples: list[list[np.ndarray]] | None = None) -> PreparedOnnx:
    """``quant_pre_process`` of ``float_path``, then the fixes above; written to ``out_path`` (cached).

    ``samples`` (batch-1 input lists) check an opset upgrade; without them, synthetic inputs do.
    """
    import onnx
    from onnxruntime.quantization.shape_inference import quant_pre_process

    sidecar = out_path.with_suffix(".json")
    if out_path.exists() and sidecar.exists():
        cached = json.loads(sidecar.read_text(encoding="utf-8"))
        return PreparedOnnx(out_path, cached["opset"], cached["per_channel"], cached["notes"])
    processed = out_path.with_name(out_path.stem + "_ort.onnx").resolve()
    float_path = float_path.resolve()  # before the chdir below
    notes = []
    # ORT saves its partial result (sym_shape_infer_temp.onnx + a <uuid>.data file) into the current folder when its
    # symbolic shape inference gives up: run it from a scratch folder so the user's folder stays clean.
    with tempfile.TemporaryDirectory(prefix="edgepipe-ort-") as scratch, contextlib.chdir(scratch):
        source, expanded = _standard_ops(float_path, Path(scratch))
        if expanded:
            notes.append(f"{expanded} ONNX Runtime fused op(s) (com.microsoft FusedConv/FusedGemm/FusedMatMul) "
                         "expanded into the standard ops they compute, so that they are quantized")
        try:
            quant_pre_process(source, str(processed), skip_symbolic_shape=False)
        except Exception as exc:  # noqa: BLE001 - ORT's symbolic shape inference raises a bare Exception or asserts
            if not isinstance(exc, AssertionError) and "symbolic shape inference" not in str(exc) \
                    and not _raised_in_symbolic_inference(exc):
                raise  # anything else is not the shape-inference gap this works around
            quant_pre_process(source, str(processed), skip_symbolic_shape=True)
            notes.append(f"ONNX Runtime's symbolic shape inference failed on this graph ({type(exc).__name__} in "
                         "symbolic_shape_infer); pre-processed with ONNX shape inference only")
    model = onnx.load(str(processed))
    if default_opset(model) < PER_CHANNEL_OPSET:
        model, note = upgrade_opset(model, samples or synthetic_samples(model))
        notes.append(note if note.startswith("opset") else
                     f"per-tensor weights: {note}; DequantizeLinear takes no per-channel axis before opset 13")
    model, rewritten = fuse_for_quantization(model, samples or synthetic_samples(model))
    notes += rewritten
    copies = unshare_biases(model)
    if copies:
        notes.append(f"{len(copies)} bias initializers shared by several nodes copied, one per node (ONNX Runtime's "
                     "own copies can take the name of an activation and break the int8 model)")
    flattened = flatten_gemm_biases(model)
    if flattened:
        notes.append(f"{len(flattened)} Gemm biases of shape (1, N) reshaped to (N,) (ONNX Runtime's int32 bias "
                     "check fails on 2-D biases: 'truth value of an array ... is ambiguous')")
    if needs_bias_adjust_off(model):
        notes.append("a Gemm bias is 2-D: quantizer option QDQDisableWeightAdjustForInt32Bias set (ONNX Runtime's "
                     "int32 bias check fails on it)")
    onnx.save(model, str(out_path))
    opset = default_opset(model)
    prepared = PreparedOnnx(out_path, opset, opset >= PER_CHANNEL_OPSET, notes)
    sidecar.write_text(json.dumps({k: v for k, v in asdict(prepared).items() if k != "path"}), encoding="utf-8")
    for note in notes:
        log.info("%s: %s", float_path.name, note)
    return prepared
