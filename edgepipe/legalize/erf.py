"""Erf as a rational-exponential formula (Abramowitz and Stegun 7.1.26, absolute error at most 1.5e-7).

``erf(x) = sign(x) * (1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) * exp(-x^2))`` with ``t = 1 / (1 + p |x|)``:
Sign, Abs, Mul, Add, Reciprocal, Exp and Sub. The divisor ``1 + p |x|`` is at least 1, so no int8 division meets a
zero; ``-x^2`` is a Mul by -1 (a quantized Neg runs on the CPU of some NPUs).
"""

from __future__ import annotations

from typing import Any

from edgepipe.legalize.rewrite import Rewrite, Site

_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def erf_nodes(site: Site, x: str, output: str, base: str) -> list[Any]:
    """The nodes computing erf(``x``) into ``output`` by the formula above."""
    new = [site.node("Abs", [x], f"{base}/abs")]
    new.append(site.node("Mul", [new[-1].output[0], site.constant(_P, f"{base}_p")], f"{base}/px"))
    new.append(site.node("Add", [new[-1].output[0], site.constant(1.0, f"{base}_one")], f"{base}/den"))
    t = site.node("Reciprocal", [new[-1].output[0]], f"{base}/t")
    poly = site.node("Mul", [t.output[0], site.constant(_A[4], f"{base}_a5")], f"{base}/poly_4")
    new += [t, poly]
    for index in (3, 2, 1, 0):
        plus = site.node("Add", [poly.output[0], site.constant(_A[index], f"{base}_a{index + 1}")],
                         f"{base}/poly_add_{index}")
        poly = site.node("Mul", [plus.output[0], t.output[0]], f"{base}/poly_{index}")
        new += [plus, poly]
    square = site.node("Mul", [x, x], f"{base}/square")
    negative = site.node("Mul", [square.output[0], site.constant(-1.0, f"{base}_minus")], f"{base}/negate")
    decay = site.node("Exp", [negative.output[0]], f"{base}/exp")
    tail = site.node("Mul", [poly.output[0], decay.output[0]], f"{base}/tail")
    magnitude = site.node("Sub", [site.constant(1.0, f"{base}_whole"), tail.output[0]], f"{base}/magnitude")
    sign = site.node("Sign", [x], f"{base}/sign")
    return [*new, square, negative, decay, tail, magnitude, sign,
            site.node("Mul", [sign.output[0], magnitude.output[0]], f"{base}/erf", output)]


def erf_as_formula(site: Site) -> int:
    """Replace each float32 Erf on the CPU by the formula above."""
    done = 0
    for node in site.candidates("Erf"):
        if site.float32(node.input[0]):
            site.replace([node], erf_nodes(site, node.input[0], node.output[0], node.name))
            done += 1
    return done


REWRITE = Rewrite(
    name="erf", rule="Erf becomes an exponential formula in Abs, Mul, Add, Reciprocal, Exp, Sub and Sign "
                     "(absolute error below 1.5e-7).",
    replaces=("Erf",), emits=("Abs", "Mul", "Add", "Reciprocal", "Exp", "Sub", "Sign"), apply=erf_as_formula)
