"""Float ONNX from a float TFLite file through tf2onnx's TFLite front end (``tf2onnx.convert.from_tflite``).

A TFLite model (MediaPipe's, or any exported one) otherwise reaches only the TFLite targets
and gets only the TFLite quantizer: no fallback ladder (mixed precision, QAT), no QDQ ONNX for
the QNN HTP, no float ONNX for Rockchip's compiler. The ONNX keeps the TFLite's layout, input
and output names and shapes (tf2onnx transposes NHWC internally), so one dataset feeds both.

Before tf2onnx reads it, a private copy of the TFLite is rewritten where LiteRT computes the same and tf2onnx
could not read it (:mod:`edgepipe.export.tflite_rewrites`): sparse weights are densified, MediaPipe's
``Convolution2DTransposeBias`` becomes ``TRANSPOSE_CONV`` + ``ADD``. An int8 TFLite is converted dequantized
(tf2onnx's ``dequantize``: every int8 constant and activation in float), its integer inputs and outputs made float
(:func:`float_io`): a float ONNX the ladder quantizes again.

tf2onnx writes a graph even when it meets an op it cannot translate (it leaves the TFLite op in
place): the result is only kept when ONNX Runtime loads it and gives the TFLite's outputs (LiteRT)
on real samples, the same float check as ONNX -> TFLite (:data:`~edgepipe.export.float_match.MIN_COSINE`,
each output's cosine over the samples); otherwise :class:`ToolFailed` says which check failed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.errors import ToolFailed
from edgepipe.export.float_match import MIN_COSINE, same_values

log = logging.getLogger(__name__)

#: ONNX opset of converted models (as for tf2onnx's Keras/SavedModel export).
OPSET = 17
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
    got: list[list[np.ndarray]] = []
    for sample, expected in zip(samples, outputs):
        run = session.run(None, {name: np.asarray(x, np.float32) for name, x in zip(names, sample)})
        if len(run) != len(expected):
            raise _failed(f"tf2onnx's ONNX has {len(run)} outputs, the TFLite {len(expected)}")
        got.append([run[k] for k in order])
    for index in range(len(litert_names)):
        ref, out = [o[index] for o in outputs], [g[index] for g in got]
        if ref[0].shape != out[0].shape:
            raise _failed(f"output {index}: ONNX shape {out[0].shape}, TFLite {ref[0].shape}")
        same, similarity = same_values(np.concatenate([r.ravel() for r in ref]),
                                       np.concatenate([o.ravel() for o in out]))
        if not same:
            raise _failed(f"output {index} has cosine {similarity:.4f} with LiteRT's on {len(samples)} samples "
                          f"(a faithful conversion gives > {MIN_COSINE})")


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


#: Ops that move values without computing on them, between a QuantizeLinear and the graph output it feeds.
_LAYOUT_OPS = ("Reshape", "Transpose", "Squeeze", "Unsqueeze", "Identity", "Flatten")


def float_io(model: Any) -> int:
    """Make the integer inputs and outputs of tf2onnx's dequantized ONNX float, in place; returns how many.

    tf2onnx keeps an int8 TFLite's int8 inputs (``Cast -> Sub(zero point) -> Mul(scale)`` after them) and
    outputs (a ``QuantizeLinear`` before them); the float model takes and gives the real values instead, which is
    what LiteRT's runner (and the calibration data) holds."""
    from onnx import TensorProto

    readers: dict[str, list[Any]] = {}
    for node in model.graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    producer = {out: node for node in model.graph.node for out in node.output}
    rename: dict[str, str] = {}
    drop: set[int] = set()
    changed = 0
    for graph_input in model.graph.input:
        chain, name = [], graph_input.name
        for op in ("Cast", "Sub", "Mul"):
            nxt = readers.get(name, [])
            if len(nxt) != 1 or nxt[0].op_type != op:
                break
            chain.append(nxt[0])
            name = nxt[0].output[0]
        if graph_input.type.tensor_type.elem_type != TensorProto.FLOAT and chain and chain[0].op_type == "Cast":
            rename[chain[-1].output[0]] = graph_input.name
            drop.update(id(n) for n in chain)
            graph_input.type.tensor_type.elem_type = TensorProto.FLOAT
            changed += 1
    for graph_output in model.graph.output:
        node = producer.get(graph_output.name)
        while node is not None and node.op_type in _LAYOUT_OPS:
            node = producer.get(node.input[0])
        if node is not None and node.op_type == "QuantizeLinear":
            node.op_type, node.domain = "Identity", ""
            del node.input[1:]
            graph_output.type.tensor_type.elem_type = TensorProto.FLOAT
            changed += 1
    kept = [n for n in model.graph.node if id(n) not in drop]
    for node in kept:
        node.input[:] = [rename.get(name, name) for name in node.input]
    del model.graph.node[:]
    model.graph.node.extend(kept)
    return changed


