"""LayerNormalization written out: ``(x - mean) / sqrt(var + epsilon) * scale + bias`` over its trailing axes."""

from __future__ import annotations

from edgepipe.legalize.rewrite import Rewrite, Site


def layer_norm_written_out(site: Site) -> int:
    """Replace each float32 LayerNormalization on the CPU (only its normalized output read) by ReduceMean, Sub, Mul,
    Add, Sqrt and Div."""
    done = 0
    for node in site.candidates("LayerNormalization"):
        x = node.input[0]
        shape = site.tensors.get(x, (0, None))[1]
        if not site.float32(x) or shape is None or any(
                name and (site.consumers(name) or site.is_output(name)) for name in node.output[1:]):
            continue
        attrs = site.attrs(node)
        rank = len(shape)
        axes = list(range(attrs.get("axis", -1) % rank, rank))
        b = node.name
        mean = site.reduce_mean(x, axes, f"{b}/mean")
        centred = site.node("Sub", [x, mean.output[0]], f"{b}/centre")
        square = site.node("Mul", [centred.output[0], centred.output[0]], f"{b}/square")
        variance = site.reduce_mean(square.output[0], axes, f"{b}/variance")
        padded = site.node("Add", [variance.output[0], site.constant(attrs.get("epsilon", 1e-5), f"{b}_epsilon")],
                           f"{b}/epsilon")
        spread = site.node("Sqrt", [padded.output[0]], f"{b}/std")
        normed = site.node("Div", [centred.output[0], spread.output[0]], f"{b}/normalize")
        bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        scaled = site.node("Mul", [normed.output[0], node.input[1]], f"{b}/scale",
                           None if bias else node.output[0])
        new = [mean, centred, square, variance, padded, spread, normed, scaled]
        if bias:
            new.append(site.node("Add", [scaled.output[0], bias], f"{b}/bias", node.output[0]))
        site.replace([node], new)
        done += 1
    return done


REWRITE = Rewrite(
    name="layer-norm", rule="LayerNormalization becomes ReduceMean, Sub, Mul, Add, Sqrt and Div over its axes.",
    replaces=("LayerNormalization",), emits=("ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div"),
    apply=layer_norm_written_out)
