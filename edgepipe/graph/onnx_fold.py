"""Shape computations a vendor compiler folds: ONNX nodes whose value is known before the model runs.

Exporters (PaddlePaddle, PyTorch) write ``Shape -> Cast -> Slice -> Concat -> Reshape`` chains that compute a
tensor's shape at run time. Once the input shapes are static, a compiler such as rknn-toolkit2 folds them
into constants (its ``fold_constant`` step) and the ops after them have static shapes; ONNX shape inference
alone cannot follow the chain (its data propagation stops at ``Cast``), so edgepipe would report those ops
as dynamic. :func:`fold_constants` evaluates such nodes with ONNX's reference implementation (small tensors
only) and re-runs shape inference on a copy of the model in which they are initializers. The model itself
is not changed: every node keeps its name and place, and the checker marks folded nodes (``attrs["folded"]``).
A Mul by an all-zero constant folds too (to zeros, as rknn-toolkit2 folds it), and the nodes only folded nodes
read are marked unused (``attrs["unused"]``): once the folded ones are constants nothing needs them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

log = logging.getLogger(__name__)

#: Ops whose output is folded when all their inputs are known (shape arithmetic and data movement).
FOLDABLE = frozenset({
    "Abs", "Add", "Cast", "Ceil", "Concat", "ConstantOfShape", "Div", "Equal", "Expand", "Flatten", "Floor",
    "Gather", "Greater", "Identity", "Less", "Max", "Min", "Mul", "Neg", "Not", "Range", "ReduceProd", "Reshape",
    "Shape", "Size", "Slice", "Squeeze", "Sub", "Tile", "Transpose", "Unsqueeze", "Where", "And", "Or", "Xor",
    "GreaterOrEqual", "LessOrEqual", "Sqrt", "Pow", "Exp", "Mod", "Sign", "Round", "ReduceSum", "ReduceMax",
    "ReduceMin", "ReduceMean", "CumSum", "Trilu", "GatherElements", "GatherND", "Split", "IsNaN", "IsInf"})
#: Largest input (elements, all inputs together) a node may have to be evaluated here; larger ones are left alone.
MAX_ELEMENTS = 1 << 16


@dataclass
class Folded:
    """The result: folded node indices, their output values, and the model copy shapes are inferred on."""

    nodes: set[int] = field(default_factory=set)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    inference_model: Any = None
    #: Nodes whose every output is read only by folded (or such) nodes: nothing at run time needs them, so a
    #: compiler that folds drops them (rknn-toolkit2 drops the Not -> Cast before a Mul by a zero constant).
    unused: set[int] = field(default_factory=set)


def _static_shape(value_info: dict[str, Any], name: str) -> list[int] | None:
    """The fully known shape of tensor ``name`` from shape inference, else None."""
    proto = value_info.get(name)
    if proto is None or not proto.type.tensor_type.HasField("shape"):
        return None
    dims = proto.type.tensor_type.shape.dim
    return [d.dim_value for d in dims] if all(d.HasField("dim_value") for d in dims) else None


def _known_values(model: Any) -> dict[str, np.ndarray]:
    """Small initializers and Constant outputs: the values folding starts from."""
    values = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer
              if int(np.prod(init.dims)) <= MAX_ELEMENTS}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output:
            try:
                values[node.output[0]] = numpy_helper.to_array(onnx.helper.get_attribute_value(node.attribute[0]))
            except (TypeError, ValueError, AttributeError):  # sparse or string-list constants are not folded
                continue
    return values


def _evaluate(node: Any, inputs: list[np.ndarray], opset: list[Any]) -> list[np.ndarray] | None:
    """``node`` run alone by ONNX's reference evaluator; None when it cannot be (op or type unsupported)."""
    from onnx.reference import ReferenceEvaluator  # loads ONNX's ~200 reference ops on first use

    names = [f"i{k}" for k in range(len(inputs))]
    copy = onnx.helper.make_node(node.op_type, [n if n else "" for n in _map_inputs(node, names)],
                                 [f"o{k}" for k in range(len(node.output))], domain=node.domain)
    copy.attribute.extend(node.attribute)
    graph = onnx.helper.make_graph([copy], "fold", [onnx.helper.make_tensor_value_info(n, 0, None) for n in names],
                                   [onnx.helper.make_tensor_value_info(o, 0, None) for o in copy.output])
    try:
        outputs = ReferenceEvaluator(onnx.helper.make_model(graph, opset_imports=opset)).run(
            None, dict(zip(names, inputs, strict=True)))
    except (ValueError, TypeError, KeyError, IndexError, NotImplementedError, RuntimeError) as exc:
        log.debug("not folded: %s '%s' (%s)", node.op_type, node.name, exc)
        return None
    return [np.asarray(o) for o in outputs]


def _map_inputs(node: Any, names: list[str]) -> list[str]:
    """The node's inputs renamed ``i0, i1, ...`` in order, empty (optional) inputs kept empty."""
    it = iter(names)
    return [next(it) if name else "" for name in node.input]


