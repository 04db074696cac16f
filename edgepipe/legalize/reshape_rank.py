"""Reshapes to rank 5 and more folded into rank 4 or less, when what follows only moves whole axes.

- Reshape to rank > 4, Transpose, Reshape (a channel shuffle): axes of size 1 are dropped and axes the Transpose
  keeps next to each other in the same order are merged; when four or fewer remain, the same data movement is
  a Reshape and a Transpose of that rank (or, if the Transpose then keeps the order, one Reshape);
- Reshape to rank > 4 straight into another Reshape: one Reshape to the final shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edgepipe.legalize.rewrite import Rewrite, Site

MAX_RANK = 4


def _merged(shape: tuple[int, ...], perm: list[int]) -> tuple[list[int], list[int]] | None:
    """(shape, perm) of rank at most 4 doing the Transpose ``perm`` of ``shape``; None when that takes more axes."""
    kept = [axis for axis in range(len(shape)) if shape[axis] != 1]
    renumber = {axis: index for index, axis in enumerate(kept)}
    order = [renumber[axis] for axis in perm if axis in renumber]  # output position -> input axis
    runs: list[list[int]] = []
    for axis in order:
        if runs and axis == runs[-1][-1] + 1:
            runs[-1].append(axis)
        else:
            runs.append([axis])
    if not runs or len(runs) > MAX_RANK:
        return None
    by_input = sorted(runs, key=lambda run: run[0])
    sizes = [int(np.prod([shape[kept[axis]] for axis in run])) for run in by_input]
    return sizes, [by_input.index(run) for run in runs]


def _single_reader(site: Site, tensor: str) -> Any | None:
    readers = site.consumers(tensor)
    return readers[0] if len(readers) == 1 and not site.is_output(tensor) else None


def _fold(site: Site, first: Any) -> list[Any] | None:
    """The nodes that replace ``first`` (a Reshape to rank > 4) and what follows it, or None."""
    shape = site.shape(first.output[0])
    follower = _single_reader(site, first.output[0])
    if shape is None or len(shape) <= MAX_RANK or follower is None:
        return None
    names = {first.name, follower.name}
    if follower.op_type == "Reshape":
        final = site.shape(follower.output[0])
        if final is None or not names & site.on_cpu:
            return None
        target = site.constant(list(final), f"{follower.name}_shape", np.int64)
        return [first, follower, site.node("Reshape", [first.input[0], target], f"{follower.name}/folded",
                                           follower.output[0])]
    last = _single_reader(site, follower.output[0]) if follower.op_type == "Transpose" else None
    final = site.shape(last.output[0]) if last is not None and last.op_type == "Reshape" else None
    merged = _merged(shape, list(site.attrs(follower).get("perm", range(len(shape))[::-1])))
    if last is None or final is None or len(final) > MAX_RANK or merged is None \
            or not (names | {last.name}) & site.on_cpu:
        return None
    sizes, perm = merged
    if perm == sorted(perm):  # only axes of size 1 moved: one Reshape does it
        target = site.constant(list(final), f"{last.name}_shape", np.int64)
        return [first, follower, last, site.node("Reshape", [first.input[0], target], f"{last.name}/folded",
                                                 last.output[0])]
    reshape = site.node("Reshape", [first.input[0], site.constant(sizes, f"{first.name}_shape", np.int64)],
                        f"{first.name}/folded")
    moved = site.node("Transpose", [reshape.output[0]], f"{follower.name}/folded", perm=perm)
    last.input[0] = moved.output[0]
    return [first, follower, reshape, moved]


def reshapes_folded(site: Site) -> int:
    """Fold each rank > 4 Reshape chain with a node on the CPU (see the module's docstring)."""
    done = 0
    for first in [n for n in site.model.graph.node if n.op_type == "Reshape"]:
        if not site.has(first):
            continue  # part of a chain already folded
        plan = _fold(site, first)
        if plan is None:
            continue
        old = [n for n in plan if site.has(n)]
        site.replace(old, [n for n in plan if not site.has(n)])
        done += 1
    return done


REWRITE = Rewrite(
    name="reshape-rank", rule="A reshape to rank 5 or more that only moves whole axes becomes one of rank 4 or less.",
    replaces=("Reshape", "Transpose"), emits=(), apply=reshapes_folded)
