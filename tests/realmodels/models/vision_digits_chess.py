"""Held-out vision models of small rendered squares: handwritten digits and chessboard squares.

- digit-recognizer-py 0.1.0 (MIT): the package's handwritten digit recognizer
  (``digit_recognizer/models/handwriting_model.pth``, 1.6 MB: a PyTorch state dict of its ``CNN``, trained on MNIST):
  three 3 x 3 Conv (32, 64, 128, padding 1) each with a Relu and a 2 x 2 MaxPool, a Flatten, a Linear 1152 -> 256
  with a Relu and a Linear 256 -> 10. Built by the package's ``model.CNN`` with the wheel's weights and exported by
  torch.onnx (TorchScript exporter, opset 17, static shapes, 1.6 MB): 3 Conv, 4 Relu, 3 MaxPool, a Reshape (the
  ``view``, its shape a Constant) and 2 Gemm. ``image`` (1, 1, 28, 28) float32 NCHW, a grey digit as white strokes
  on black, MNIST-normalized, in; ``logits`` (1, 10), the scores of the digits 0-9 (the package takes their softmax
  and argmax), out.
- chess-fen-detector 0.2.0 (MIT): the square classifier of the package's chessboard-to-FEN detector
  (``chess_fen_detector/models/chess_best_model_mini.keras``, 18 MB with its optimizer state: a Keras 3
  ``Sequential`` of 1.5 M parameters): three valid 3 x 3 Conv2D of 32 with Relu activations, a Flatten, a Dense
  11552 -> 128 with a Relu, a Dropout and a Dense 128 -> 13 with a softmax. Loaded by Keras (TensorFlow backend) and
  exported by ``model.export(format="onnx")`` (tf2onnx, opset 17, 6 MB) at one square, as ``tile``: 2 Transpose (NHWC
  to NCHW and back before the Flatten), 3 Conv, 4 Relu, a Reshape, 2 Gemm and a Softmax. ``tile`` (1, 25, 25, 3)
  float32 NHWC, one of the 64 squares of a board resized to 200 x 200 (RGB in [0, 1]), in; ``piece_probs`` (1, 13),
  the probabilities of the twelve pieces (``prbnkqPRBNKQ``, the package's ``PIECE_SYMBOLS``) and of an empty square
  (12), out.

Data are made as each package feeds its model, with the package's own code from the pinned wheel, its model
replaced by a recorder of what it is fed:

- digit-recognizer-py: the package's ``DigitRecognizer(...).predict(image)`` (``recognizer.py``: grey conversion,
  the automatic inversion of a light background by its border pixels, a 28 x 28 resize, ``ToTensor`` and MNIST's
  normalization) with its network a recorder. torchvision, whose ``transforms`` it uses for the last three steps,
  stands in as Pillow's bilinear resize (what ``transforms.Resize`` does to a PIL image), the division by 255 and
  the normalization. Each photo (:func:`digit_photo`) is a 96 x 96 grey scan of one digit (cycled 0-9) in dark ink
  on light paper: one of ten fonts that matplotlib ships (DejaVu, Computer Modern, STIX), seeded size, stroke
  width, position, rotation, ink and paper tone and sensor noise. The digit drawn is the truth.
- chess-fen-detector: the package's ``ChessFENDetector(...).predict_fen(path)`` (``detector.py``: skimage's
  ``imread``, anti-aliased ``resize`` of the board to 200 x 200 and ``view_as_blocks`` into 64 squares of 25 x 25)
  with its Keras model a recorder (``tensorflow.keras.models.load_model`` stands in). Each board
  (:func:`chess_board`) is a 400 x 400 PNG: eight by eight squares in one of five common light/dark palettes, a
  seeded third of them holding one of the twelve pieces drawn as DejaVu Sans's chess glyphs (white pieces filled
  white with their outline glyph on top), with seeded glyph size and font weight. The samples are squares of
  those boards, two occupied for every empty one; the piece placed is the truth.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, keras_tools, standing_in, torch_tools

_DR = "digit_recognizer/"

_DIGIT_PTH = _DR + "models/handwriting_model.pth"

DIGIT_RECOGNIZER = fetch.Wheel(
    requirement="digit-recognizer-py==0.1.0",
    filename="digit_recognizer_py-0.1.0-py3-none-any.whl",
    sha256="58a3132a4c3ccf04175142e0c9464e5fe132421aa26d7130cbd6b1d2c03c7b12",
    members=(_DIGIT_PTH, _DR + "model.py", _DR + "recognizer.py"),
)

_CF = "chess_fen_detector/"

_CHESS_KERAS = _CF + "models/chess_best_model_mini.keras"

CHESS_FEN = fetch.Wheel(
    requirement="chess-fen-detector==0.2.0",
    filename="chess_fen_detector-0.2.0-py3-none-any.whl",
    sha256="b067774d58f3797272b6655b198babb1c84db3f5fed1b08414217260a1220802",
    members=(_CHESS_KERAS, _CF + "detector.py"),
)

#: The ONNX opset of the exports written here.
OPSET = 17


def _matplotlib_font(name: str) -> str:
    """A TrueType font that matplotlib (a core dependency) ships, by file name."""
    import matplotlib

    return str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name)


#: The network's input side and the package's normalization (MNIST's mean and standard deviation).
DIGIT_SIDE = 28

MNIST_MEAN, MNIST_STD = 0.1307, 0.3081

#: The side of each synthetic scan and the fonts drawn with (all shipped by matplotlib).
PHOTO_SIDE = 96

DIGIT_FONTS = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf", "DejaVuSerif.ttf",
               "DejaVuSerif-Italic.ttf", "DejaVuSerif-Bold.ttf", "DejaVuSansMono.ttf", "cmr10.ttf", "cmss10.ttf",
               "STIXGeneralItalic.ttf")


def digit_photo(digit: int, seed: int) -> np.ndarray:
    """(96, 96) uint8: a grey scan of ``digit`` in dark ink (10-70) on light paper (200-250): a seeded font of
    :data:`DIGIT_FONTS` at 55-75 % of the side, stroke width 1-3, shifted up to 6 px, turned up to 12 degrees, with
    sensor noise (sigma 6)."""
    from PIL import Image, ImageDraw, ImageFont

    rng = np.random.default_rng(seed)
    font = ImageFont.truetype(_matplotlib_font(DIGIT_FONTS[int(rng.integers(len(DIGIT_FONTS)))]),
                              int(PHOTO_SIDE * rng.uniform(0.55, 0.75)))
    paper, ink = int(rng.integers(200, 251)), int(rng.integers(10, 71))
    image = Image.new("L", (PHOTO_SIDE, PHOTO_SIDE), paper)
    centre = (PHOTO_SIDE / 2 + rng.uniform(-6, 6), PHOTO_SIDE / 2 + rng.uniform(-6, 6))
    ImageDraw.Draw(image).text(centre, str(digit), font=font, fill=ink, anchor="mm",
                               stroke_width=int(rng.integers(1, 4)), stroke_fill=ink)
    image = image.rotate(rng.uniform(-12, 12), resample=Image.Resampling.BILINEAR, fillcolor=paper)
    scan = np.asarray(image, np.float64) + rng.normal(0, 6, (PHOTO_SIDE, PHOTO_SIDE))
    return np.clip(np.round(scan), 0, 255).astype(np.uint8)


def _transforms() -> dict[str, Any]:
    """Stands in for ``torchvision.transforms`` (``Compose``, ``Resize``, ``ToTensor``, ``Normalize``) on a PIL
    image, as torchvision does them: Pillow's bilinear (anti-aliased) resize, HWC uint8 to CHW float in [0, 1],
    per-channel ``(x - mean) / std``."""
    import torch
    from PIL import Image

    class Compose:
        def __init__(self, steps: list[Any]) -> None:
            self.steps = steps

        def __call__(self, value: Any) -> Any:
            for step in self.steps:
                value = step(value)
            return value

    class Resize:
        def __init__(self, size: tuple[int, int]) -> None:
            self.size = size

        def __call__(self, image: Any) -> Any:
            return image.resize((self.size[1], self.size[0]), Image.Resampling.BILINEAR)

    class ToTensor:
        def __call__(self, image: Any) -> Any:
            array = np.asarray(image, np.float32) / 255.0
            return torch.from_numpy(array[None] if array.ndim == 2 else np.ascontiguousarray(array.transpose(2, 0, 1)))

    class Normalize:
        def __init__(self, mean: tuple[float, ...], std: tuple[float, ...]) -> None:
            self.mean, self.std = torch.tensor(mean)[:, None, None], torch.tensor(std)[:, None, None]

        def __call__(self, tensor: Any) -> Any:
            return (tensor - self.mean) / self.std

    return {"Compose": Compose, "Resize": Resize, "ToTensor": ToTensor, "Normalize": Normalize}


@contextmanager
def digit_modules() -> Iterator[dict[str, Any]]:
    """The wheel's ``digit_recognizer.model`` and ``digit_recognizer.recognizer`` (the package's ``__init__`` does
    not run), torchvision standing in by :func:`_transforms`; ``sys.modules`` is restored on exit."""
    transforms = _transforms()
    stand_ins = {"torchvision": {}, "torchvision.transforms": transforms}
    with standing_in(DIGIT_RECOGNIZER, ("digit_recognizer.model", "digit_recognizer.recognizer"), stand_ins):
        sys.modules["torchvision"].transforms = sys.modules["torchvision.transforms"]  # type: ignore[attr-defined]
        yield {name: sys.modules[f"digit_recognizer.{name}"] for name in ("model", "recognizer")}


class _DigitRecorder:
    """Stands in for the recognizer's ``CNN``: keeps each batch it is called on, answers zero logits."""

    def __init__(self) -> None:
        self.fed: list[np.ndarray] = []

    def __call__(self, tensor: Any) -> Any:
        import torch

        self.fed.append(tensor.detach().cpu().numpy().copy())
        return torch.zeros((tensor.shape[0], 10))


