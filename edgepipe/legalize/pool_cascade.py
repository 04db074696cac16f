"""Large pooling windows as a cascade of two smaller pools that computes the same values.

- a window that tiles its input (stride equal to the kernel, no padding): kernel ``a * b`` per axis becomes a pool
  of ``a`` then a pool of ``b``, each with stride equal to its kernel (every window is whole, so the mean of means
  is the mean and the max of maxima the max);
- a MaxPool of stride 1: kernel ``k`` becomes ``k1`` then ``k2`` with ``k1 + k2 - 1 = k`` (with centred padding,
  odd kernels each padded by half: padding never wins a max);
- a global pool of a large map: a tiling pool by a divisor of each side first, then the global pool.

A window still too large for the target is split again in the next round (:mod:`edgepipe.legalize.driver`).
"""

from __future__ import annotations

import math
from typing import Any

from edgepipe.legalize.rewrite import Rewrite, Site


def _balanced_divisor(size: int) -> int:
    """The largest divisor of ``size`` not above its square root (1 for a prime)."""
    return max(d for d in range(1, math.isqrt(size) + 1) if size % d == 0)


def _plain(attrs: dict[str, Any]) -> bool:
    """No dilation, no ceil mode, no storage order output: the pool is a plain window."""
    return (all(d == 1 for d in attrs.get("dilations", [1, 1])) and not attrs.get("ceil_mode", 0)
            and not attrs.get("storage_order", 0))


def _pads(attrs: dict[str, Any]) -> list[int] | None:
    """Explicit pads (zeros when none); None for auto_pad SAME_*, which this rewrite leaves alone."""
    if attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        return None
    return list(attrs.get("pads", [0, 0, 0, 0]))


def _tiling(site: Site, node: Any, attrs: dict[str, Any], kernel: list[int]) -> list[Any] | None:
    """Two tiling pools for a pool whose stride is its kernel and that has no padding."""
    pads = _pads(attrs)
    if list(attrs.get("strides", [1, 1])) != kernel or pads is None or any(pads) or len(node.output) > 1:
        return None
    first = [_balanced_divisor(k) for k in kernel]
    if first == [1, 1]:
        return None
    second = [k // a for k, a in zip(kernel, first)]
    one = site.node(node.op_type, [node.input[0]], f"{node.name}/cascade_0", kernel_shape=first, strides=first)
    two = site.node(node.op_type, [one.output[0]], f"{node.name}/cascade_1", node.output[0], kernel_shape=second,
                    strides=second)
    return [one, two]


def _sliding_split(kernel: int, padded: bool) -> tuple[int, int]:
    """Kernels ``(k1, k2)`` with ``k1 + k2 - 1 = kernel``, both odd when padded (each pads half its kernel)."""
    first = (kernel + 1) // 2
    if padded and first % 2 == 0:
        first -= 1
    return first, kernel + 1 - first


def _sliding_max(site: Site, node: Any, attrs: dict[str, Any], kernel: list[int]) -> list[Any] | None:
    """Two stride-1 MaxPools for a stride-1 MaxPool, unpadded or padded by half its (odd) kernel per side."""
    pads = _pads(attrs)
    if node.op_type != "MaxPool" or list(attrs.get("strides", [1, 1])) != [1, 1] or pads is None \
            or len(node.output) > 1 or max(kernel) < 3:
        return None
    padded = any(pads)
    if padded and (pads != [(k - 1) // 2 for k in kernel] * 2 or any(k % 2 == 0 for k in kernel)):
        return None
    splits = [_sliding_split(k, padded) for k in kernel]
    if all(f == 1 for f, _ in splits):
        return None
    first, second = [f for f, _ in splits], [t for _, t in splits]
    pad_one = [(f - 1) // 2 for f in first] * 2 if padded else [0, 0, 0, 0]
    pad_two = [(s - 1) // 2 for s in second] * 2 if padded else [0, 0, 0, 0]
    one = site.node("MaxPool", [node.input[0]], f"{node.name}/cascade_0", kernel_shape=first, pads=pad_one)
    two = site.node("MaxPool", [one.output[0]], f"{node.name}/cascade_1", node.output[0], kernel_shape=second,
                    pads=pad_two)
    return [one, two]


def _global(site: Site, node: Any) -> list[Any] | None:
    """A tiling pool by a divisor of each side, then the global pool, for a global pool of a rank-4 map."""
    shape = site.shape(node.input[0])
    if shape is None or len(shape) != 4:
        return None
    first = [_balanced_divisor(shape[2]), _balanced_divisor(shape[3])]
    if first == [1, 1]:
        return None
    local = "AveragePool" if node.op_type == "GlobalAveragePool" else "MaxPool"
    one = site.node(local, [node.input[0]], f"{node.name}/cascade_0", kernel_shape=first, strides=first)
    return [one, site.node(node.op_type, [one.output[0]], f"{node.name}/cascade_1", node.output[0])]


def pools_as_cascades(site: Site) -> int:
    """Replace each 2-D pool on the CPU that one of the cascades above computes exactly."""
    done = 0
    for node in site.candidates("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"):
        if node.op_type.startswith("Global"):
            cascade = _global(site, node)
        else:
            attrs = site.attrs(node)
            kernel = list(attrs.get("kernel_shape", []))
            if len(kernel) != 2 or not _plain(attrs):
                continue
            cascade = _tiling(site, node, attrs, kernel) or _sliding_max(site, node, attrs, kernel)
        if cascade is not None:
            site.replace([node], cascade)
            done += 1
    return done


REWRITE = Rewrite(
    name="pool-cascade", rule="A large pooling window becomes two smaller pools in a row that give the same values.",
    replaces=("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"), emits=(), apply=pools_as_cascades)
