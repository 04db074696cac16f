"""The fallback ladder on the two real reference models, through the real CLI and runtimes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from edgepipe.config import PROJECT_ROOT
from edgepipe.quantize.equalization import aimet_missing
from edgepipe.quantize.ladder_context import selection_rank
from edgepipe.quantize.report import SelectionScore
from tests.conftest import run_cli

NOBN = PROJECT_ROOT / "models" / "digits_nobn"
DIGITS = PROJECT_ROOT / "calib" / "digits"


def _config(folder: Path, *, train: bool, steps: str = '["ptq", "calibration", "mixed", "qat"]',
            methods: str = '["minmax", "percentile", "entropy"]') -> Path:
    lines = [f'model = "{NOBN / "digits_nobn.keras"}"', 'output = "out"', "[data]"]
    splits = ["calibration", "selection", "evaluation"] + (["train"] if train else [])
    lines += [f'{name} = "{DIGITS / f"{name}.npz"}"' for name in splits]
    lines += ["[quantization]", 'granularity = "per-tensor"', f"steps = {steps}", f"methods = {methods}"]
    path = folder / "edgepipe.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _report(folder: Path) -> dict:
    return json.loads((folder / "out" / "digits_nobn" / "host-cpu" / "report.json").read_text())


@pytest.fixture(scope="module")
def nobn_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The bundled ladder demo as README shows it: ``edgepipe build --config models/digits_nobn/edgepipe.toml``."""
    folder = tmp_path_factory.mktemp("nobn")
    return run_cli("build", "-q", "--config", str(NOBN / "edgepipe.toml"), "-o", str(folder / "out"),
                   cwd=folder), folder


@pytest.mark.slow
def test_nobn_ladder_decides_on_the_selection_split_only(nobn_build) -> None:
    """Every step runs because the one before changed too many top-1s on the *selection* split; the evaluation
    drops are recorded per step but never decide. On digits_nobn plain per-tensor PTQ changes 4 of the 197
    selection top-1s (2.03 points) while its selection accuracy equals the float model's (drop 0.00, so a drop
    rule would stop at PTQ), and loses 3.75 points on evaluation. Cross-layer equalization (with the ``aimet``
    extra; skipped without it) makes the ONNX hold fully int8, but the TFLite is step (b)'s, so the step misses.
    Mixed precision holds (int16 activations where the unequal channels are read), the ladder stops there, and the
    result holds on evaluation: the build passes.
    """
    proc, folder = nobn_build
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = _report(folder)
    ladder = report["quantization"]
    assert ladder["metric"] == "top1" and ladder["decided_on"].startswith("selection split, 197 samples")
    assert ladder["threshold_points"] == 1.0
    steps = {s["step"]: s for s in ladder["steps"]}
    assert list(steps) == ["ptq", "calibration", "equalize", "nncf", "mixed"] and not ladder["unfinished"]
    ran = [s for s in ladder["steps"] if s["status"] != "skipped"]  # equalize without AIMET-ONNX; nncf: no change
    assert ladder["met"] and ladder["final_step"] == "mixed" and steps["mixed"]["status"] == "met"
    assert steps["ptq"]["recipe"] == {"onnx": "minmax/per-tensor/int8", "tflite": "minmax/per-tensor/int8"}
    assert min(steps["ptq"]["drop_points"].values()) > 3.0  # evaluation: recorded, not decided on
    for sel in steps["ptq"]["selection"].values():  # flips decide, not the (cancelling) selection drop
        assert sel["drop_points"] <= 1.0 < sel["flips_points"] and not sel["met"]
    assert all(sel["flips_points"] is not None for s in ladder["steps"] for sel in s["selection"].values())
    for before, after in zip(ran, ran[1:]):
        assert after["why"].startswith(f"{before['step']} missed on the selection split")
    ranks = {s["step"]: selection_rank([SelectionScore(**sel) for sel in s["selection"].values()]) for s in ran}
    assert ranks[ladder["final_step"]] == min(ranks.values()) and ranks["ptq"] == max(ranks.values())
    kept = steps[ladder["final_step"]]
    assert max(kept["drop_points"].values()) <= 1.0 and max(report["accuracy"]["drop_points"].values()) <= 1.0
    assert all(s["seconds"] > 0 for s in ran) and 0 < ladder["seconds"] <= ladder["time_budget_s"]
    text = (folder / "out" / "digits_nobn" / "host-cpu" / "report.md").read_text()
    assert "## Quantization ladder" in text and "Decisions read only the selection split" in text


