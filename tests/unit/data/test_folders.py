"""Data the way users keep it (edgepipe.data.folders): class sub-folders, a labels CSV, folders of .wav files.

Real photographs (scikit-image's samples) and real-rate audio written with the standard
library's ``wave``; every test reads them through ``load_dataset`` as a build does.
"""

from __future__ import annotations

import shutil
import wave
from pathlib import Path

import numpy as np
import pytest

from edgepipe.config import PreprocessConfig
from edgepipe.data.dataset import load_dataset
from edgepipe.data.preprocess import image_spec_for, load_image_folder
from edgepipe.errors import DataError
from edgepipe.tensors import Signature, TensorSpec
from tests.fixtures.images import write_sample_images

IMAGE = Signature(inputs=(TensorSpec("image", (1, 3, 32, 40), np.dtype(np.float32)),),
                  outputs=(TensorSpec("logits", (1, 3), np.dtype(np.float32)),))
AUDIO = Signature(inputs=(TensorSpec("input", (1, 1600), np.dtype(np.float32)),),
                  outputs=(TensorSpec("out", (1, 2), np.dtype(np.float32)),))
PRE = PreprocessConfig()


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_images(tmp_path_factory.mktemp("photos"))


def _classes(photos: Path, root: Path, layout: dict[str, list[str]]) -> Path:
    for label, names in layout.items():
        (root / label).mkdir(parents=True)
        for name in names:
            shutil.copy(photos / f"{name}.png", root / label / f"{name}.png")
    return root


def test_class_subfolders_give_labels_in_numeric_folder_order(photos: Path, tmp_path: Path) -> None:
    root = _classes(photos, tmp_path / "eval", {"10": ["coins", "moon"], "2": ["cat", "chelsea", "coffee"],
                                                "0": ["astronaut"]})
    data = load_dataset(root, IMAGE, role="evaluation", num_classes=3, preprocess=PRE)
    assert data.inputs[0].shape == (6, 3, 32, 40)
    # "0" < "2" < "10" numerically: class ids 0, 1, 2; files taken round-robin over the classes.
    assert sorted(data.labels.tolist()) == [0, 1, 1, 1, 2, 2]
    assert data.labels.tolist() == [0, 1, 2, 1, 2, 1]


def test_class_subfolders_with_names_sort_as_text_and_limit_keeps_every_class(photos: Path, tmp_path: Path) -> None:
    root = _classes(photos, tmp_path / "eval", {"dog": ["coins", "moon", "clock"], "cat": ["cat", "chelsea"]})
    data = load_dataset(root, IMAGE, role="evaluation", preprocess=PRE.model_copy(update={"limit": 2}))
    assert data.labels.tolist() == [0, 1]  # cat=0, dog=1: one of each, not two of the first class


def test_class_pixels_are_the_images_own(photos: Path, tmp_path: Path) -> None:
    root = _classes(photos, tmp_path / "eval", {"a": ["astronaut"], "b": ["camera"]})
    data = load_dataset(root, IMAGE, role="evaluation", preprocess=PRE)
    flat = load_dataset(photos, IMAGE, role="calibration", preprocess=PRE.model_copy(update={"limit": 1}))
    np.testing.assert_array_equal(data.inputs[0][0], flat.inputs[0][0])  # astronaut.png sorts first in both
    camera = data.inputs[0][1]
    assert np.allclose(camera[0], camera[1]) and np.allclose(camera[1], camera[2])  # grey photo stacked to RGB


def test_labels_csv_beside_the_images(photos: Path, tmp_path: Path) -> None:
    folder = tmp_path / "eval"
    shutil.copytree(photos, folder)
    (folder / "labels.csv").write_text("file,label\ncoffee.png,2\nastronaut.png,0\ncat.png,1\n", encoding="utf-8")
    data = load_dataset(folder, IMAGE, role="evaluation", num_classes=3, preprocess=PRE)
    assert data.labels.tolist() == [2, 0, 1] and len(data) == 3  # CSV order, only the listed files
    by_file = load_dataset(folder / "labels.csv", IMAGE, role="evaluation", preprocess=PRE)
    np.testing.assert_array_equal(by_file.inputs[0], data.inputs[0])
    before = data.sha256
    shutil.copy(photos / "moon.png", folder / "coffee.png")  # same CSV, other pixels: a new content hash
    assert load_dataset(folder, IMAGE, role="evaluation", preprocess=PRE).sha256 != before


@pytest.mark.parametrize(("text", "message"), [
    ("name,label\ncat.png,1\n", "file,label"),
    ("file,label\ncat.png,tabby\n", "not an integer class id"),
    ("file,label\nmissing.png,1\n", "not an image or .wav file"),
    ("file,label\n", "no rows"),
])
def test_bad_labels_csv_is_one_line_naming_the_problem(photos: Path, tmp_path: Path, text: str, message: str) -> None:
    shutil.copy(photos / "cat.png", tmp_path / "cat.png")
    (tmp_path / "labels.csv").write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=message):
        load_dataset(tmp_path / "labels.csv", IMAGE, role="evaluation", preprocess=PRE)


