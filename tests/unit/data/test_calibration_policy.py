"""Constant calibration data: refused when every input is constant, allowed for one constant input (a state)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset, check_calibration_varies
from edgepipe.errors import DataError
from edgepipe.tensors import Signature, TensorSpec

SIG = Signature(inputs=(TensorSpec("audio", (1, 16), np.dtype(np.float32)),
                        TensorSpec("state", (1, 4), np.dtype(np.float32))), outputs=())


def _dataset(audio: np.ndarray, state: np.ndarray) -> Dataset:
    return Dataset(path=Path("calib.npz"), inputs=(audio, state), labels=None, sha256="")


def test_every_input_constant_is_refused() -> None:
    with pytest.raises(DataError, match="calib.npz: calibration data is constant.*audio, state"):
        check_calibration_varies(_dataset(np.zeros((8, 16), np.float32), np.zeros((8, 4), np.float32)), SIG)


def test_one_constant_state_beside_real_audio_is_fine() -> None:
    audio = np.random.default_rng(0).random((8, 16), dtype=np.float32)
    check_calibration_varies(_dataset(audio, np.zeros((8, 4), np.float32)), SIG)
