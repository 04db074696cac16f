"""HardSigmoid as Mul, Add and Clip: ``max(0, min(1, alpha * x + beta))`` written out."""

from __future__ import annotations

from edgepipe.legalize.rewrite import Rewrite, Site


def hard_sigmoid_as_clip(site: Site) -> int:
    """Replace each float32 HardSigmoid on the CPU by Mul(alpha), Add(beta), Clip(0, 1)."""
    done = 0
    for node in site.candidates("HardSigmoid"):
        if not site.float32(node.input[0]):
            continue
        attrs = site.attrs(node)
        base = node.name
        scaled = site.node("Mul", [node.input[0], site.constant(attrs.get("alpha", 0.2), f"{base}_alpha")],
                           f"{base}/scale")
        shifted = site.node("Add", [scaled.output[0], site.constant(attrs.get("beta", 0.5), f"{base}_beta")],
                            f"{base}/shift")
        site.replace([node], [scaled, shifted, site.clip(shifted.output[0], 0.0, 1.0, f"{base}/clip", node.output[0])])
        done += 1
    return done


REWRITE = Rewrite(
    name="hard-sigmoid", rule="HardSigmoid becomes Mul, Add and Clip (alpha * x + beta clipped to [0, 1]).",
    replaces=("HardSigmoid",), emits=("Mul", "Add", "Clip"), apply=hard_sigmoid_as_clip)
