"""Held-out genomics model: splice-site prediction from DNA (CI-SpliceAI) (tests/realmodels/models/science_genomics.py):
their data made as each package feeds its model, deterministic and shaped as the model reads them, and the models
doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.science_genomics import (
    SPLICE_CONTEXT,
    SPLICE_DISTANCE,
    SPLICE_LENGTH,
    cispliceai_modules,
    cispliceai_predictor,
    gene_like,
    splice_feeds,
    splice_variant,
)


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported or shipped) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_splice_windows_are_what_the_packages_annotator_cuts() -> None:
    """REF and ALT windows of 10102 one-hot rows differ only at the variant; rows outside the gene are N (all
    zero); the minus-strand window, reverse-complemented by the package, is the plus-strand one starting one base
    earlier on the gene (the base that makes the 10101 nt even is taken at the chromosome's right end)."""
    gene = gene_like(11)
    index, alt = splice_variant(gene, "donor_loss", np.random.default_rng(0))
    with cispliceai_modules() as modules:
        plus, minus = (splice_feeds(modules, gene, strand, index, alt) for strand in "+-")
    for (ref, var), row in (
        (plus, SPLICE_DISTANCE + SPLICE_CONTEXT // 2),
        (minus, SPLICE_DISTANCE + SPLICE_CONTEXT // 2 + 1),
    ):
        assert ref.shape == var.shape == (SPLICE_LENGTH, 4) and ref.dtype == np.float32
        assert list(np.flatnonzero((ref != var).any(axis=1))) == [row]
        assert var[row].argmax() == "ACGT".index(alt)
    start = index - SPLICE_CONTEXT // 2 - SPLICE_DISTANCE  # gene index of the plus window's first row
    inside = (np.arange(SPLICE_LENGTH) + start >= gene.start) & (np.arange(SPLICE_LENGTH) + start < gene.end)
    np.testing.assert_array_equal(plus[0].sum(axis=1), inside.astype(np.float32))
    np.testing.assert_array_equal(minus[0][1:], plus[0][:-1])


def test_cispliceai_export_is_what_the_package_predicts() -> None:
    """The export on a REF and ALT pair gives what the package's own ``CISpliceAI.predict`` (its frozen graph run
    by TensorFlow) gives for the pair."""
    gene = gene_like(12)
    with cispliceai_modules() as modules:
        feeds = splice_feeds(modules, gene, "+", *splice_variant(gene, "acceptor_loss", np.random.default_rng(1)))
    want = cispliceai_predictor().predict(feeds)
    session = _session("cispliceai")
    for feed, theirs in zip(feeds, want):
        got = session.run(["splice_probs"], {"one_hot": feed[None]})[0][0]
        assert got.shape == theirs.shape == (2 * SPLICE_DISTANCE + 2, 3)
        np.testing.assert_allclose(got, theirs, atol=1e-5)


def test_cispliceai_finds_the_planted_sites_and_loses_them_with_their_gt_or_ag() -> None:
    """On three synthetic genes (the strands alternating), the planted donor (acceptor) whose GT (AG) a variant
    breaks is the window's top donor (acceptor) on REF, above 0.5 in at least two of the three; with the G changed its
    probability there falls below 0.25 in all."""
    session, rng = _session("cispliceai"), np.random.default_rng(2)
    with cispliceai_modules() as modules:
        for kind, column, offset in (("donor_loss", 2, -1), ("acceptor_loss", 1, 1)):
            before = []
            for seed in range(20, 23):
                gene, strand = gene_like(seed), "+-"[seed % 2]
                ref, var = splice_feeds(modules, gene, strand, *splice_variant(gene, kind, rng))
                site = SPLICE_DISTANCE + offset + (strand == "-")
                probs = [session.run(["splice_probs"], {"one_hot": x[None]})[0][0, :, column] for x in (ref, var)]
                assert probs[0].argmax() == site and probs[1][site] < 0.25, (kind, seed, probs[0][site], probs[1][site])
                before.append(probs[0][site])
            assert sum(p > 0.5 for p in before) >= 2, (kind, before)


@pytest.mark.parametrize("name", ["cispliceai"])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / f"model{model.suffix}"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    for key, value in first.items():
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key]) and np.isfinite(value).all()
        assert value.dtype == np.float32 and np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) <= set(specs)
    for key, value in first.items():
        want = shapes[key][1:] if key in shapes else specs[key].shape
        assert list(value.shape[1:]) == want, (key, value.shape)
    # one-hot bases, N rows all zero, every REF/ALT pair one base apart
    rows = first["one_hot"].sum(axis=2)
    assert set(np.unique(first["one_hot"])) <= {0, 1} and set(np.unique(rows)) <= {0, 1} and rows.mean() > 0.5
    assert all((first["one_hot"][k] != first["one_hot"][k + 1]).any(axis=1).sum() == 1 for k in range(0, 8, 2))
    feed = {
        key: value[0] if key not in shapes and value.ndim == len(specs[key].shape) + 1 else value[:1]
        for key, value in first.items()
    }
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)