@pytest.mark.slow
def test_every_step_ran_with_its_outcome_on_nobn(nobn_build) -> None:
    _, folder = nobn_build
    steps = {s["step"]: s for s in _report(folder)["quantization"]["steps"]}
    assert list(steps) == ["ptq", "calibration", "equalize", "nncf", "mixed"]
    if aimet_missing():  # NNCF's fast bias correction leaves this model's biases as they are: nothing to try
        assert steps["nncf"]["status"] == "skipped" and "NNCF changed no weight" in steps["nncf"]["note"]
    equalize = steps["equalize"]
    if aimet_missing():
        assert equalize["status"] == "skipped" and "pip install 'edgepipe[aimet]'" in equalize["note"]
    else:  # equalized, the ONNX holds fully int8; the TFLite is step (b)'s, which does not
        assert equalize["status"] == "missed" and "cross-layer equalization rescaled" in equalize["note"]
        assert equalize["selection"]["onnx"]["met"] and not equalize["selection"]["tflite"]["met"]
        assert equalize["recipe"] == {"onnx": "equalized, minmax/per-channel/int8", "tflite": "minmax/per-channel/int8"}
    calibration = steps["calibration"]
    # ONNX: 3 methods, then the 3 other granularity x symmetry settings of the best one; TFLite: 2 granularities
    assert len(calibration["candidates"]) == 8
    assert {c["format"] for c in calibration["candidates"]} == {"onnx", "tflite"}
    assert all(c["sqnr_db"] > 0 and 0 <= c["flips_points"] <= 100 for c in calibration["candidates"])
    # per-channel weights undo the unequal channel scales: the highest SQNR, so (b) keeps it in both formats
    assert calibration["recipe"] == {"onnx": "minmax/per-channel/int8", "tflite": "minmax/per-channel/int8"}
    best = max(c["sqnr_db"] for c in calibration["candidates"])
    assert all(sel["min_sqnr_db"] == pytest.approx(best, abs=0.01) for sel in calibration["selection"].values())
    mixed = steps["mixed"]
    # the equalized ONNX already held: only the TFLite needs mixed precision then
    assert "tflite:" in mixed["cost"] and ("onnx:" in mixed["cost"]) == (equalize["status"] == "skipped")
    kept = sum(len(k) for k in mixed["kept_layers"].values())
    assert kept <= 2  # budget: 25% of the nodes
    assert {k["precision"] for k in mixed["kept_layers"].get("tflite", [])} <= {"float"}  # no per-layer int16
    assert {k["precision"] for k in mixed["kept_layers"].get("onnx", [])} <= {"a16w8", "float"}
    if equalize["status"] == "skipped":
        assert "onnx: top " in mixed["note"] and "-> a16w8" in mixed["note"]  # host-cpu runs int16: tried first
    assert "onnx: float ranking" not in mixed["note"]  # int16 held first: the node-damage ranking was never measured
    # TFLite keeps no single layer in int16; where no float layer helps, every activation goes int16 (int16x8)
    assert mixed["recipe"]["tflite"].endswith("/a16w8") or mixed["kept_layers"].get("tflite")
    assert max(mixed["drop_points"].values()) < max(steps["ptq"]["drop_points"].values())


