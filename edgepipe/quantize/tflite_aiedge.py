"""Int8 TFLite from a float TFLite file (no source graph) through ``ai-edge-quantizer``.

Third-party TFLite files come in three kinds, told apart by :func:`tflite_kind`:

- ``float``: float32 weights and activations, quantized here (static int8 weights and activations);
- ``fp16-weights``: float16 constants behind ``DEQUANTIZE`` ops (MediaPipe's models). The
  quantizer would treat those ``DEQUANTIZE`` outputs as activations, so they are folded into
  float32 constants first (:func:`fold_fp16_weights`); sparse constants behind ``DENSIFY`` ops
  (MediaPipe's pruned models) are made dense constants before that (:func:`fold_densify`, as the
  TFLite-to-ONNX export does), else
  their convolutions' weights get activation (asymmetric) scales that LiteRT's int8 kernels refuse
  ("zero_point ... (-128 != 0) ... CONV_2D failed to prepare");
- ``int8``: already quantized: checked and benchmarked only, never quantized again.

The quantizer needs a signature and reads only the current ``builtin_code`` field, so
:func:`prepare_float_tflite` adds a ``serving_default`` signature to files without one and
copies old files' ``deprecated_builtin_code`` across.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from pathlib import Path
from typing import Any, Literal

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.export.tflite_rewrites import fold_densify
from edgepipe.graph.tflite_edit import drop_unused_tensors

log = logging.getLogger(__name__)

TFLiteKind = Literal["float", "fp16-weights", "int8"]
SIGNATURE_KEY = "serving_default"
_QUANTIZED_TYPES = ("INT8", "UINT8", "INT16")


def _schema() -> tuple[Any, Any]:
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils

    return flatbuffer_utils, schema


def _op_name(model: Any, op: Any) -> str:
    flatbuffer_utils, _ = _schema()
    return str(flatbuffer_utils.opcode_to_name(model, op.opcodeIndex))


def _is_fp16_constant_dequantize(model: Any, subgraph: Any, op: Any) -> bool:
    _, schema = _schema()
    if _op_name(model, op) != "DEQUANTIZE":
        return False
    source = subgraph.tensors[op.inputs[0]]
    data = model.buffers[source.buffer].data
    return source.type == schema.TensorType.FLOAT16 and data is not None and len(data) > 0


def tflite_kind(path: Path) -> TFLiteKind:
    """Which kind of TFLite ``path`` is: ``int8`` when its inputs or weights are quantized integers."""
    flatbuffer_utils, schema = _schema()
    model = flatbuffer_utils.read_model(str(path))
    names = {value: name for name, value in vars(schema.TensorType).items() if not name.startswith("_")}
    for subgraph in model.subgraphs:
        quantized = [t for t in subgraph.tensors if names.get(t.type) in _QUANTIZED_TYPES
                     and t.quantization is not None and t.quantization.scale is not None
                     and len(t.quantization.scale) > 0]
        if quantized:
            return "int8"
    if any(_is_fp16_constant_dequantize(model, sg, op) for sg in model.subgraphs for op in sg.operators):
        return "fp16-weights"
    return "float"


def fold_fp16_weights(model: Any) -> int:
    """Replace every float16-constant → ``DEQUANTIZE`` pair by one float32 constant; returns how many."""
    folded = 0
    for index, subgraph in enumerate(model.subgraphs):
        kept = []
        for op in subgraph.operators:
            if not _is_fp16_constant_dequantize(model, subgraph, op):
                kept.append(op)
                continue
            source = subgraph.tensors[op.inputs[0]]
            buffer = model.buffers[source.buffer]
            values = np.frombuffer(np.asarray(buffer.data, np.uint8).tobytes(), np.float16).astype(np.float32)
            buffer.data = np.frombuffer(values.tobytes(), np.uint8)
            subgraph.tensors[op.outputs[0]].buffer = source.buffer
            folded += 1
        subgraph.operators = kept
        drop_unused_tensors(model, index)
    return folded


def _add_signature(model: Any) -> None:
    _, schema = _schema()
    subgraph = model.subgraphs[0]

    def tensor_map(index: int) -> Any:
        entry = schema.TensorMapT()
        entry.name = subgraph.tensors[index].name
        entry.tensorIndex = index
        return entry

    signature = schema.SignatureDefT()
    signature.signatureKey = SIGNATURE_KEY.encode()
    signature.subgraphIndex = 0
    signature.inputs = [tensor_map(i) for i in subgraph.inputs]
    signature.outputs = [tensor_map(i) for i in subgraph.outputs]
    model.signatureDefs = [signature]


def prepare_float_tflite(path: Path, out_path: Path) -> Path:
    """A copy of float ``path`` the quantizer accepts: fp16 weights folded, builtin codes, one signature."""
    flatbuffer_utils, _ = _schema()
    model = flatbuffer_utils.read_model(str(path))
    dense = fold_densify(model, path)
    if dense:
        log.info("%s: %d sparse constants behind DENSIFY made dense", path.name, dense)
    folded = fold_fp16_weights(model)
    if folded:
        log.info("%s: folded %d float16 weights behind DEQUANTIZE into float32", path.name, folded)
    for code in model.operatorCodes:
        code.builtinCode = max(code.builtinCode, code.deprecatedBuiltinCode)
    if not model.signatureDefs:
        _add_signature(model)
    flatbuffer_utils.write_model(model, str(out_path))
    return out_path


def _calibration_samples(prepared: Path, calibration: Dataset) -> dict[str, list[dict[str, np.ndarray]]]:
    """``{signature: [{input name: batch-1 array}]}``, inputs matched by position in the interpreter's order."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(prepared))
    key = next(iter(interpreter.get_signature_list()))
    runner = interpreter.get_signature_runner(key)
    details = runner.get_input_details()
    by_index = {d["index"]: name for name, d in details.items()}
    names = [by_index[d["index"]] for d in interpreter.get_input_details()]
    samples = [{name: np.asarray(array, dtype=details[name]["dtype"]) for name, array in zip(names, sample)}
               for sample in calibration.samples()]
    return {key: samples}