@contextmanager
def digit_recognizer() -> Iterator[Any]:
    """``feed(photo) -> (1, 1, 28, 28) float32``: what the package's ``DigitRecognizer.predict(photo)`` feeds its
    network, the network a recorder. ``feed.recognizer`` is the package's recognizer with its real network."""
    with digit_modules() as modules:
        recognizer = modules["recognizer"].DigitRecognizer(model_path=fetch.model_file(DIGIT_RECOGNIZER, _DIGIT_PTH),
                                                           device="cpu")
        real, recorder = recognizer.model, _DigitRecorder()

        def feed(photo: np.ndarray) -> np.ndarray:
            recognizer.model = recorder
            try:
                recognizer.predict(photo)
            finally:
                recognizer.model = real
            (fed,) = recorder.fed
            recorder.fed.clear()
            return fed.astype(np.float32)

        feed.recognizer = recognizer  # type: ignore[attr-defined]
        yield feed


def digit_images(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """image (N, 1, 28, 28) float32: scans of the digits 0-9 in turn, as the package's ``predict`` feeds them."""
    rng = np.random.default_rng(seed)
    with digit_recognizer() as feed:
        rows = [feed(digit_photo(k % 10, int(rng.integers(1 << 30))))[0] for k in range(count)]
    return {"image": np.stack(rows)}


def digit_network() -> Any:
    """The package's ``CNN`` with the wheel's state dict, in eval mode (as ``DigitRecognizer`` loads it)."""
    import torch

    with digit_modules() as modules:
        network = modules["model"].CNN()
    network.load_state_dict(torch.load(fetch.model_file(DIGIT_RECOGNIZER, _DIGIT_PTH), map_location="cpu"))
    return network.eval()


def export_digits(path: Path) -> None:
    """``torch.onnx.export`` of :func:`digit_network` (TorchScript exporter, opset 17, static shapes), its input
    named ``image`` and its output ``logits``."""
    import torch

    with torch.no_grad():
        torch.onnx.export(digit_network(), (torch.zeros((1, 1, DIGIT_SIDE, DIGIT_SIDE)),), str(path),
                          opset_version=OPSET, dynamo=False, do_constant_folding=True, input_names=["image"],
                          output_names=["logits"])


#: The package's board side after resizing (``process_image``'s ``downsample_size``), its squares and its classes.
BOARD_SIDE = 200

TILE_SIDE = BOARD_SIDE // 8

PIECE_SYMBOLS = "prbnkqPRBNKQ"

EMPTY = 12

#: The synthetic boards: side in pixels, light and dark square colours, the share of occupied squares.
PHOTO_BOARD_SIDE = 400

BOARD_PALETTES = (((240, 217, 181), (181, 136, 99)), ((238, 238, 210), (118, 150, 86)),
                  ((222, 227, 230), (140, 162, 173)), ((255, 206, 158), (209, 139, 71)),
                  ((232, 235, 239), (125, 135, 150)))

OCCUPIED = 0.35

#: DejaVu Sans's filled chess glyphs (U+265A-265F); a white piece's outline glyph is 6 code points lower.
_GLYPHS = {"k": "\u265a", "q": "\u265b", "r": "\u265c", "b": "\u265d", "n": "\u265e", "p": "\u265f"}

_BOARD_FONTS = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansMono.ttf")


def chess_board(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(board (400, 400, 3) uint8 RGB, pieces (8, 8) int)``: a board in a seeded palette of
    :data:`BOARD_PALETTES`, each square holding a seeded piece (index into :data:`PIECE_SYMBOLS`) with probability
    :data:`OCCUPIED`, else :data:`EMPTY`; pieces are DejaVu Sans glyphs at 100-115 % of a square, black ones filled
    dark, white ones filled white under their outline glyph."""
    from PIL import Image, ImageDraw, ImageFont

    rng = np.random.default_rng(seed)
    light, dark = BOARD_PALETTES[int(rng.integers(len(BOARD_PALETTES)))]
    square = PHOTO_BOARD_SIDE // 8
    font = ImageFont.truetype(_matplotlib_font(_BOARD_FONTS[int(rng.integers(len(_BOARD_FONTS)))]),
                              int(square * rng.uniform(1.0, 1.15)))
    image = Image.new("RGB", (PHOTO_BOARD_SIDE, PHOTO_BOARD_SIDE), light)
    draw = ImageDraw.Draw(image)
    pieces = np.full((8, 8), EMPTY)
    for row in range(8):
        for col in range(8):
            if (row + col) % 2:
                draw.rectangle([col * square, row * square, (col + 1) * square - 1, (row + 1) * square - 1], fill=dark)
            if rng.random() >= OCCUPIED:
                continue
            pieces[row, col] = k = int(rng.integers(len(PIECE_SYMBOLS)))
            symbol = PIECE_SYMBOLS[k]
            glyph, white = _GLYPHS[symbol.lower()], symbol.isupper()
            centre = (col * square + square / 2, row * square + square / 2)
            draw.text(centre, glyph, font=font, fill=(250, 250, 250) if white else (20, 20, 20), anchor="mm",
                      stroke_width=max(1, square // 30), stroke_fill=(0, 0, 0) if white else (20, 20, 20))
            if white:
                draw.text(centre, chr(ord(glyph) - 6), font=font, fill=(0, 0, 0), anchor="mm")
    return np.asarray(image), pieces


class _ChessRecorder:
    """Stands in for the detector's Keras model: keeps each batch ``predict`` is called on, answers uniform
    probabilities."""

    def __init__(self) -> None:
        self.fed: list[np.ndarray] = []

    def predict(self, tiles: np.ndarray, verbose: int = 0) -> np.ndarray:
        self.fed.append(np.array(tiles, copy=True))
        return np.full((len(tiles), len(PIECE_SYMBOLS) + 1), 1 / (len(PIECE_SYMBOLS) + 1), np.float32)


@contextmanager
def chess_detector() -> Iterator[Any]:
    """``feed(board) -> (64, 25, 25, 3) float32``: what the package's ``ChessFENDetector.predict_fen(path)`` feeds
    its model for ``board`` written as a PNG (row by row from the top left), the model a recorder
    (``tensorflow.keras.models.load_model`` stands in and returns it). ``feed.module`` is the package's ``detector``
    module."""
    from PIL import Image

    recorder = _ChessRecorder()
    stand_ins: dict[str, dict[str, Any]] = {"tensorflow": {}, "tensorflow.keras": {},
                                            "tensorflow.keras.models": {"load_model": lambda path: recorder}}
    with standing_in(CHESS_FEN, ("chess_fen_detector.detector",), stand_ins):
        module = sys.modules["chess_fen_detector.detector"]
        detector = module.ChessFENDetector(model_path=str(fetch.model_file(CHESS_FEN, _CHESS_KERAS)))
        with tempfile.TemporaryDirectory() as folder:

            def feed(board: np.ndarray) -> np.ndarray:
                path = Path(folder) / "board.png"
                Image.fromarray(board).save(path)
                detector.predict_fen(str(path))
                (fed,) = recorder.fed
                recorder.fed.clear()
                return fed.astype(np.float32)

            feed.module = module  # type: ignore[attr-defined]
            yield feed


def chess_squares(seed: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``(tiles (count, 25, 25, 3) float32, pieces (count,) int)``: squares of seeded boards as the package feeds
    them, two occupied for every empty one, in a seeded order."""
    rng = np.random.default_rng(seed)
    tiles: list[np.ndarray] = []
    pieces: list[int] = []
    with chess_detector() as feed:
        while len(tiles) < count:
            board, truth = chess_board(int(rng.integers(1 << 30)))
            fed, truth = feed(board), truth.ravel()
            occupied, empty = np.flatnonzero(truth != EMPTY), np.flatnonzero(truth == EMPTY)
            take = min(len(occupied), 2 * len(empty), 12)
            chosen = [*rng.choice(occupied, take, replace=False), *rng.choice(empty, take // 2, replace=False)]
            for index in rng.permutation(chosen):
                tiles.append(fed[index])
                pieces.append(int(truth[index]))
    return np.stack(tiles[:count]), np.array(pieces[:count])


def chess_tiles(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """tile (N, 25, 25, 3) float32: squares of synthetic boards, as the package's ``predict_fen`` feeds them."""
    return {"tile": chess_squares(seed, count)[0]}


def chess_network() -> Any:
    """The wheel's ``chess_best_model_mini.keras`` loaded by Keras (its TensorFlow backend)."""
    import keras

    return keras.models.load_model(fetch.model_file(CHESS_FEN, _CHESS_KERAS))


def export_chess(path: Path) -> None:
    """``model.export(format="onnx")`` of :func:`chess_network` (tf2onnx, opset 17) at one square, (1, 25, 25, 3),
    its input named ``tile`` and its output ``piece_probs``."""
    import onnx
    import tensorflow as tf

    spec = tf.TensorSpec((1, TILE_SIDE, TILE_SIDE, 3), tf.float32, name="tile")
    chess_network().export(str(path), format="onnx", input_signature=[spec], opset_version=OPSET, verbose=False)
    graph = onnx.load(str(path))
    (output,) = graph.graph.output
    for node in graph.graph.node:
        node.output[:] = ["piece_probs" if name == output.name else name for name in node.output]
    output.name = "piece_probs"
    onnx.checker.check_model(graph)
    onnx.save(graph, str(path))


_npz = zoo._npz  # noqa: SLF001


MODELS: tuple[zoo.ZooModel, ...] = (
    Exported(
        "mnist_digit_cnn",
        DIGIT_RECOGNIZER,
        _DIGIT_PTH,
        "digit-recognizer-py's handwritten digit CNN, a PyTorch state dict built by the package's CNN and exported "
        "by torch.onnx at opset 17: three 3x3 Conv + Relu + 2x2 MaxPool, Flatten and two Gemm; (1, 1, 28, 28) "
        "MNIST-normalized digit scans, as the package's DigitRecognizer.predict feeds them",
        _npz(digit_images),
        {"input_shapes": {"image": [1, 1, DIGIT_SIDE, DIGIT_SIDE]}},
        export=export_digits,
        tools=torch_tools,
    ),
    Exported(
        "chess_square_classifier",
        CHESS_FEN,
        _CHESS_KERAS,
        "chess-fen-detector's chessboard square classifier, a Keras 3 Sequential exported by model.export (tf2onnx, "
        "opset 17) at one square: three valid 3x3 Conv + Relu, Flatten, Dense + Relu and a 13-way softmax; "
        "(1, 25, 25, 3) NHWC squares of synthetic boards, as the package's predict_fen feeds them",
        _npz(chess_tiles),
        {"input_shapes": {"tile": [1, TILE_SIDE, TILE_SIDE, 3]}},
        export=export_chess,
        tools=keras_tools,
    ),
)