def _tf2onnx(tflite_path: Path, dequantize: bool) -> Any:
    """tf2onnx's ONNX of the TFLite at ``tflite_path``; with ``dequantize`` every quantized tensor in float."""
    import tf2onnx  # heavy optional dependency (imports TensorFlow)

    from edgepipe.frameworks import import_tensorflow

    if not dequantize:
        return tf2onnx.convert.from_tflite(str(tflite_path), opset=OPSET)[0]
    tf = import_tensorflow()
    with tf.device("/cpu:0"):  # from_tflite does not pass ``dequantize`` on; its own common path takes it
        model, _ = tf2onnx.convert._convert_common(  # noqa: SLF001 - tf2onnx is pinned (1.17.0)
            None, tflite_path=str(tflite_path), name=tflite_path.stem, continue_on_error=True, opset=OPSET,
            dequantize=True, tensors_to_rename=None, initialized_tables=None, output_path=None)
    float_io(model)
    return model


@dataclass(frozen=True)
class ConvertedOnnx:
    """The checked float ONNX of a TFLite, and the route that made it (what the report names)."""

    path: Path
    route: str


def convert_tflite_to_onnx(tflite_path: Path, onnx_path: Path, samples: list[list[np.ndarray]],
                           dequantize: bool = False) -> ConvertedOnnx:
    """Write the float ONNX of the TFLite ``tflite_path`` to ``onnx_path``, checked on ``samples``; an int8 TFLite
    needs ``dequantize`` (its ONNX is the float model its integers stand for).

    Raises :class:`ToolFailed` (nothing is left at ``onnx_path``) when tf2onnx's output is not the
    same function; tf2onnx's own exceptions propagate for the caller's tool boundary.
    """
    import onnx

    from edgepipe.export.tflite_ops import state_op_names
    from edgepipe.export.tflite_rewrites import readable_for_tf2onnx

    state = state_op_names(tflite_path)
    if state:
        raise _failed(f"the TFLite keeps state between invocations in resource variables ({', '.join(state)}): an "
                      "ONNX model has no state, so no ONNX computes what it does (a streaming model: export its "
                      "stateless form, with the state as inputs and outputs, for the ONNX targets)")
    checked = False
    readable = onnx_path.with_name(f".{onnx_path.stem}.tf2onnx-input.tflite")
    try:
        rewritten = readable_for_tf2onnx(tflite_path, readable)
        if rewritten.describe():
            log.info("rewrote %s for tf2onnx: %s", tflite_path.name, rewritten.describe())
        model = _tf2onnx(readable, dequantize)
        unsupported = _unsupported_ops(model)
        if unsupported:
            raise _failed(f"no ONNX translation for the TFLite op(s) {', '.join(unsupported)}")
        model.producer_name = "edgepipe (tf2onnx from TFLite)"
        _fix_stored_shapes(model, tflite_path, onnx_path)
        onnx.save(model, str(onnx_path))
        _check_same_function(onnx_path, tflite_path, samples)
        checked = True
    finally:
        readable.unlink(missing_ok=True)
        if not checked:  # whatever failed, no unchecked ONNX stays behind
            onnx_path.unlink(missing_ok=True)
    fixes = [*(["dequantized"] if dequantize else []), *([rewritten.describe()] if rewritten.describe() else [])]
    route = "tf2onnx's TFLite front end" + (f" ({'; '.join(fixes)})" if fixes else "")
    log.info("converted %s to ONNX through %s (opset %d), same outputs as LiteRT on %d samples",
             tflite_path.name, route, OPSET, len(samples))
    return ConvertedOnnx(onnx_path, route)
