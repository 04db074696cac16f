"""Softmax (and LogSoftmax) over an axis other than the last, moved to the last axis by a Transpose on each side.

From opset 13 the op normalizes along ``axis`` alone: swapping that axis with the last, normalizing the last and
swapping back is the same function. (Before opset 13 ``axis`` flattens every axis after it into one; those nodes
are left alone.)
"""

from __future__ import annotations

from edgepipe.legalize.rewrite import Rewrite, Site


def softmax_on_last_axis(site: Site) -> int:
    """Replace each Softmax/LogSoftmax on the CPU that normalizes a non-last axis by Transpose, op, Transpose."""
    if site.opset < 13:
        return 0
    done = 0
    for node in site.candidates("Softmax", "LogSoftmax"):
        shape = site.tensors.get(node.input[0], (0, None))[1]
        if shape is None or len(shape) < 2:
            continue
        rank = len(shape)
        axis = site.attrs(node).get("axis", -1) % rank
        if axis == rank - 1:
            continue
        perm = list(range(rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        b = node.name
        before = site.node("Transpose", [node.input[0]], f"{b}/to_last", perm=perm)
        normed = site.node(node.op_type, [before.output[0]], f"{b}/last_axis", axis=-1)
        site.replace([node], [before, normed, site.node("Transpose", [normed.output[0]], f"{b}/back",
                                                        node.output[0], perm=perm)])
        done += 1
    return done


REWRITE = Rewrite(
    name="softmax-axis", rule="A Softmax over a non-last axis becomes Transpose, Softmax over the last axis, "
                              "Transpose.",
    replaces=("Softmax", "LogSoftmax"), emits=("Transpose",), apply=softmax_on_last_axis)
