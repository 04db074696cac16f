"""The agreement figures of one target, computed so that no model can hide and no model weighs ninefold.

From the rows of one target (one row per model, whatever happened to it):

- **models** by what happened: compiled, compile failed (the vendor refused a graph edgepipe said compiles),
  failure predicted (edgepipe said the compiler refuses the graph, and it did), tool failed, no artifact (edgepipe
  built none of the kind the target deploys). Every row counts; none is dropped or turned into a silent zero.
- **source ops**: nodes edgepipe created from one node of the user's model (an unrolled recurrence, a
  decomposition) count once, as the source node: they agree when every one of them agrees, and a source op is on
  the CPU for a side when any of its nodes is (:func:`source_op`). Only names that carry their source can be
  grouped: in the Ethos-U targets' TFLite, onnx2tf renames most nodes, so there an unrolled recurrence still
  counts node by node, and the macro figure (each model weighs one) is the one that keeps it from dominating.
- **macro agreement**: the mean over models of each model's share of agreeing source ops; a compile failure, a
  tool failure or a missing artifact scores 0, a predicted failure 1. **exact match**: the share of models that
  agree on every source op (a predicted failure included).
- **pooled agreement**: agreeing source ops over all compared source ops (models with no ops compared add none:
  their count is in its own column).
- **CPU-op recall / precision**, pooled over source ops, with their counts.
- **trivial baseline**: a checker that puts every node on the accelerator and never predicts a compile failure,
  scored the same way on the same rows.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.agreement import Row

#: Where edgepipe's own rewrites put their nodes: ``<source>/unrolled/<part>_<n>`` (an LSTM, GRU or RNN unrolled
#: by edgepipe/export/onnx_unroll_rnn.py, also ``<output>/unrolled`` for its copies into the op's outputs) and
#: ``<source>/tanh_approx/<part>`` (edgepipe/export/onnx_erf.py). In a TFLite written by onnx2tf a kept name sits
#: behind the TF op onnx2tf emitted, with ``wa/`` for a leading ``/`` (``model/tf.compat.v1.squeeze/wa/rnn/LSTM/
#: unrolled/squeeze_10``); most of its ops are named after that TF op alone (``model/tf.strided_slice_12/
#: StridedSlice``) and cannot be traced to a source: they count one by one.
_DERIVED = re.compile(r"(?P<source>[^;]+?)/(?:unrolled|tanh_approx)(?:/|$)")
_ONNX2TF_PREFIX = re.compile(r"^model/tf\.[^/]+/")

#: Row statuses in which no placement is compared and the model scores 0 (edgepipe or the tool failed it).
FAILED = ("compile_failed", "failed", "not installed", "no tool", "no artifact")


def source_op(name: str) -> str:
    """The node of the user's model that node ``name`` comes from (``name`` itself unless edgepipe made it)."""
    match = _DERIVED.search(name)
    if not match:
        return name
    source = _ONNX2TF_PREFIX.sub("", match.group("source"))
    return "/" + source[3:] if source.startswith("wa/") else source


@dataclass(frozen=True)
class SourceOps:
    """One model's placements counted once per source op."""

    compared: int
    agree: int
    trivial_agree: int
    vendor_cpu: int
    edgepipe_cpu: int
    both_cpu: int


def source_ops(placements: dict[str, str]) -> SourceOps:
    """Group ``placements`` (node -> edgepipe's letter then the vendor's) by source op and count."""
    groups: dict[str, list[str]] = {}
    for name, pair in placements.items():
        groups.setdefault(source_op(name), []).append(pair)
    agree = trivial = vendor_cpu = edgepipe_cpu = both = 0
    for pairs in groups.values():
        agree += all(p[0] == p[1] and p[0] != "-" for p in pairs)
        trivial += all(p[0] != "-" and p[1] == "A" for p in pairs)
        theirs, ours = any(p[1] == "C" for p in pairs), any(p[0] == "C" for p in pairs)
        vendor_cpu += theirs
        edgepipe_cpu += ours
        both += theirs and ours
    return SourceOps(len(groups), agree, trivial, vendor_cpu, edgepipe_cpu, both)


