"""The routes from an ONNX model to a float TFLite, tried in order until one gives the model's function.

Every route runs onnx2tf (:mod:`edgepipe.export.onnx_to_tflite`, with its exact rewrites); they differ in what
edgepipe does first. The export stage starts with onnx2tf's own conversion and, when that fails or its TFLite
computes something else (the float check), tries the routes :func:`after_failure` derives from the failure:

- **unrolled**: a recurrent model's LSTM, GRU and RNN nodes unrolled by edgepipe
  (:mod:`edgepipe.export.onnx_unroll_rnn`);
- **approximated**: ops whose exact conversion needs Select TF ops written in builtin ops
  (:data:`edgepipe.export.onnx_to_tflite.APPROXIMABLE`);
- **rewritten**: graph rewrites onnx2tf converts where it fails on the original (:data:`REWRITES`):
  a Softmax or Concat of a feature map on another axis than the last moved there by transposes, an in-graph DFT
  written as MatMuls, the low-rank constants of elementwise ops stored at their partner's rank, and (after a
  route that converted but computed something else) a constant minus a feature map written as an Add;
- **parameter replacement**: the ``-prf`` file onnx2tf itself writes when its conversion fails at a node (its
  search over that node's axis and transpose parameters), given back to it on the next run.

A route is a value: its :attr:`Route.name` is what the report says made the TFLite.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from edgepipe.export.onnx_layout_rewrites import REWRITES


@dataclass(frozen=True)
class Route:
    """What edgepipe does before and around onnx2tf: unroll, approximate, rewrite, replace parameters."""

    unroll: bool = False
    approximate: tuple[str, ...] = ()
    rewrites: tuple[str, ...] = ()
    #: onnx2tf's own parameter replacement file (``-prf``), written when its conversion failed at ``replaced``.
    replacements: Path | None = None
    replaced: str = ""

    @property
    def name(self) -> str:
        """The route as the report names it, e.g. ``onnx2tf with its Softmax on the last axis``."""
        parts = ([REWRITES[r].says for r in self.rewrites] + (["its recurrent ops unrolled by edgepipe"]
                 if self.unroll else []) + ([f"{', '.join(self.approximate)} approximated in builtin ops by edgepipe"]
                 if self.approximate else []) + ([f"its own parameter replacement for {self.replaced}"]
                                                 if self.replacements else []))
        return "onnx2tf" + (f" with {' and '.join(parts)}" if parts else "")


def first_routes(recurrent: bool) -> list[Route]:
    """onnx2tf's own conversion, and for a recurrent model the one with edgepipe's unrolling after it."""
    return [Route()] + ([Route(unroll=True)] if recurrent else [])


@dataclass(frozen=True)
class Failure:
    """What a failed route left to go on: the ONNX node onnx2tf failed at, the Select TF ops its TFLite needs (and
    their builtin approximations), and the parameter replacement file onnx2tf wrote for the failure."""

    node: str | None = None
    select_ops: tuple[str, ...] = ()
    approximable: tuple[str, ...] = ()
    suggested: Path | None = None


def after_failure(route: Route, model: Any, failure: Failure, tried: list[Route]) -> list[Route]:
    """The routes worth trying after ``route`` failed, in order, leaving out those in ``tried``: approximations of
    the Select TF ops, graph rewrites of the failing node (or of the whole model), onnx2tf's own suggestion."""
    from edgepipe.export.onnx_node_names import scope_safe

    found: list[Route] = []
    # onnx2tf names the node as its private copy does (:mod:`edgepipe.export.onnx_node_names`); the model's own name
    node = next((n.name for n in model.graph.node if scope_safe(n.name) == failure.node), failure.node)
    failure = replace(failure, node=node)
    if failure.select_ops and failure.approximable and not route.approximate:
        found.append(replace(route, approximate=failure.approximable))
    for name, rewrite in REWRITES.items():
        if name not in route.rewrites and rewrite.applies(model, failure.node):
            found.append(replace(route, rewrites=(*route.rewrites, name)))
    if failure.suggested is not None and route.replacements is None:
        found.append(replace(route, replacements=failure.suggested, replaced=failure.node or "the failing node"))
    names = {t.name for t in tried}
    return [r for r in found if r.name not in names]
