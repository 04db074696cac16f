"""ONNX outputs that follow from the input shapes alone: constants of a static-shape model.

NeMo's exports (voice-activity detectors among them) return a length beside the scores, computed from the audio's shape
(``Shape -> Gather -> Add -> Div``). With the input shapes fixed such an output is a constant; onnxsim folds it and
onnx2tf leaves it out of the TFLite, which is then the same function on every output that depends on the data.
edgepipe lets a converted artifact leave out these outputs only, and says so; any other missing output is still a
failure. The analysis is conservative: a node with a subgraph (If, Loop, Scan) or a random generator counts as
reading the data.
"""

from __future__ import annotations

from typing import Any

#: Ops whose outputs depend on the shape of what they read, never on its values.
SHAPE_READERS = frozenset({"Shape", "Size"})
#: Ops whose outputs change from one run to the next though their inputs do not.
RANDOM = frozenset({"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial",
                    "Bernoulli"})


def shape_only_outputs(model: Any) -> tuple[str, ...]:
    """The names of ``model``'s (an ``onnx.ModelProto``) graph outputs whose values depend on no input value, only
    on input shapes, in output order; empty when the graph has no input to speak of."""
    initializers = {t.name for t in model.graph.initializer}
    data = {value.name for value in model.graph.input if value.name not in initializers}
    if not data:
        return ()
    for node in model.graph.node:
        has_subgraph = any(a.type in (a.GRAPH, a.GRAPHS) for a in node.attribute)
        if node.op_type in SHAPE_READERS and not has_subgraph:
            continue
        if has_subgraph or node.op_type in RANDOM or any(name in data for name in node.input if name):
            data.update(name for name in node.output if name)
    return tuple(value.name for value in model.graph.output if value.name not in data)
