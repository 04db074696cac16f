"""Read an ONNX model into the common :class:`~edgepipe.graph.opgraph.OpGraph` (shapes by ONNX inference)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.errors import ModelLoadError
from edgepipe.graph.onnx_branches import branch_ops, inline_known_branches, known_conditions
from edgepipe.graph.onnx_edit import attributes, subgraph_reads
from edgepipe.graph.onnx_fold import fold_constants
from edgepipe.graph.opgraph import OpGraph, OpNode, TensorInfo

_CONST_OPS = {"Constant", "ConstantOfShape"}
_SPATIAL = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "ConvInteger", "QLinearConv"}


def _dtype(elem_type: int) -> str:
    import onnx

    if elem_type == 0:
        return "unknown"
    return str(onnx.helper.tensor_dtype_to_np_dtype(elem_type)) if elem_type != onnx.TensorProto.BFLOAT16 \
        else "bfloat16"


def _shape(type_proto: Any) -> tuple[int | None, ...] | None:
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim)


def _value_infos(model: Any) -> dict[str, tuple[str, tuple[int | None, ...] | None]]:
    graph = model.graph
    infos: dict[str, tuple[str, tuple[int | None, ...] | None]] = {}
    for vi in [*graph.value_info, *graph.input, *graph.output]:
        infos[vi.name] = (_dtype(vi.type.tensor_type.elem_type), _shape(vi.type))
    for init in graph.initializer:
        infos[init.name] = (_dtype(init.data_type), tuple(init.dims))
    return infos


def _normalise(op: str, raw: dict[str, Any], inputs: tuple[TensorInfo, ...]) -> dict[str, Any]:
    """Spatial attributes as (h, w) pairs, padding as a word, pads as (top, left, bottom, right)."""
    attrs = dict(raw)
    if op in _SPATIAL:
        kernel = raw.get("kernel_shape")
        if kernel is None and len(inputs) > 1 and inputs[1].shape and len(inputs[1].shape) == 4:
            kernel = inputs[1].shape[2:]
        if kernel is not None and len(kernel) == 2:
            attrs["kernel"] = tuple(kernel)
        attrs["strides"] = tuple(raw.get("strides", (1, 1)))
        attrs["dilations"] = tuple(raw.get("dilations", (1, 1)))
        pads = tuple(raw.get("pads", (0, 0, 0, 0)))
        attrs["pads"] = (pads[0], pads[1], pads[2], pads[3]) if len(pads) == 4 else pads
        auto = raw.get("auto_pad", b"NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else auto
        attrs["padding"] = "same" if auto.startswith("SAME") else "valid" if (
            auto == "VALID" or not any(pads)) else "explicit"
        group = int(raw.get("group", 1))
        channels = inputs[0].shape[1] if inputs and inputs[0].shape and len(inputs[0].shape) == 4 else None
        attrs["depthwise"] = group > 1 and channels == group
    if op in ("GlobalAveragePool", "GlobalMaxPool") and inputs and inputs[0].shape and len(inputs[0].shape) == 4:
        attrs["kernel"] = tuple(inputs[0].shape[2:])
        attrs["strides"] = (1, 1)
    return attrs


def _constant_input(node: Any, position: int, initializers: dict[str, Any],
                    values: dict[str, np.ndarray]) -> tuple[int, ...] | None:
    """The integers of input ``position`` of ``node`` when it is a constant (an initializer or a folded value)."""
    name = node.input[position] if len(node.input) > position else ""
    if name in values:
        return tuple(int(v) for v in np.asarray(values[name]).ravel())
    if name in initializers:
        from onnx import numpy_helper

        return tuple(int(v) for v in numpy_helper.to_array(initializers[name]).ravel())
    return None


def _constant_operands(node: Any, attrs: dict[str, Any], initializers: dict[str, Any],
                       values: dict[str, np.ndarray]) -> dict[str, Any]:
    """A Pad's ``pads`` (every axis's start, then every axis's end: the attribute up to opset 10, the second
    input from opset 11 on) and a Slice's ``steps`` and ``axes`` (its fifth and fourth inputs), when they are
    constants; {} when they are computed at run time (or absent: a Slice without steps has step 1, one without
    axes slices the first axes in order), and a reduction's ``axes`` (its second input from opset 18 on; ReduceSum
    from opset 13)."""
    if node.op_type.startswith("Reduce") and "axes" not in attrs and len(node.input) > 1 and node.input[1]:
        axes = _constant_input(node, 1, initializers, values)
        return {"axes": axes} if axes is not None else {}
    if node.op_type == "Pad":
        pads = tuple(int(v) for v in attrs["pads"]) if "pads" in attrs else \
            _constant_input(node, 1, initializers, values)
        return {"pads": pads} if pads is not None else {}
    if node.op_type == "Slice" and len(node.input) > 4 and node.input[4]:
        steps = _constant_input(node, 4, initializers, values)
        axes = _constant_input(node, 3, initializers, values) if node.input[3] else None
        return {**({"steps": steps} if steps is not None else {}), **({"axes": axes} if axes is not None else {})}
    return {}


def _macs(op: str, attrs: dict[str, Any], inputs: tuple[TensorInfo, ...], outputs: tuple[TensorInfo, ...]) -> int:
    """Multiply-accumulates of the compute-heavy ops; 0 for the rest."""
    out = outputs[0] if outputs else None
    if out is None or not out.static:
        return 0
    if op in ("Conv", "ConvInteger", "QLinearConv") and len(inputs) > 1 and inputs[1].static:
        weight = inputs[1].shape or ()
        per_output = 1
        for dim in weight[1:]:
            per_output *= int(dim or 0)
        return out.elements * per_output
    if op in ("Gemm", "MatMul", "MatMulInteger") and inputs and inputs[0].static and inputs[0].shape:
        transposed = op == "Gemm" and attrs.get("transA", 0)
        k = inputs[0].shape[-2] if transposed and len(inputs[0].shape) >= 2 else inputs[0].shape[-1]
        return out.elements * int(k or 0)
    return 0


def _inlined(model: Any, conditions: dict[str, bool]) -> Any:
    """A shape-inferred copy of ``model`` with its known ``If`` branches inlined (the model is not changed)."""
    import onnx

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    inline_known_branches(copy, conditions)
    del copy.graph.value_info[:]
    try:
        return onnx.shape_inference.infer_shapes(copy, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - inference is best effort: unknown shapes stay unknown
        return copy


def _nan_constants(model: Any) -> set[str]:
    """Float initializers and Constant outputs holding a NaN (a mask's fill value): a quantizing compiler cannot
    compute their range."""
    from onnx import TensorProto, numpy_helper

    found = set()
    floats = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16)
    for init in model.graph.initializer:
        if init.data_type in floats and np.isnan(numpy_helper.to_array(init).astype(np.float32)).any():
            found.add(init.name)
    for node in model.graph.node:
        value = next((a.t for a in node.attribute if a.name == "value" and a.HasField("t")), None)
        if node.op_type == "Constant" and value is not None and value.data_type in floats and node.output \
                and np.isnan(numpy_helper.to_array(value).astype(np.float32)).any():
            found.add(node.output[0])
    return found


def read_onnx(path: Path) -> OpGraph:
    """The operators of the ONNX model at ``path``, with inferred shapes and dtypes."""
    import onnx

    try:
        model = onnx.load(str(path))
    except Exception as exc:  # noqa: BLE001 - protobuf raises several unrelated types
        raise ModelLoadError(f"not a readable ONNX model ({exc})", path=path, fix="Export it again") from None
    try:
        model = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - inference is best effort: unknown shapes stay unknown
        pass
    folded = fold_constants(model)
    infos = _value_infos(model)
    if folded.inference_model is not None:  # shapes the folded shape computations make known
        infos.update({name: info for name, info in _value_infos(folded.inference_model).items()
                      if info[1] is not None and None not in info[1] and infos.get(name, ("", None))[1] != info[1]})
    conditions = known_conditions(model, folded.values)
    if conditions:  # the outputs of an If whose branch is known have that branch's shapes
        infos.update({name: info for name, info in _value_infos(_inlined(folded.inference_model or model,
                                                                         conditions)).items()
                      if info[1] is not None and None not in info[1] and infos.get(name, ("", None))[1] != info[1]})
    constants = {init.name for init in model.graph.initializer} | set(folded.values)
    initializers = {init.name: init for init in model.graph.initializer}
    not_a_number = _nan_constants(model)
    nodes: list[OpNode] = []
    for index, node in enumerate(model.graph.node):
        if node.op_type in _CONST_OPS or (node.op_type == "DequantizeLinear" and node.input[0] in constants):
            constants.update(node.output)

        def tensor(name: str) -> TensorInfo:
            dtype, shape = infos.get(name, ("unknown", None))
            return TensorInfo(name, dtype, shape, constant=name in constants)

        inputs = tuple(tensor(n) for n in node.input if n)
        outputs = tuple(tensor(n) for n in node.output if n)
        attrs = _normalise(node.op_type, attributes(node, subgraphs=False), inputs)
        attrs.update(_constant_operands(node, attrs, initializers, folded.values))
        if not_a_number.intersection(node.input):
            attrs["nan_constants"] = [name for name in node.input if name in not_a_number]
        if index in folded.nodes:
            attrs["folded"] = True  # computed from constants and static shapes: a compiler folds it
        if index in folded.unused:
            attrs["unused"] = True  # read only by folded nodes: a compiler that folds drops it
        outer = sorted(name for name in subgraph_reads(node) if name not in constants) if node.attribute else []
        if outer:
            attrs["outer_reads"] = outer  # feature maps its subgraphs read from this graph
        if node.op_type == "If" and node.input and node.input[0] in conditions:
            attrs["branch_ops"] = branch_ops(node, conditions[node.input[0]])  # the ops that run in its place
        nodes.append(OpNode(index=index, name=node.name or f"{node.op_type}_{index}", op=node.op_type,
                            inputs=inputs, outputs=outputs, attrs=attrs,
                            macs=_macs(node.op_type, attrs, inputs, outputs), layout="nchw"))
    graph_inputs = tuple(TensorInfo(i.name, *infos[i.name]) for i in model.graph.input if i.name not in initializers)
    graph_outputs = tuple(TensorInfo(o.name, *infos[o.name]) for o in model.graph.output)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    return OpGraph("onnx", str(path), tuple(nodes), graph_inputs, graph_outputs, opset=opset)
