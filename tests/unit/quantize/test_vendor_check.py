"""A mixed-precision candidate for a target without CPU fallback goes through its vendor compiler (real Vela).

The model is made here: a convolution, a HARD_SWISH and another convolution. ai-edge-quantizer's int16-activation
recipe leaves the HARD_SWISH in float, and Vela 5.2.0 refuses a float HARD_SWISH ("IFM has to be 8bit"), while it
compiles the int8 twin whole.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.artifacts import Artifact
from edgepipe.config import BuildConfig
from edgepipe.data.dataset import Dataset
from edgepipe.quantize.settings import ladder_settings
from edgepipe.quantize.vendor_check import VendorCheck, compiles_candidates
from edgepipe.targets import load_profile
from edgepipe.vendors.vela import Vela

pytestmark = pytest.mark.skipif(not Vela().available(), reason="Vela is installed with pip install 'edgepipe[vela]'")


def _hard_swish_tflite(folder: Path) -> tuple[Path, Dataset]:
    import tensorflow as tf  # heavy optional dependency

    inputs = tf.keras.Input((16, 16, 3), batch_size=1)
    x = tf.keras.layers.Conv2D(8, 3, padding="same")(inputs)
    x = tf.keras.layers.Activation("hard_swish")(x)
    model = tf.keras.Model(inputs, tf.keras.layers.Conv2D(4, 3, padding="same")(x))
    path = folder / "model.tflite"
    path.write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    data = Dataset(folder / "calibration.npz", (np.random.default_rng(0).random((8, 16, 16, 3), np.float32),), None,
                   "0" * 64)
    return path, data


def test_only_targets_without_cpu_fallback_compile_candidates() -> None:
    assert compiles_candidates(load_profile("ethos-u55")) == "vela --accelerator-config ethos-u55-128"
    assert compiles_candidates(load_profile("host-cpu")) is None and compiles_candidates(load_profile("rk3588")) is None
    u55, u85 = (ladder_settings(BuildConfig(), (load_profile(t),)) for t in ("ethos-u55", "ethos-u85"))
    assert u55.compile_with != u85.compile_with  # compiled differently: never one ladder for both


def test_vela_refuses_the_int16_candidate_with_a_float_hard_swish_and_takes_the_int8_one(tmp_path: Path) -> None:
    from edgepipe.quantize.tflite_aiedge import quantize_float_tflite

    source, data = _hard_swish_tflite(tmp_path)
    int8 = Artifact(quantize_float_tflite(source, tmp_path / "int8.tflite", data, tmp_path), "tflite", "int8")
    wide = Artifact(quantize_float_tflite(source, tmp_path / "a16w8.tflite", data, tmp_path, activation_bits=16),
                    "tflite", "mixed")
    check = VendorCheck.of((load_profile("ethos-u55"), load_profile("host-cpu")), tmp_path / "vendor")
    assert check is not None and [t.name for t in check.targets] == ["ethos-u55"]
    [refused] = check(wide, int8)
    assert refused.refused and refused.status == "compile_failed" and "IFM has to be 8bit" in refused.detail
    assert refused.line(wide).startswith("ethos-u55: vela --accelerator-config ethos-u55-128 compile_failed")
    [taken] = check(Artifact(int8.path, "tflite", "mixed"), int8)
    assert not taken.refused and taken.status == "compiled" and taken.cpu_ops == taken.int8_cpu_ops == 0
