"""Erf written in ops TFLite has builtins for (and NPUs run in int8): the tanh approximation GELU's is made of.

TFLite has no builtin Erf: onnx2tf writes an ONNX ``Erf`` it does not take for part of a GELU as the Select TF op
``FlexErf``, which LiteRT and every NPU delegate refuse (text recognisers, edgepipe's digits_vit). onnx2tf's
own replacement (``-rtpo erf``, Abramowitz and Stegun's polynomial) divides by ``|x| + 1e-11`` for the sign, and in
int8 that divisor quantizes to zero: LiteRT's int8 DIV then refuses to run (seen on a small text recogniser).

Here ``erf(x)`` becomes ``tanh(2/sqrt(pi) * (x + 0.044715 * 2 * x^3))``, the approximation behind
``gelu(approximate="tanh")`` (absolute error at most 3.6e-4 on every x): Mul, Add and Tanh only. It is used only when
the exact conversion needs the Select TF op, and the export stage's float check still decides whether the TFLite
computes the model's function.
"""

from __future__ import annotations

import math
from typing import Any

#: erf(x) ~ tanh(x * (LINEAR + CUBIC * x * x)); GELU's tanh form is 0.5 x (1 + erf(x / sqrt(2))) written this way.
LINEAR = 2.0 / math.sqrt(math.pi)
CUBIC = LINEAR * 0.044715 * 2.0


def erf_as_tanh(model: Any) -> int:
    """Replace every Erf node of ``model``'s main graph (float32 input) by the tanh approximation, in place; the
    number replaced. Each keeps its name on the Tanh that writes its output."""
    import numpy as np
    from onnx import helper, numpy_helper

    graph = model.graph
    erfs = [node for node in graph.node if node.op_type == "Erf" and node.domain in ("", "ai.onnx")]
    if not erfs:
        return 0
    linear, cubic = _unique(graph, "erf_tanh_linear"), _unique(graph, "erf_tanh_cubic")
    graph.initializer.extend([numpy_helper.from_array(np.array(LINEAR, np.float32), linear),
                              numpy_helper.from_array(np.array(CUBIC, np.float32), cubic)])
    for erf in erfs:
        x, y, base = erf.input[0], erf.output[0], erf.name or erf.output[0]
        names = [_unique(graph, f"{base}/tanh_approx/{part}") for part in ("square", "cubic", "slope", "arg")]
        replacement = [
            helper.make_node("Mul", [x, x], [names[0]], name=names[0]),
            helper.make_node("Mul", [names[0], cubic], [names[1]], name=names[1]),
            helper.make_node("Add", [names[1], linear], [names[2]], name=names[2]),
            helper.make_node("Mul", [x, names[2]], [names[3]], name=names[3]),
            helper.make_node("Tanh", [names[3]], [y], name=base),
        ]
        position = list(graph.node).index(erf)
        graph.node.remove(erf)
        for offset, node in enumerate(replacement):
            graph.node.insert(position + offset, node)
    return len(erfs)


def _unique(graph: Any, name: str) -> str:
    """``name``, or ``name`` with a numeric suffix, so that it is no tensor or node name of ``graph`` yet."""
    taken = {t.name for t in graph.initializer} | {n.name for n in graph.node} | {
        o for n in graph.node for o in n.output} | {i.name for i in graph.input}
    candidate, suffix = name, 0
    while candidate in taken:
        suffix += 1
        candidate = f"{name}_{suffix}"
    return candidate
