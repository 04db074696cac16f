"""Held-out vision models of small rendered squares: handwritten digits and chessboard squares
(tests/realmodels/models/vision_digits_chess.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.vision_digits_chess import (
    BOARD_SIDE,
    DIGIT_SIDE,
    EMPTY,
    MNIST_MEAN,
    MNIST_STD,
    PIECE_SYMBOLS,
    TILE_SIDE,
    chess_board,
    chess_detector,
    chess_network,
    chess_squares,
    digit_photo,
    digit_recognizer,
)


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


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


@pytest.mark.parametrize("name", ["mnist_digit_cnn", "chess_square_classifier"])
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
    outputs = np.concatenate([session.run(None, {key: rows[k : k + 1]})[0] for k in range(len(rows))])
    assert np.isfinite(outputs).all() and np.ptp(outputs) > 0
    assert len(set(outputs.argmax(axis=1).tolist())) > 1
