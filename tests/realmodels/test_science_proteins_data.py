"""Held-out protein models: disorder prediction (metapredict) and peptide retention times in liquid
(tests/realmodels/models/science_proteins.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import fetch, zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.science_proteins import (
    AMINO_ACIDS,
    DEEPLC,
    DEEPLC_MODEL,
    DEFAULT_SETUP,
    DISORDER_THRESHOLD,
    PROTEIN_LENGTH,
    WINDOW,
    deeplc_feeder,
    deeplc_modules,
    disorder_predictor,
    example_peptides,
    export_deeplc,
    peptides_with_truth,
    protein_like,
)


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


_FEATURES = ("x_atom", "x_global", "x_one_hot")


def test_disorder_feed_is_what_the_packages_predict_feeds() -> None:
    """``predict(sequence)`` feeds (1, L, 20) float32, the one-hot of the residues in ``ACDEFGHIKLMNPQRSTVWY``
    order; the protein-like sequences alternate folded and disordered stretches."""
    sequence, disordered = protein_like(3)
    assert len(sequence) == PROTEIN_LENGTH and disordered.shape == (PROTEIN_LENGTH,)
    assert 0.1 < disordered.mean() < 0.9 and set(sequence) <= set(AMINO_ACIDS)
    with disorder_predictor() as feed:
        fed = feed(sequence)
    assert fed.shape == (1, PROTEIN_LENGTH, len(AMINO_ACIDS)) and fed.dtype == np.float32
    np.testing.assert_array_equal(fed[0], np.eye(len(AMINO_ACIDS), dtype=np.float32)[[AMINO_ACIDS.index(a)
                                                                                     for a in sequence]])
    folded = "".join(a for a, d in zip(sequence, disordered, strict=True) if not d)
    loose = "".join(a for a, d in zip(sequence, disordered, strict=True) if d)
    assert sum(folded.count(a) for a in "FILVWY") / len(folded) > 2 * sum(loose.count(a) for a in "FILVWY") / len(loose)


def test_metapredict_finds_the_disordered_regions() -> None:
    """On 16 protein-like sequences the registered model's scores, clipped and rounded as the package does, are the
    package's own ``predict``; they rank disordered residues above folded ones (AUC above 0.88), average above the
    package's threshold on the disordered residues and below it on the folded ones, and call at least 80 % of the
    residues right."""
    from sklearn.metrics import roc_auc_score

    session = _session("metapredict_disorder")
    scores, truth = [], []
    with disorder_predictor() as feed:
        for seed in range(200, 216):
            sequence, disordered = protein_like(seed)
            score = session.run(["disorder"], {"sequence": feed(sequence)})[0]
            assert score.shape == (1, PROTEIN_LENGTH, 1)
            np.testing.assert_allclose(np.round(np.clip(score[0, :, 0], 0, 1), 4), feed.predict(sequence), atol=2e-4)
            scores.append(score[0, :, 0])
            truth.append(disordered)
    score_, truth_ = np.concatenate(scores), np.concatenate(truth)
    assert roc_auc_score(truth_, score_) > 0.88
    assert score_[truth_].mean() > DISORDER_THRESHOLD > score_[~truth_].mean()
    assert ((score_ > DISORDER_THRESHOLD) == truth_).mean() >= 0.8


@pytest.mark.parametrize("name", ["metapredict_disorder"])
def test_metapredict_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
        assert np.ptp(value, axis=0).max() > 0, key
    calibration = dict(np.load(tmp_path / "a" / "calibration.npz"))
    assert sorted(calibration) == sorted(first) and all(len(v) == zoo.SMALL.calibration for v in calibration.values())
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) == set(specs)
    for key, value in first.items():
        assert value.dtype == np.float32 and list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
        assert [int(d) for d in specs[key].shape] == shapes[key]
    (key,) = first
    rows = first[key]
    # one-hot residues
    np.testing.assert_array_equal(rows.sum(axis=2), 1)
    assert set(np.unique(rows)) == {0, 1}
    outputs = np.concatenate([session.run(None, {key: rows[k : k + 1]})[0] for k in range(len(rows))])
    assert np.isfinite(outputs).all() and np.ptp(outputs) > 0
    # some residues disordered, some folded
    assert (outputs > DISORDER_THRESHOLD).any() and (outputs < DISORDER_THRESHOLD).any()


def test_example_peptides_are_confident_unmodified_and_unique() -> None:
    peptides = example_peptides()
    assert len(peptides) == 2750
    sequences = [p.partition("/")[0] for p, _ in peptides]
    assert len(set(sequences)) == len(sequences) and all(s.isalpha() and s.isupper() for s in sequences)
    assert max(len(s) for s in sequences) <= WINDOW
    times = np.array([rt for _, rt in peptides])
    assert 0 < times.min() and times.max() < 120


def test_deeplc_feed_is_what_the_package_feeds() -> None:
    """``deeplc.predict`` feeds the checkpoint's encoding (terminal composition: 67 global features; a 60-residue
    window, the rolling sum left empty) and asks for the default setup only. The one-hot rows mark the residues
    in the package's alphabet, the atom rows hold each residue's composition (C, H, N, O, S, P: alanine C3H5NO,
    glycine C2H3NO, lysine C6H12N2O, as pyteomics has them) and nothing past the peptide; the global features start
    with the summed composition and the length."""
    import torch

    names = torch.load(fetch.model_file(DEEPLC, DEEPLC_MODEL), weights_only=True, map_location="cpu")["task_names"]
    with deeplc_feeder() as feed:
        fed = feed(["AGAK/2", "WGDIEFPPPFGR/2"])
        task, asked = feed.task_index, [list(t) for t in feed.asked]
        alphabet = feed.modules["_features"].DEFAULT_DICT_AA
    assert names[task] == DEFAULT_SETUP and asked == [[task]]
    assert fed["x_atom"].shape == (2, WINDOW, 6) and fed["x_global"].shape == (2, 67)
    assert fed["x_one_hot"].shape == (2, WINDOW, 20) and fed["x_atom_sum"].shape == (2, 0, 6)
    assert all(v.dtype == np.float32 for v in fed.values())
    np.testing.assert_array_equal(fed["x_one_hot"][0].sum(axis=1), [1] * 4 + [0] * (WINDOW - 4))
    np.testing.assert_array_equal(fed["x_one_hot"][1].sum(axis=1), [1] * 12 + [0] * (WINDOW - 12))
    assert [int(np.argmax(row)) for row in fed["x_one_hot"][0, :4]] == [alphabet[aa] for aa in "AGAK"]
    np.testing.assert_array_equal(fed["x_atom"][0, :4], [[3, 5, 1, 1, 0, 0], [2, 3, 1, 1, 0, 0],
                                                        [3, 5, 1, 1, 0, 0], [6, 12, 2, 1, 0, 0]])
    assert not fed["x_atom"][0, 4:].any() and not fed["x_atom"][1, 12:].any()
    np.testing.assert_array_equal(fed["x_global"][0, :7], [14, 25, 5, 4, 0, 0, 4])


def test_deeplc_predicts_the_observed_retention_times() -> None:
    """On 64 of the wheel's example peptides, the registered model's predictions (on its default setup's
    gradient) order them as they eluted: Spearman 0.95 or more (0.97 seen), and a straight line maps them to the
    observed times within 1.5 min for half of them (0.7 seen)."""
    from scipy.stats import spearmanr

    session = _session("deeplc_flexcnn")
    data = peptides_with_truth(64, 23)
    out = np.array([session.run(["retention_time"], {k: data[k][i:i + 1] for k in _FEATURES})[0][0, 0]
                    for i in range(64)])
    assert np.isfinite(out).all() and np.ptp(out) > 10
    times = data["retention_time"]
    assert spearmanr(out, times)[0] > 0.95
    line = np.polyfit(out, times, 1)
    assert line[0] > 0
    assert np.median(np.abs(np.polyval(line, out) - times)) < 1.5


def test_deeplc_export_is_the_packages_prediction() -> None:
    """The registered model gives what the package's own ``deeplc.predict`` gives with its default model (loaded
    by its code, length buckets on, as it runs by default)."""
    peptides = [p for p, _ in example_peptides()[:40]]
    with deeplc_modules() as modules:
        expected = modules["core"].predict(peptides, model=str(fetch.model_file(DEEPLC, DEEPLC_MODEL)),
                                           predict_kwargs={"device": "cpu", "show_progress": False})
    with deeplc_feeder() as feed:
        fed = feed(peptides)
    session = _session("deeplc_flexcnn")
    got = np.array([session.run(["retention_time"], {k: fed[k][i:i + 1] for k in _FEATURES})[0][0, 0]
                    for i in range(len(peptides))])
    np.testing.assert_allclose(got, expected, atol=1e-3)


def test_cached_export_is_this_modules_export(tmp_path: Path) -> None:
    import onnx

    export_deeplc(tmp_path / "deeplc_flexcnn.onnx")
    fresh = onnx.load(str(tmp_path / "deeplc_flexcnn.onnx"))
    registered = onnx.load(str(BY_NAME["deeplc_flexcnn"].fetch()))
    assert [n.op_type for n in fresh.graph.node] == [n.op_type for n in registered.graph.node]
    assert [i.name for i in fresh.graph.input] == [i.name for i in registered.graph.input] == list(_FEATURES)


@pytest.mark.parametrize("name", ["deeplc_flexcnn"])
def test_deeplc_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / f"model{model.suffix}"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    calibration = dict(np.load(tmp_path / "a" / "calibration.npz"))
    for key, value in first.items():
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key]) and np.isfinite(value).all()
        assert len(calibration[key]) == zoo.SMALL.calibration and not np.array_equal(calibration[key], value)
        assert value.dtype == np.float32 and np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) == set(specs)
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
    rows = [{key: value[k : k + 1] for key, value in first.items()} for k in range(len(first[next(iter(first))]))]
    outputs = np.concatenate([session.run(None, row)[0] for row in rows[:3]])
    assert np.isfinite(outputs).all() and np.ptp(outputs) > 0
