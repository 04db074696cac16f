"""Held-out batch 20 (tests/thirdparty/heldout_batch20.py): registered and held out on every target, its data made
as each package feeds its model, deterministic and shaped as each model reads them, and each model doing its job
on them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch20 import (
    AMINO_ACIDS,
    BATCH20_MODELS,
    BOARD_SIDE,
    DIGIT_SIDE,
    DISORDER_THRESHOLD,
    EMPTY,
    MNIST_MEAN,
    MNIST_STD,
    PIECE_SYMBOLS,
    PROTEIN_LENGTH,
    TILE_SIDE,
    chess_board,
    chess_detector,
    chess_network,
    chess_squares,
    digit_photo,
    digit_recognizer,
    disorder_predictor,
    protein_like,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]

#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {"chess_square_classifier": ["rk3588"], "metapredict_disorder": ["ethos-u55"]}


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_batch20_is_registered_held_out_on_every_target() -> None:
    for model in BATCH20_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


# --------------------------------------------------------------------------------------------- digits


def test_digit_feed_is_what_the_packages_recognizer_feeds() -> None:
    """``DigitRecognizer.predict`` feeds (1, 1, 28, 28): the scan inverted (its border is light), resized by Pillow
    to 28 x 28 and MNIST-normalized; a scan already light-on-dark is not inverted, so both feed the same."""
    from PIL import Image

    photo = digit_photo(7, 3)
    assert photo.shape == (96, 96) and photo.dtype == np.uint8 and photo[:4].mean() > 180
    with digit_recognizer() as feed:
        fed = feed(photo)
        negative = feed(255 - photo)
    small = np.asarray(Image.fromarray(255 - photo).resize((DIGIT_SIDE, DIGIT_SIDE), Image.Resampling.BILINEAR))
    assert fed.shape == (1, 1, DIGIT_SIDE, DIGIT_SIDE) and fed.dtype == np.float32
    np.testing.assert_allclose(fed[0, 0], (small / 255.0 - MNIST_MEAN) / MNIST_STD, atol=1e-5)
    np.testing.assert_array_equal(negative, fed)
    assert fed.max() > 2 and np.median(fed) < 0.5  # light strokes on the dark (inverted) paper


def test_digit_cnn_reads_the_digits() -> None:
    """On 50 scans (five of each digit) the registered model's logits are the package's own PyTorch network's, its
    answer is the package's ``predict``, and it reads at least 60 % of the digits (each digit at least once)."""
    import torch

    session = _session("mnist_digit_cnn")
    answers, truth = [], []
    with digit_recognizer() as feed:
        for k in range(50):
            digit, photo = k % 10, digit_photo(k % 10, 1000 + k)
            fed = feed(photo)
            logits = session.run(["logits"], {"image": fed})[0]
            with torch.no_grad():
                real = feed.recognizer.model(torch.from_numpy(fed)).numpy()
            np.testing.assert_allclose(logits, real, atol=1e-4)
            assert int(logits.argmax()) == feed.recognizer.predict(photo)
            answers.append(int(logits.argmax()))
            truth.append(digit)
    right = np.array(answers) == np.array(truth)
    assert right.mean() >= 0.6, (answers, truth)
    assert set(np.array(truth)[right]) == set(range(10))


# --------------------------------------------------------------------------------------------- chess


def test_chess_feed_is_what_the_packages_detector_feeds() -> None:
    """``predict_fen`` feeds the 64 squares, row by row from the top left, of the board resized by skimage to
    200 x 200 (anti-aliased, RGB in [0, 1]); the samples are two occupied squares for every empty one."""
    from skimage.transform import resize

    board, pieces = chess_board(3)
    assert board.shape == (400, 400, 3) and board.dtype == np.uint8 and pieces.shape == (8, 8)
    assert 0.2 < (pieces != EMPTY).mean() < 0.5
    with chess_detector() as feed:
        fed = feed(board)
    want = resize(board, (BOARD_SIDE, BOARD_SIDE), mode="constant", anti_aliasing=True)
    assert fed.shape == (64, TILE_SIDE, TILE_SIDE, 3) and fed.dtype == np.float32
    for row, col in ((0, 0), (3, 5), (7, 7)):
        square = want[row * TILE_SIDE : (row + 1) * TILE_SIDE, col * TILE_SIDE : (col + 1) * TILE_SIDE]
        np.testing.assert_allclose(fed[row * 8 + col], square, atol=1e-6)
    assert fed.min() >= 0 and fed.max() <= 1
    _, truth = chess_squares(4, 60)
    assert 35 <= (truth != EMPTY).sum() <= 45


def test_chess_classifier_reads_the_squares() -> None:
    """On the 256 squares of four boards the registered model's probabilities are the Keras model's; it finds
    every empty square, tells white from black on at least 90 % of the pieces and names at least 55 % of them."""
    session = _session("chess_square_classifier")
    network = chess_network()
    boards = [chess_board(seed) for seed in (60, 61, 62, 63)]
    with chess_detector() as feed:
        tiles = np.concatenate([feed(board) for board, _ in boards])
        fen_from_onehot = feed.module.ChessFENDetector.fen_from_onehot
    probs = np.concatenate([session.run(["piece_probs"], {"tile": tiles[k : k + 1]})[0] for k in range(len(tiles))])
    np.testing.assert_allclose(probs, network.predict(tiles, verbose=0), atol=1e-4)
    np.testing.assert_allclose(probs.sum(axis=1), 1, atol=1e-5)
    answer, want = probs.argmax(axis=1), np.concatenate([pieces.ravel() for _, pieces in boards])
    assert all(fen_from_onehot(board.reshape(8, 8)).count("-") == 7 for board in answer.reshape(-1, 64))
    occupied = want != EMPTY
    assert (answer[~occupied] == EMPTY).all()
    white = np.array([symbol.isupper() for symbol in PIECE_SYMBOLS])
    assert (answer[occupied] != EMPTY).all()
    assert (white[answer[occupied]] == white[want[occupied]]).mean() >= 0.9
    assert (answer[occupied] == want[occupied]).mean() >= 0.55, (answer[occupied], want[occupied])


# --------------------------------------------------------------------------------------------- disorder


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


# --------------------------------------------------------------------------------------------- all


@pytest.mark.parametrize("name", [model.name for model in BATCH20_MODELS])
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
    if name == "mnist_digit_cnn":  # MNIST-normalized, the paper inverted: light strokes on a dark background
        assert rows.min() >= -MNIST_MEAN / MNIST_STD - 1e-5 and rows.max() <= (1 - MNIST_MEAN) / MNIST_STD + 1e-5
        assert (np.median(rows, axis=(1, 2, 3)) < 0.5).all() and (rows.max(axis=(1, 2, 3)) > 1.5).all()
    elif name == "chess_square_classifier":  # RGB squares in [0, 1]
        assert rows.min() >= 0 and rows.max() <= 1
    else:  # one-hot residues
        np.testing.assert_array_equal(rows.sum(axis=2), 1)
        assert set(np.unique(rows)) == {0, 1}
    outputs = np.concatenate([session.run(None, {key: rows[k : k + 1]})[0] for k in range(len(rows))])
    assert np.isfinite(outputs).all() and np.ptp(outputs) > 0
    if name == "metapredict_disorder":  # some residues disordered, some folded
        assert (outputs > DISORDER_THRESHOLD).any() and (outputs < DISORDER_THRESHOLD).any()
    else:
        assert len(set(outputs.argmax(axis=1).tolist())) > 1