def _recipe(activation_bits: int, float_ops: tuple[str, ...] = ()) -> Any:
    """ai-edge-quantizer's static recipe: int8 weights, ``activation_bits`` (8 or 16) activations, and the TFLite ops
    ``float_ops`` (``"DIV"``) left in float between a DEQUANTIZE and a QUANTIZE."""
    from ai_edge_quantizer import recipe

    chosen = recipe.static_wi8_ai16() if activation_bits == 16 else recipe.static_wi8_ai8()
    return [*chosen, *({"regex": ".*", "operation": op, "algorithm_key": "no_quantize"} for op in float_ops)]


def calibrate_min_max(prepared: Path, samples: dict[str, list[dict[str, np.ndarray]]],
                      activation_bits: int = 8, float_ops: tuple[str, ...] = ()) -> dict[str, Any]:
    """Activation ranges as the true min/max over all samples.

    ``Quantizer.calibrate`` keeps a moving average of per-sample ranges, which clips the
    outliers of the later samples (cosine 0.91 against 0.9999 on our NCHW test CNN); the
    TFLite converter and ONNX Runtime both use the plain min/max, so this does too.
    """
    from ai_edge_quantizer import calibrator, recipe_manager
    from ai_edge_quantizer.utils import qsv_utils

    manager = recipe_manager.RecipeManager()
    manager.load_quantization_recipe(_recipe(activation_bits, float_ops))
    calib = calibrator.Calibrator(prepared.read_bytes(), num_threads=2, qsv_update_func=qsv_utils.min_max_update)
    calib.calibrate(samples, manager)
    return calib.get_model_qsvs()


#: Ops that run another subgraph; ai-edge-quantizer (0.10) calibrates only the subgraphs a
#: StableHLO composite invokes, so tensors inside these ops' branches get no ranges.
CONTROL_FLOW_OPS = ("IF", "WHILE", "CALL_ONCE")


def control_flow_ops(model: Any) -> list[str]:
    """``"IF in subgraph 0"``-style descriptions of the control-flow ops of a flatbuffer ``model``."""
    found = []
    for index, subgraph in enumerate(model.subgraphs):
        for op in subgraph.operators:
            name = _op_name(model, op)
            if name in CONTROL_FLOW_OPS:
                found.append(f"{name} in subgraph {index}")
    return found


def _refuse_control_flow(prepared: Path) -> None:
    from edgepipe.errors import ToolFailed

    flatbuffer_utils, _ = _schema()
    found = control_flow_ops(flatbuffer_utils.read_model(str(prepared)))
    if found:
        raise ToolFailed("ai-edge-quantizer", f"control flow it does not calibrate: {', '.join(sorted(set(found)))} "
                         "(the ops of its branch subgraphs get no activation ranges)",
                         "the int8 TFLite is left out: export the model without the control flow (the branch the "
                         "device runs), or deploy the ONNX artifact (targets with onnx in deploy_formats are still "
                         "checked)")


def quantize_float_tflite(float_path: Path, out_path: Path, calibration: Dataset, scratch: Path,
                          activation_bits: int = 8, float_ops: tuple[str, ...] = ()) -> Path:
    """Write the static int8-weight TFLite of ``float_path`` to ``out_path``, activations ``activation_bits`` wide.

    8: full int8; 16: int16 activations with int8 weights (a16w8, for targets that run it). ``float_ops``: TFLite
    ops kept in float (their int8 kernel refuses the file, e.g. a DIV whose divisor quantizes to its zero point).
    Inputs and outputs become integers with their own scale and zero point; the LiteRT
    runner converts real values at the boundary.
    """
    from ai_edge_quantizer import quantizer

    prepared = prepare_float_tflite(float_path, scratch / f"{float_path.stem}_prepared.tflite")
    _refuse_control_flow(prepared)
    engine = quantizer.Quantizer(str(prepared), _recipe(activation_bits, float_ops))
    # The quantizer draws progress bars on stderr and warns about its debug resolver: keep the CLI's output clean.
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        ranges = calibrate_min_max(prepared, _calibration_samples(prepared, calibration), activation_bits, float_ops)
        engine.quantize(ranges, enable_progress_report=False).export_model(str(out_path), overwrite=True)
    log.info("quantized %s -> %s (ai-edge-quantizer static_wi8_ai%d)", float_path.name, out_path.name,
             activation_bits)
    return out_path
