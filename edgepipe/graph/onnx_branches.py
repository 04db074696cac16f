"""``If`` nodes whose condition is known before the model runs, replaced by the branch they take.

PyTorch exports ``x.squeeze(0)`` on a tensor whose size is only known at run time as ``Shape -> Gather ->
Equal -> If`` (then: ``Squeeze``; else: ``Identity``). Once the input shapes are static the condition is a
constant. rknn-toolkit2 2.5.0 then folds the ``If`` itself as a constant — its ``fold_constant`` reads only a
node's own inputs, not the outer tensors its branches read — so the ops after it become "constants" too and
``build()`` raises ``TypeError: argument of type 'NoneType' is not iterable`` (seen on a PyTorch GRU voice
model: the toolkit reported the model's output as a constant). :func:`inline_known_branches` writes the
branch in place of the ``If``, under the ``If``'s name, so the compiler's layers still trace back to it. The
ONNX reader uses the same to know the ``If``'s output shapes and the ops of the branch it takes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from edgepipe.graph.onnx_fold import fold_constants


def known_conditions(model: Any, values: dict[str, np.ndarray] | None = None) -> dict[str, bool]:
    """Condition tensor name -> its value, for every top-level ``If`` of ``model`` whose condition is a constant
    or folds to one (``values``: what :func:`~edgepipe.graph.onnx_fold.fold_constants` computed, else it is
    run here on a shape-inferred copy)."""
    wanted = {node.input[0] for node in model.graph.node if node.op_type == "If" and node.input}
    if not wanted:
        return {}
    if values is None:
        try:
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError):
            inferred = model  # inference is best effort (as in onnx_reader)
        values = fold_constants(inferred).values
    known = {name: values[name] for name in wanted if name in values}
    known.update({init.name: numpy_helper.to_array(init) for init in model.graph.initializer if init.name in wanted})
    return {name: bool(np.asarray(value).reshape(-1)[0]) for name, value in known.items()
            if np.asarray(value).size == 1}


def branch_ops(node: Any, condition: bool) -> tuple[str, ...]:
    """The op types of the branch ``If`` node ``node`` takes, its constants left out."""
    return tuple(inner.op_type for inner in taken_branch(node, condition).node if inner.op_type != "Constant")


def taken_branch(node: Any, condition: bool) -> Any:
    """The subgraph of ``If`` node ``node`` that runs when its condition is ``condition``."""
    wanted = "then_branch" if condition else "else_branch"
    return next(attr.g for attr in node.attribute if attr.name == wanted)


def _constant_value(node: Any) -> np.ndarray:
    """The value of a ``Constant`` node, whichever of its attributes holds it."""
    attr = node.attribute[0]
    if attr.type == onnx.AttributeProto.TENSOR:
        return numpy_helper.to_array(attr.t)
    value = onnx.helper.get_attribute_value(attr)
    return np.asarray(value, dtype=np.float32 if attr.type in (onnx.AttributeProto.FLOAT,
                                                               onnx.AttributeProto.FLOATS) else np.int64)


def _branch_nodes(node: Any, branch: Any) -> tuple[list[Any], list[Any]]:
    """(the branch's nodes writing the ``If``'s outputs, named after the ``If``; its constants as initializers)."""
    renamed = {out.name: target for out, target in zip(branch.output, node.output, strict=True)}
    initializers = list(branch.initializer)
    nodes = []
    for inner in branch.node:
        if inner.op_type == "Constant" and inner.output:
            initializers.append(numpy_helper.from_array(_constant_value(inner),
                                                        renamed.get(inner.output[0], inner.output[0])))
            continue
        copy = onnx.NodeProto()
        copy.CopyFrom(inner)
        copy.output[:] = [renamed.get(name, name) for name in inner.output]
        nodes.append(copy)
    written = {name for inner in nodes for name in inner.output}
    for out, target in renamed.items():  # a branch that returns an outer tensor unchanged
        if target not in written and out != target:
            nodes.append(onnx.helper.make_node("Identity", [out], [target]))
    for index, inner in enumerate(nodes):  # the compiler's "NAME_suffix" layers trace back to the If
        inner.name = node.name if index == len(nodes) - 1 else f"{node.name}_{index}"
    return nodes, initializers


def inline_known_branches(model: Any, conditions: dict[str, bool] | None = None) -> list[str]:
    """Replace, in ``model`` (changed in place), every top-level ``If`` whose condition folds to a constant by
    the branch it takes (``conditions``: from :func:`known_conditions`, computed here when None); returns the
    names of the ``If`` nodes replaced. Node names must already be unique."""
    conditions = known_conditions(model) if conditions is None else conditions
    if not conditions:
        return []
    replaced, nodes = [], []
    for node in model.graph.node:
        if node.op_type != "If" or node.input[0] not in conditions:
            kept = onnx.NodeProto()
            kept.CopyFrom(node)
            nodes.append(kept)
            continue
        inner, initializers = _branch_nodes(node, taken_branch(node, conditions[node.input[0]]))
        nodes.extend(inner)
        model.graph.initializer.extend(initializers)
        replaced.append(node.name)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return replaced
