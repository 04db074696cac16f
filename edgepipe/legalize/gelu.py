"""Gelu (ONNX opset 20) written out: ``0.5 * x * (1 + erf(x / sqrt(2)))``, or its tanh form when the node says so.

For a target without Erf the erf is written as :mod:`edgepipe.legalize.erf`'s formula at once.
"""

from __future__ import annotations

import math

from edgepipe.legalize.erf import erf_nodes
from edgepipe.legalize.rewrite import Rewrite, Site


def gelu_written_out(site: Site) -> int:
    """Replace each float32 Gelu on the CPU by its definition in Mul, Add and Erf (or Tanh)."""
    done = 0
    for node in site.candidates("Gelu"):
        x = node.input[0]
        if not site.float32(x):
            continue
        base = node.name
        if site.attrs(node).get("approximate", "none") == "tanh":  # tanh(sqrt(2/pi) * (x + 0.044715 x^3))
            square = site.node("Mul", [x, x], f"{base}/square")
            cubic = site.node("Mul", [square.output[0], site.constant(0.044715, f"{base}_c")], f"{base}/cubic")
            slope = site.node("Add", [cubic.output[0], site.constant(1.0, f"{base}_one")], f"{base}/slope")
            inner = site.node("Mul", [x, slope.output[0]], f"{base}/inner")
            scaled = site.node("Mul", [inner.output[0], site.constant(math.sqrt(2.0 / math.pi), f"{base}_k")],
                               f"{base}/scale")
            curve = site.node("Tanh", [scaled.output[0]], f"{base}/tanh")
            head = [square, cubic, slope, inner, scaled, curve]
        else:  # a target without Erf gets erf's formula straight away (an Erf alone on the CPU is no better)
            scaled = site.node("Mul", [x, site.constant(1.0 / math.sqrt(2.0), f"{base}_k")], f"{base}/scale")
            curve = site.node("Erf", [scaled.output[0]], f"{base}/erf")
            head = [scaled, curve] if site.listed("Erf") else [scaled, *erf_nodes(site, scaled.output[0],
                                                                                    curve.output[0], curve.name)]
        plus = site.node("Add", [curve.output[0], site.constant(1.0, f"{base}_plus")], f"{base}/plus")
        half = site.node("Mul", [x, site.constant(0.5, f"{base}_half")], f"{base}/half")
        site.replace([node], [*head, plus, half, site.node("Mul", [half.output[0], plus.output[0]], f"{base}/gelu",
                                                           node.output[0])])
        done += 1
    return done


REWRITE = Rewrite(
    name="gelu", rule="Gelu becomes its definition, 0.5 x (1 + erf(x / sqrt 2)) (tanh form: with Tanh).",
    replaces=("Gelu",), emits=("Mul", "Add"), apply=gelu_written_out)
