"""Held-out batch 10 (tests/thirdparty/heldout_batch10.py): registered and held out on every target, its data made
by the packages' own pre-processing, deterministic and shaped as each model reads them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.eeg import background, with_seizure, with_spindles
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch10 import BATCH10_MODELS

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]


#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED = {"eeg_spindles": ["rk3588", "mobile-npu"], "eeg_seizure": ["ethos-u55", "rk3588"], "captcha_crnn": ["rk3588"],
         "leader_minutiae": ["rk3588", "rk3576"]}


def test_batch10_is_registered_held_out_on_every_target() -> None:
    for model in BATCH10_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


def test_eeg_events_carry_their_rhythms() -> None:
    """A spindle adds power at 11-16 Hz, a seizure at its 3 Hz discharge rate, over the 1/f background."""
    rng = np.random.default_rng(0)
    quiet = background(30, 250.0, rng)

    def band(signal: np.ndarray, lo: float, hi: float) -> float:
        freqs = np.fft.rfftfreq(len(signal), 1 / 250.0)
        return float((np.abs(np.fft.rfft(signal)) ** 2)[(freqs >= lo) & (freqs <= hi)].sum())

    assert band(with_spindles(quiet, 250.0, rng, 5), 11, 16) > 2 * band(quiet, 11, 16)
    assert band(with_seizure(quiet, 250.0, rng), 2, 4) > 2 * band(quiet, 2, 4)


@pytest.mark.parametrize("name", [model.name for model in BATCH10_MODELS])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(spec.name for spec in session.get_inputs()) == sorted(shapes)
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:] and np.array_equal(value, again[key])
    outputs = session.run(None, {key: value[:1] for key, value in first.items()})
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")
