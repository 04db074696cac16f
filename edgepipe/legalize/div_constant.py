"""A division by a constant as a multiplication by its reciprocal (within one float32 rounding of the quotient)."""

from __future__ import annotations

import numpy as np

from edgepipe.legalize.rewrite import Rewrite, Site


def div_as_mul(site: Site) -> int:
    """Replace each float32 Div on the CPU whose divisor is a constant with no zero by Mul(1 / divisor)."""
    done = 0
    for node in site.candidates("Div"):
        divisor = site.constants.get(node.input[1])
        if divisor is None or divisor.dtype != np.float32 or not site.float32(node.input[0]) or not np.all(divisor):
            continue
        reciprocal = site.constant((1.0 / divisor.astype(np.float64)).astype(np.float32), f"{node.name}_reciprocal")
        site.replace([node], [site.node("Mul", [node.input[0], reciprocal], f"{node.name}/as_mul", node.output[0])])
        done += 1
    return done


REWRITE = Rewrite(
    name="div-constant", rule="A division by a constant becomes a multiplication by its reciprocal.",
    replaces=("Div",), emits=("Mul",), apply=div_as_mul)