@dataclass(frozen=True)
class ModelScore:
    """One model on one target: its share of agreeing source ops for edgepipe and for the trivial checker."""

    model: str
    status: str
    ops: SourceOps | None
    agreement: float
    trivial: float
    exact: bool
    trivial_exact: bool


def score(row: Row) -> ModelScore:
    """A row scored: compiled rows by their source ops; a predicted failure 1 (the trivial checker 0); a failure
    of the compile, the tool or the build 0 for both."""
    if row.status == "failure predicted":
        return ModelScore(row.model, row.status, None, 1.0, 0.0, True, False)
    if row.status != "ran":
        ops = source_ops(row.placements) if row.placements else None
        return ModelScore(row.model, row.status, ops, 0.0, 0.0, False, False)
    ops = source_ops(row.placements) if row.placements else SourceOps(row.compared, row.agree, -1, row.vendor_cpu,
                                                                        row.edgepipe_cpu, row.both_cpu)
    share = ops.agree / ops.compared if ops.compared else 1.0
    trivial = ops.trivial_agree / ops.compared if ops.compared and ops.trivial_agree >= 0 else float("nan")
    return ModelScore(row.model, row.status, ops, share, trivial, ops.agree == ops.compared,
                      ops.trivial_agree == ops.compared)


@dataclass(frozen=True)
class TargetFigures:
    """Every figure of one target's table."""

    target: str
    models: int
    by_status: dict[str, int]
    macro: float
    trivial_macro: float
    exact: float
    trivial_exact: float
    compared: int
    agree: int
    trivial_agree: int
    vendor_cpu: int
    edgepipe_cpu: int
    both_cpu: int
    #: False when some compiled row has no per-node placements (recorded before rows kept them): the source-op
    #: figures are then node figures and the trivial baseline is not known.
    per_node: bool

    @property
    def pooled(self) -> float:
        return self.agree / self.compared if self.compared else float("nan")

    @property
    def trivial_pooled(self) -> float:
        return self.trivial_agree / self.compared if self.compared and self.per_node else float("nan")

    @property
    def cpu_recall(self) -> float:
        return self.both_cpu / self.vendor_cpu if self.vendor_cpu else float("nan")

    @property
    def cpu_precision(self) -> float:
        return self.both_cpu / self.edgepipe_cpu if self.edgepipe_cpu else float("nan")


def figures(target: str, rows: Sequence[Row]) -> TargetFigures:
    """The figures of ``rows`` (one target's rows, one per model)."""
    scores = [score(r) for r in rows]
    compared = [s.ops for s in scores if s.ops is not None and s.status == "ran"]
    failed_ops = [s.ops for s in scores if s.ops is not None and s.status != "ran"]
    by_status: dict[str, int] = {}
    for s in scores:
        by_status[s.status] = by_status.get(s.status, 0) + 1
    per_node = all(o.trivial_agree >= 0 for o in compared)

    def mean(values: list[float]) -> float:
        return statistics.fmean(values) if values else float("nan")

    return TargetFigures(
        target=target, models=len(rows), by_status=by_status,
        macro=mean([s.agreement for s in scores]),
        trivial_macro=mean([s.trivial for s in scores]) if per_node else float("nan"),
        exact=mean([float(s.exact) for s in scores]),
        trivial_exact=mean([float(s.trivial_exact) for s in scores]) if per_node else float("nan"),
        compared=sum(o.compared for o in compared + failed_ops), agree=sum(o.agree for o in compared),
        trivial_agree=sum(max(o.trivial_agree, 0) for o in compared),
        vendor_cpu=sum(o.vendor_cpu for o in compared), edgepipe_cpu=sum(o.edgepipe_cpu for o in compared),
        both_cpu=sum(o.both_cpu for o in compared), per_node=per_node)