@pytest.mark.slow
def test_sensitivity_covers_both_formats(nobn_build) -> None:
    _, folder = nobn_build
    report = _report(folder)["quantization"]
    rows = report["sensitivity"]
    assert {r["format"] for r in rows} == {"onnx", "tflite"}
    onnx_rows = [r for r in rows if r["format"] == "onnx"]
    assert len(onnx_rows) == 4  # three convs and the dense layer
    assert all(r["isolated_sqnr_db"] is not None and r["accumulated_sqnr_db"] is not None for r in onnx_rows)
    assert all(-1.0 <= r["isolated_cosine"] <= 1.0 for r in rows)
    text = (folder / "out" / "digits_nobn" / "host-cpu" / "report.md").read_text()
    assert "Most sensitive layers" in text and "isolated SQNR (dB)" in text


@pytest.mark.slow
def test_threshold_zero_without_training_split_keeps_the_trail(tmp_path: Path) -> None:
    """No step can hold a zero-point rule on the selection split; the evaluation gate then judges the kept best
    attempt (on digits_nobn ONNX with two layers in int16 loses nothing on evaluation, TFLite 0.75 points)."""
    _config(tmp_path, train=False, methods='["minmax", "entropy"]')
    proc = run_cli("build", "-q", "--threshold", "0", cwd=tmp_path)
    assert proc.returncode in (0, 2), proc.stdout + proc.stderr
    ladder = _report(tmp_path)["quantization"]
    assert not ladder["met"]
    steps = {s["step"]: s for s in ladder["steps"]}
    assert [steps[s]["status"] for s in ("ptq", "calibration", "mixed")] == ["missed"] * 3
    assert steps["qat"]["status"] == "skipped" and "training split" in steps["qat"]["note"]
    assert ladder["still_sensitive"]
    text = (tmp_path / "out" / "digits_nobn" / "host-cpu" / "report.md").read_text()
    assert "No step met top-1 changes within 0 points on the selection split" in text and "Still sensitive" in text


@pytest.mark.slow
def test_reference_model_stops_at_step_a(reference_build) -> None:
    proc, folder = reference_build
    assert proc.returncode == 0, proc.stderr
    ladder = json.loads((folder / "report.json").read_text())["quantization"]
    # stops at the first step whose top-1 changes on the selection split are within 1 point (ptq or calibration)
    assert ladder["met"] and ladder["final_step"] == ladder["steps"][-1]["step"]
    assert [s["step"] for s in ladder["steps"]] in (["ptq"], ["ptq", "calibration"])
    assert ladder["steps"][-1]["selection"]["onnx"]["flips_points"] <= 1.0
    assert ladder["sensitivity"] == [], "the ladder met its threshold: no per-layer sensitivity unless asked for"


@pytest.mark.slow
def test_qat_alone_on_the_batch_norm_reference_model(tmp_path: Path, reference_model: Path) -> None:
    """QAT on digits_cnn (BatchNormalization frozen): full-int8 TFLite and QDQ ONNX with int8 weights."""
    import numpy as np
    import onnx
    from ai_edge_litert.interpreter import Interpreter

    (tmp_path / "edgepipe.toml").write_text('output = "out"\n[quantization]\nsteps = ["qat"]\nqat_epochs = 1\n')
    proc = run_cli("build", "-q", "--model", str(reference_model), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    folder = tmp_path / "out" / "digits_cnn" / "host-cpu"
    ladder = json.loads((folder / "report.json").read_text())["quantization"]
    assert [s["step"] for s in ladder["steps"]] == ["qat"] and ladder["final_step"] == "qat"
    assert max(ladder["steps"][0]["drop_points"].values()) <= 1.0
    interp = Interpreter(model_path=str(folder / "model_int8.tflite"))
    assert interp.get_input_details()[0]["dtype"] == np.int8
    graph = onnx.load(str(folder / "model_int8.onnx")).graph
    assert sum(n.op_type == "QuantizeLinear" for n in graph.node) >= 4
    assert {i.data_type for i in graph.initializer if i.name.endswith("_quantized")} == {onnx.TensorProto.INT8}
