"""An int8 DIV that LiteRT refuses at run time (its divisor quantizes to its zero point) is repaired, never exit 1.

The float TFLite divides by ``relu(x0) + 1e-3``: on calibration samples where ``x0 <= 0`` the divisor is 1e-3,
below half the int8 scale of its [0, max] range, so it quantizes to the zero point and LiteRT's int8 DIV stops
("div.cc ... data[i] != zero_point ... (DIV) failed to invoke"), as a normalization by a range that is zero on a
silent clip does in a real audio model. The build keeps that DIV in float and ends with a verdict per target.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow


def ratio_tflite(folder: Path) -> Path:
    """A float TFLite with three outputs and a DIV by a near-zero feature map, its data and edgepipe.toml."""
    import tensorflow as tf  # heavy optional dependency: the TFLite converter writes the test model

    class Ratio(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, 16], tf.float32)])
        def __call__(self, x):  # type: ignore[no-untyped-def]
            ratio = x[:, 1:9] / (tf.nn.relu(x[:, :1]) + 1e-3)
            return {"a": tf.nn.tanh(ratio), "b": ratio * 2.0, "c": tf.reduce_mean(x, axis=1, keepdims=True)}

    module = Ratio()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([module.__call__.get_concrete_function()], module)
    (folder / "ratio.tflite").write_bytes(converter.convert())
    rng = np.random.default_rng(0)
    calibration = rng.standard_normal((16, 1, 16)).astype(np.float32)
    calibration[0, 0, 0] = 1.0  # the first sample divides by a positive divisor: one sample alone hides the refusal
    np.savez(folder / "calib.npz", x=calibration)
    np.savez(folder / "eval.npz", x=rng.standard_normal((16, 1, 16)).astype(np.float32))
    (folder / "edgepipe.toml").write_text('model = "ratio.tflite"\n[data]\ncalibration = "calib.npz"\n'
                                          'evaluation = "eval.npz"\n')
    return folder / "ratio.tflite"


def test_a_refused_int8_div_is_kept_float_and_the_build_ends_with_verdicts(tmp_path: Path) -> None:
    ratio_tflite(tmp_path)
    exe = Path(sys.executable).with_name("edgepipe")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    proc = subprocess.run([str(exe), "build", "-t", "ethos-u55", "-t", "host-cpu", "--no-cache", "-q"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode in (0, 2), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "failed to invoke" not in proc.stderr
    for target in ("ethos-u55", "host-cpu"):
        report = json.loads((tmp_path / "build" / "ratio" / target / "report.json").read_text())
        assert report["verdict"] in ("pass", "fail", "not proven")
        stage = next(s for s in report["stages"] if s["name"] == "quantize-tflite")
        assert "DIV kept in float" in stage["detail"] and "zero_point" in stage["detail"]
        assert not any(f["tool"] == "LiteRT" for f in report["failures"]), report["failures"]
    from edgepipe.runtimes import open_runner

    with open_runner(tmp_path / "build" / "ratio" / "ethos-u55" / "model_int8.tflite") as runner:
        for sample in np.load(tmp_path / "eval.npz")["x"]:
            assert all(np.isfinite(o).all() for o in runner.infer([sample]))


def test_an_artifact_its_runtime_refuses_loses_only_its_own_latency(tmp_path: Path) -> None:
    from edgepipe.artifacts import Artifact
    from edgepipe.config import load_config
    from edgepipe.quantize.tflite_aiedge import quantize_float_tflite
    from edgepipe.stage_log import StageLog
    from edgepipe.stages.inputs import validate_inputs
    from edgepipe.stages.latency import latency_stage

    model = ratio_tflite(tmp_path)
    np.savez(tmp_path / "eval.npz", x=np.full((2, 1, 16), -1.0, np.float32))  # x0 < 0: the int8 DIV refuses
    config = load_config(tmp_path / "edgepipe.toml", {"latency": {"runs": 3, "warmup": 1}})
    stages = StageLog()
    inputs = validate_inputs(config, stages)
    assert inputs.calibration is not None
    refused = quantize_float_tflite(model, tmp_path / "model_int8.tflite", inputs.calibration, tmp_path)
    timed = latency_stage(inputs, [Artifact(model, "tflite", "fp32"), Artifact(refused, "tflite", "int8")], config,
                          stages)
    assert list(timed) == ["ratio.tflite"]
    assert [(f.stage, f.artifact) for f in stages.failures] == [("latency", "model_int8.tflite")]
