"""Held-out batch 8 (tests/thirdparty/heldout_batch8.py): registered for every target and held out, its model
files come from the pinned wheels, and its data are deterministic and shaped as each model reads them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch8 import BATCH8_MODELS

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]


def test_batch8_is_registered_held_out_on_every_target() -> None:
    """Held out everywhere, but the personalized DNSMOS on the Rockchip SoCs: its first run's one miss (the Div of
    its log10) was then used to fix their profiles."""
    for model in BATCH8_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        tuned = ["rk3588", "rk3576"] if model.name == "pdnsmos_p835" else []
        assert len(LISTED[model.name]["targets"]) == 5 and LISTED[model.name].get("tuned_on", []) == tuned


@pytest.mark.parametrize("name", ["oww_weather", "pdnsmos_p835"])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    """The weather classifier reads 22 embeddings (not hey_jarvis's 16), the personalized DNSMOS 9.01 s of audio."""
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    (spec,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).get_inputs()
    (value,) = first.values()
    assert list(first) == [spec.name] and value.shape[1:] == {"oww_weather": (22, 96),
                                                                "pdnsmos_p835": (144160,)}[name]
    assert np.array_equal(value, again[spec.name]) and np.isfinite(value).all()
