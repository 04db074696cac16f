"""One test per constraint of edgepipe/rules/gather.py (Gather and GatherND): a graph that fails
it and one that passes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.models.graphs import single
from tests.unit.rules.graphs import verdict


def test_no_batch_dims(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "GatherND", [[1, 200, 80], [1, 98, 5, 1]], [1, 98, 5, 80], batch_dims=1)
    assert verdict("no_batch_dims", node, graph, True) == (False, "GatherND batch_dims 1")
    node, graph = single(tmp_path, "GatherND", [[1, 200, 80], [1, 98, 5, 2]], [1, 98, 5, 80])
    assert verdict("no_batch_dims", node, graph, True)[0]


def test_not_a_table_lookup(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 runs an embedding lookup on the CPU whatever the indices' dtype (slovorez's int32
    character ids; probed on both SoCs, as int64 ids were)."""
    from edgepipe.support import read_graph
    from tests.models.probes.inputs import int32_ids_onnx

    graph = read_graph(int32_ids_onnx(tmp_path / "ids.onnx"))
    lookup = next(n for n in graph.nodes if n.op == "Gather")
    assert verdict("not_a_table_lookup", lookup, graph, True) == (
        False, "Gather looks up rows of constant 'table' by run-time indices 'shifted'")
    assert verdict("not_a_table_lookup", lookup, graph, False)[0]


def test_keeps_every_element(tmp_path: Path) -> None:
    """minilm_l6's GatherND of a (1, 64) mask by (1, 1, 1, 64, 2) constant indices, and a GatherND of one row.

    rknn-toolkit2's remove_invalid_gathernd turns such a GatherND into a reshape.
    """
    every = np.stack([np.zeros(64, np.int64), np.arange(64)], axis=-1).reshape(1, 1, 1, 64, 2)
    node, graph = single(tmp_path, "GatherND", [[1, 64]], [1, 1, 1, 64], consts={"i": every})
    assert verdict("keeps_every_element", node, graph, True) == (True, "a reshape of its input")
    node, graph = single(tmp_path, "GatherND", [[2, 64]], [1, 64], consts={"i": np.array([[0]], np.int64)})
    assert verdict("keeps_every_element", node, graph, True) == (False, "GatherND selects a part of (2, 64)")
