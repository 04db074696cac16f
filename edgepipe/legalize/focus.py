"""A "Focus" block (four step-2 slices of one NCHW map, concatenated on channels) as one op.

The slices ``x[..., dh::2, dw::2]`` for the four offsets ``(dh, dw)`` stacked on channels are a space-to-depth: a
SpaceToDepth (block 2) when the offsets come in its order (0,0), (0,1), (1,0), (1,1) and the target lists it,
else a Conv with a fixed one-hot 2 x 2 kernel of stride 2 (each output channel copies one input pixel: exact).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edgepipe.legalize.rewrite import Rewrite, Site

_SPACE_TO_DEPTH_ORDER = [(0, 0), (0, 1), (1, 0), (1, 1)]


def _slice_terms(site: Site, node: Any, rank: int) -> dict[int, tuple[int, int, int]] | None:
    """(start, end, step) by axis of a Slice whose parameters are constants (opset 10 and later); None otherwise."""
    if len(node.input) < 3 or any(name and name not in site.constants for name in node.input[1:]):
        return None
    starts, ends = (site.constants[n].tolist() for n in node.input[1:3])
    axes = site.constants[node.input[3]].tolist() if len(node.input) > 3 and node.input[3] else list(
        range(len(starts)))
    steps = site.constants[node.input[4]].tolist() if len(node.input) > 4 and node.input[4] else [1] * len(starts)
    return {(a + rank) % rank: (s, e, t) for a, s, e, t in zip(axes, starts, ends, steps)}


def _offset(site: Site, tensor: str, producers: dict[str, Any]) -> tuple[str, tuple[int, int], list[Any]] | None:
    """(source, (dh, dw), slices) when ``tensor`` is a chain of at most two Slices taking every second row and
    column of a rank-4 map from offset (dh, dw); None otherwise."""
    terms: dict[int, tuple[int, int, int]] = {}
    chain: list[Any] = []
    while tensor in producers and producers[tensor].op_type == "Slice" and len(chain) < 2:
        node = producers[tensor]
        shape = site.shape(node.input[0])
        found = _slice_terms(site, node, 4) if shape is not None and len(shape) == 4 else None
        if found is None or terms.keys() & found.keys():
            return None
        terms.update(found)
        chain.append(node)
        tensor = node.input[0]
    shape = site.shape(tensor)
    if not chain or shape is None or len(shape) != 4 or shape[2] % 2 or shape[3] % 2:
        return None
    for axis, (start, end, step) in terms.items():
        spatial = axis in (2, 3)
        if end < shape[axis] or (spatial and (step != 2 or start not in (0, 1))) or (
                not spatial and (step != 1 or start != 0)):
            return None
    if 2 not in terms or 3 not in terms:
        return None
    return tensor, (terms[2][0], terms[3][0]), chain


def _one_hot_kernel(channels: int, offsets: list[tuple[int, int]]) -> np.ndarray:
    """[4C, C, 2, 2] weights: output channel ``j * C + c`` copies channel ``c`` at offset ``offsets[j]``."""
    weights = np.zeros((4 * channels, channels, 2, 2), np.float32)
    for j, (dh, dw) in enumerate(offsets):
        for c in range(channels):
            weights[j * channels + c, c, dh, dw] = 1.0
    return weights


def focus_as_space_to_depth(site: Site) -> int:
    """Replace each Focus block with a node on the CPU by SpaceToDepth or a fixed-weight Conv."""
    producers = {o: n for n in site.model.graph.node for o in n.output}
    done = 0
    for concat in [n for n in site.model.graph.node if n.op_type == "Concat" and len(n.input) == 4]:
        found = [_offset(site, name, producers) for name in concat.input]
        if any(f is None for f in found) or len({f[0] for f in found if f}) != 1:
            continue
        parts = [f for f in found if f is not None]
        source, offsets = parts[0][0], [p[1] for p in parts]
        shape = site.shape(source)
        axis = site.attrs(concat).get("axis")
        slices = [s for p in parts for s in p[2]]
        if shape is None or axis not in (1, -3) or len(set(offsets)) != 4 or not (
                {n.name for n in [concat, *slices]} & site.on_cpu):
            continue
        name = concat.name
        if offsets == _SPACE_TO_DEPTH_ORDER and site.listed("SpaceToDepth"):
            new = site.node("SpaceToDepth", [source], f"{name}/space_to_depth", concat.output[0], blocksize=2)
        else:
            kernel = site.constant(_one_hot_kernel(shape[1], offsets), f"{name}_one_hot")
            new = site.node("Conv", [source, kernel], f"{name}/space_to_depth", concat.output[0],
                            kernel_shape=[2, 2], strides=[2, 2])
        inside = {concat.name, *(s.name for s in slices)}
        dropped = [s for s in slices if all(c.name in inside for c in site.consumers(s.output[0]))
                   and not site.is_output(s.output[0])]
        site.replace([concat, *dropped], [new])
        done += 1
    return done


REWRITE = Rewrite(
    name="focus", rule="Four step-2 slices of one map stacked on channels become a SpaceToDepth or a fixed Conv.",
    replaces=("Slice", "Concat"), emits=("Conv",), apply=focus_as_space_to_depth)
