"""HardSwish as Mul, Add, Clip and Mul: ``x * max(0, min(1, x / 6 + 0.5))`` written out."""

from __future__ import annotations

from edgepipe.legalize.rewrite import Rewrite, Site


def hard_swish_as_clip(site: Site) -> int:
    """Replace each float32 HardSwish on the CPU by Mul(1/6), Add(0.5), Clip(0, 1) and Mul(x)."""
    done = 0
    for node in site.candidates("HardSwish"):
        x = node.input[0]
        if not site.float32(x):
            continue
        base = node.name
        scaled = site.node("Mul", [x, site.constant(1.0 / 6.0, f"{base}_sixth")], f"{base}/scale")
        shifted = site.node("Add", [scaled.output[0], site.constant(0.5, f"{base}_half")], f"{base}/shift")
        gate = site.clip(shifted.output[0], 0.0, 1.0, f"{base}/clip")
        site.replace([node], [scaled, shifted, gate, site.node("Mul", [x, gate.output[0]], f"{base}/gate",
                                                               node.output[0])])
        done += 1
    return done


REWRITE = Rewrite(
    name="hard-swish", rule="HardSwish becomes Mul, Add, Clip and Mul (x times x / 6 + 0.5 clipped to [0, 1]).",
    replaces=("HardSwish",), emits=("Mul", "Add", "Clip"), apply=hard_swish_as_clip)