def fold_constants(model: Any, rounds: int = 8) -> Folded:
    """Fold the shape computations of ``model`` (already shape-inferred); ``inference_model`` is None when
    nothing folds. Folding and shape inference alternate (a folded Reshape target makes the next Shape's input
    static) until nothing more folds, at most ``rounds`` times."""
    values = _known_values(model)
    folded = Folded()
    inferred = model
    for _ in range(rounds):
        if not _fold_round(model, inferred, values, folded):
            break
        inferred = _inference_copy(model, folded)
        if inferred is None:
            break
        folded.inference_model = inferred
    folded.unused = _unused_nodes(model, folded.nodes)
    return folded


def _unused_nodes(model: Any, folded: set[int]) -> set[int]:
    """Nodes that only folded nodes (or other such nodes) read: dead once the folded ones are constants."""
    readers: dict[str, list[int]] = {}
    for index, node in enumerate(model.graph.node):
        for name in _names_read(node):
            readers.setdefault(name, []).append(index)
    outputs = {output.name for output in model.graph.output}
    gone = set(folded)
    unused: set[int] = set()
    for index in reversed(range(len(model.graph.node))):  # ONNX nodes are in topological order
        node = model.graph.node[index]
        read_by = [r for name in node.output if name for r in readers.get(name, [])]
        if index not in gone and read_by and not outputs.intersection(node.output) and set(read_by) <= gone:
            gone.add(index)
            unused.add(index)
    return unused


def _names_read(node: Any) -> set[str]:
    """The tensors ``node`` reads: its inputs and those its subgraphs (an If's branches, a Loop's body) read."""
    names = set(node.input)
    for attribute in node.attribute:
        for graph in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
            for inner in graph.node:
                names |= _names_read(inner)
    return names


def _zero_product(node: Any, values: dict[str, np.ndarray], value_info: dict[str, Any]) -> np.ndarray | None:
    """The value of a Mul by an all-zero constant: zeros of its static output shape, whatever the other operand
    holds (rknn-toolkit2's fold_constant folds it, leaving the nodes before it unused); else None."""
    if node.op_type != "Mul" or not any(name in values and values[name].size and not values[name].any()
                                        for name in node.input):
        return None
    shape = _static_shape(value_info, node.output[0])
    proto = value_info.get(node.output[0])
    if shape is None or proto is None or int(np.prod(shape)) > MAX_ELEMENTS:
        return None
    return np.zeros(shape, dtype=onnx.helper.tensor_dtype_to_np_dtype(proto.type.tensor_type.elem_type))


def _fold_round(model: Any, inferred: Any, values: dict[str, np.ndarray], folded: Folded) -> bool:
    """One pass in node order with the shapes of ``inferred``; True when a node was folded."""
    graph = inferred.graph
    value_info = {vi.name: vi for vi in [*graph.value_info, *graph.input, *graph.output]}
    value_info.update({init.name: onnx.helper.make_tensor_value_info(init.name, init.data_type, init.dims)
                       for init in graph.initializer if init.name not in value_info})
    before = len(folded.nodes)
    for index, node in enumerate(model.graph.node):
        if index in folded.nodes or node.op_type not in FOLDABLE or node.domain not in ("", "ai.onnx") \
                or not node.output:
            continue
        zeros = None
        if node.op_type in ("Shape", "Size"):
            shape = _static_shape(value_info, node.input[0])
            if shape is None:
                continue
            inputs = [np.zeros(shape, dtype=np.uint8)]
        elif all(not name or name in values for name in node.input):
            inputs = [values[name] for name in node.input if name]
            if sum(int(v.size) for v in inputs) > MAX_ELEMENTS:
                continue
        else:
            zeros = _zero_product(node, values, value_info)
            if zeros is None:
                continue
            inputs = []
        outputs = [zeros] if zeros is not None else _evaluate(node, inputs, list(model.opset_import))
        if outputs is None:
            continue
        folded.nodes.add(index)
        values.update(zip(node.output, outputs, strict=False))
        folded.values.update(zip(node.output, outputs, strict=False))
    return len(folded.nodes) > before


def _inference_copy(model: Any, folded: Folded) -> Any:
    """``model`` without its folded nodes, their outputs as initializers, shape-inferred again."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    keep = [node for index, node in enumerate(model.graph.node) if index not in folded.nodes]
    del copy.graph.node[:]
    copy.graph.node.extend(keep)
    present = {init.name for init in copy.graph.initializer}
    for name, value in folded.values.items():
        if name not in present:
            copy.graph.initializer.append(numpy_helper.from_array(value, name))
    del copy.graph.value_info[:]
    for output in copy.graph.output:  # declared output dims (often -1) are inferred again from the inputs
        output.type.tensor_type.ClearField("shape")
    try:
        return onnx.shape_inference.infer_shapes(copy, strict_mode=False, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError):
        return None  # inference is best effort (as in onnx_reader): shapes stay as they were