def test_csv_labels_outside_the_model_classes_are_refused(photos: Path, tmp_path: Path) -> None:
    shutil.copy(photos / "cat.png", tmp_path / "cat.png")
    (tmp_path / "labels.csv").write_text("file,label\ncat.png,7\n", encoding="utf-8")
    with pytest.raises(DataError, match="outside the model's 3 classes"):
        load_dataset(tmp_path / "labels.csv", IMAGE, role="evaluation", num_classes=3, preprocess=PRE)


def test_folder_for_a_two_input_model_is_refused(photos: Path) -> None:
    two = Signature(inputs=IMAGE.inputs + (TensorSpec("state", (1, 8), np.dtype(np.float32)),), outputs=())
    with pytest.raises(DataError, match="a folder feeds one input, the model has 2"):
        load_dataset(photos, two, role="calibration", preprocess=PRE)


def _write_wav(path: Path, signal: np.ndarray, rate: int, width: int, channels: int = 1) -> Path:
    frames = np.repeat(signal[:, None], channels, axis=1)
    if width == 1:
        raw = (np.clip(frames, -1, 1) * 127 + 128).astype(np.uint8).tobytes()
    elif width == 3:
        ints = (np.clip(frames, -1, 1) * (2**23 - 1)).astype("<i4").reshape(-1)
        raw = np.stack([ints & 0xFF, (ints >> 8) & 0xFF, (ints >> 16) & 0xFF], axis=1).astype(np.uint8).tobytes()
    else:
        raw = (np.clip(frames, -1, 1) * (2 ** (8 * width - 1) - 1)).astype(f"<i{width}").tobytes()
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(channels)
        handle.setsampwidth(width)
        handle.setframerate(rate)
        handle.writeframes(raw)
    return path


def _peak_hz(window: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(window * np.hanning(len(window))))
    return float(np.fft.rfftfreq(len(window), 1 / rate)[np.argmax(spectrum)])


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_wav_folder_is_resampled_and_cut_into_input_windows(tmp_path: Path, width: int) -> None:
    rate, seconds = 44_100, 0.5
    t = np.arange(int(rate * seconds)) / rate
    _write_wav(tmp_path / "tone.wav", 0.5 * np.sin(2 * np.pi * 440 * t), rate, width, channels=2)
    data = load_dataset(tmp_path, AUDIO, role="calibration", preprocess=PRE.model_copy(update={"sample_rate": 16_000}))
    windows = data.inputs[0]
    assert windows.shape == (5, 1600) and windows.dtype == np.float32  # 8000 samples at 16 kHz: five windows
    assert abs(_peak_hz(windows[2], 16_000) - 440) < 16_000 / 1600  # within one FFT bin of 10 Hz
    assert 0.45 < np.abs(windows[2]).max() < 0.55


def test_resampling_down_removes_what_the_new_rate_cannot_hold(tmp_path: Path) -> None:
    rate = 48_000
    t = np.arange(rate) / rate
    _write_wav(tmp_path / "high.wav", 0.5 * np.sin(2 * np.pi * 12_000 * t), rate, 2)  # above 8 kHz Nyquist
    data = load_dataset(tmp_path, AUDIO, role="calibration", preprocess=PRE.model_copy(update={"sample_rate": 16_000}))
    assert np.abs(data.inputs[0][3:7]).max() < 0.05  # filtered, not aliased to 4 kHz


def test_wav_class_folders_label_every_window(tmp_path: Path) -> None:
    t = np.arange(16_000) / 16_000
    for label, hz in (("speech", 300), ("tone", 1000)):
        (tmp_path / label).mkdir()
        _write_wav(tmp_path / label / "a.wav", 0.3 * np.sin(2 * np.pi * hz * t[:4000]), 16_000, 2)
    data = load_dataset(tmp_path, AUDIO, role="evaluation", num_classes=2, preprocess=PRE)
    assert data.labels.tolist() == [0, 0, 1, 1]  # 4000 samples: two windows of 1600 per file, partial one dropped


def test_short_wav_is_zero_padded_and_broken_wav_is_refused(tmp_path: Path) -> None:
    _write_wav(tmp_path / "short.wav", np.full(100, 0.25), 16_000, 2)
    data = load_dataset(tmp_path, AUDIO, role="calibration", preprocess=PRE)
    assert data.inputs[0].shape == (1, 1600) and np.all(data.inputs[0][0, 100:] == 0)
    (tmp_path / "broken.wav").write_bytes(b"RIFF0000WAVEjunk")
    with pytest.raises(DataError, match="cannot read .wav file"):
        load_dataset(tmp_path, AUDIO, role="calibration", preprocess=PRE)


def test_flat_image_folder_reads_as_load_image_folder_does(photos: Path) -> None:
    data = load_dataset(photos, IMAGE, role="calibration", preprocess=PRE.model_copy(update={"mean": [0.5]}))
    direct = load_image_folder(photos, image_spec_for(IMAGE.inputs[0], PRE.model_copy(update={"mean": [0.5]})))
    np.testing.assert_array_equal(data.inputs[0], direct)
    assert data.labels is None and len(data) == 16
