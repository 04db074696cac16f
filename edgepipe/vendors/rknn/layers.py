"""Reading rknn-toolkit2's compiler output: the per-layer target table, its graph rewrites and fallback warnings.

With ``RKNN_LOG_LEVEL=4`` the compiler prints a "Network Layer Information Table" (``ID OpType DataType Target ...
FullName``), one row per layer it emits, ``Target`` NPU or CPU, ``FullName`` ``OpType:node name``. The Python front
end logs its graph rewrites first (``fuse_ops results:``: ``NAME: remove node = [...], add node = [...]``) and the
constants it folds (``fold_constant remove nodes = [...]``), which trace a layer back to the nodes of the model it
came from. A node named among both the removed and the added nodes of a rewrite (a swap, a fusion into it) stays
itself; a rewrite that removes nothing inserts layers that come from no model node (``inserted``: e.g. the reshape to
4-D and back around a 2-D op, the layout conversion before a graph output). Such a layer computes no op of the model,
so it is traced to none, even where its name (the tensor it reshapes plus ``_rs``) happens to start with a node's
name: exporters that name a node after its output would otherwise have their heads counted on the CPU and others not.
A reshape of the model merged into such a layer is computed there, though: a rewrite that moves an inserted reshape
past an op and drops the model's reshape after it (``swap_reshape_sigmoid`` removing ``output_0_squeeze_47_2rs``, the
Squeeze before an output) records it in ``merged``; a model reshape that ``fuse_two_reshape`` drops into the inserted
reshape of its own output (``..._Reshape_rs`` before a Concat) is found from the layer's name by the caller
(:func:`stem`). A rewrite that merges data movement away (``bypass_two_reshape``, ``fuse_two_reshape``,
``remove_invalid_transpose``, ...) and adds nothing leaves the nodes it removes running nowhere (``eliminated``), like
folded constants. ``remove_parallel_transpose`` (and the other ``remove_parallel_*``) keeps one of several identical
ops reading the same tensor and drops the rest: the kept layer computes them (a model's two Transposes of its
spectrum input, one from the model, one the toolkit inserted before its dense layer).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

_ROW = re.compile(r"^D RKNN: \[[^\]]*\]\s+(\d+)\s+(\S+)\s+(\S+)\s+(NPU|CPU)\s+.*\s(\S+?):(\S+)\s*$")
_REWRITE = re.compile(r"^D\s+(\w+): remove node = (\[.*?\])(?:, add node = (\[.*?\]))?\s*$")
#: Rewrites that merge data movement away: what they remove (and add nothing for) runs nowhere at inference time.
_MERGES = re.compile(r"^(bypass_|fuse_two_|remove_invalid_)|reshape|transpose")
_FOLDED = re.compile(r"^D fold_constant remove nodes = (\[.*\])\s*$")
#: The names the compiler gives the reshape layers it makes (``X_rs``, ``X-rs``, a Squeeze's ``X_2rs``).
_RESHAPE_NAME = re.compile(r"[-_]\d*rs$")
_FALLBACK = re.compile(r"^[EW] RKNN: \[[^\]]*\] (.*fallback.*)$", re.IGNORECASE)
#: Layers the compiler adds around the model, not rewritten from any of its nodes.
IO_LAYERS = {"InputOperator", "OutputOperator"}
#: Layers the compiler adds between int8 and float16 parts of the graph (``exDataConvert:<tensor>__cvt_int8_float16``
#: before a GRU that runs in float16): named after a tensor, they compute no op of the model, like inserted reshapes.
CONVERSION_LAYERS = {"exDataConvert"}


@dataclass(frozen=True)
class Layer:
    """One row of the layer table."""

    index: int
    op: str
    dtype: str
    target: str
    name: str


@dataclass
class CompilerLog:
    """Everything edgepipe reads from one rknn build."""

    layers: list[Layer] = field(default_factory=list)
    origin: dict[str, list[str]] = field(default_factory=dict)
    folded: set[str] = field(default_factory=set)
    inserted: set[str] = field(default_factory=set)
    eliminated: set[str] = field(default_factory=set)
    #: Inserted reshape layer -> the reshapes a rewrite merged into it.
    merged: dict[str, list[str]] = field(default_factory=dict)
    fallbacks: list[str] = field(default_factory=list)


def parse(native: str, python_log: str) -> CompilerLog:
    """The layer table and fallback warnings from the native log, the rewrites from the Python log."""
    log = CompilerLog()
    for line in native.splitlines():
        row = _ROW.match(line.rstrip())
        if row:
            log.layers.append(Layer(int(row.group(1)), row.group(2), row.group(3), row.group(4), row.group(6)))
        fallback = _FALLBACK.match(line.strip())
        if fallback:
            log.fallbacks.append(fallback.group(1).strip())
    for line in python_log.splitlines():
        rewrite = _REWRITE.match(line.strip())
        if rewrite:
            removed = ast.literal_eval(rewrite.group(2))
            added = ast.literal_eval(rewrite.group(3)) if rewrite.group(3) else []
            if not removed:  # a layer the compiler adds from nothing (a 4-D reshape around an op): no model node
                log.inserted.update(added)
            if not added and _MERGES.search(rewrite.group(1)):  # e.g. two reshapes in a row, a transpose of 1s
                log.eliminated.update(removed)
            gone = [r for r in removed if r not in added and _RESHAPE_NAME.search(r)]
            into = [a for a in added if a in removed and _RESHAPE_NAME.search(a)]
            if gone and into:  # a reshape moved past an op and merged with the reshape there
                log.merged.setdefault(into[0], []).extend(gone)
            kept, dropped = [a for a in added if a in removed], [r for r in removed if r not in added]
            if rewrite.group(1).startswith("remove_parallel_") and kept and dropped:  # duplicates of a kept node
                (log.merged if kept[0] in log.inserted else log.origin).setdefault(kept[0], []).extend(dropped)
            for new in added:
                if new not in removed:  # a node that survives a rewrite (swap, fusion into it) stays itself
                    log.origin.setdefault(new, []).extend(removed)
        folded = _FOLDED.match(line.strip())
        if folded:
            log.folded.update(ast.literal_eval(folded.group(1)))
    return log


def origins(name: str, log: CompilerLog, known: set[str]) -> set[str]:
    """The model nodes (names in ``known``) a layer or rewritten node comes from."""
    seen: set[str] = set()
    found: set[str] = set()
    stack = [name]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if current in log.inserted:  # the compiler's own layer: only the reshapes merged into it
            stack.extend(log.merged.get(current, []))
            continue
        if current in known:
            found.add(current)
        candidates = log.origin.get(current, [])
        if not candidates and current not in known and "_" in current:
            candidates = [current.rsplit("_", 1)[0]]  # the compiler's fused-layer suffix (Conv@11_ConvAdd)
        stack.extend(candidates)
    return found


def stem(name: str) -> str:
    """The tensor an inserted layer's name was made from (``bias_add_45-rs`` -> ``bias_add_45``)."""
    return _RESHAPE_NAME.sub("", name)
