"""Fleets on a real local Ray instance (the bundled model, two real third-party models, a corrupt one; three
targets): the first run builds every cell, a second run is all cache hits, a
corrupt model fails only its own row, and a worker that really dies mid-job (os._exit) is retried by Ray. Then
the default executor, a local process pool, retries a killed worker once in a fresh pool.

The tests share one build cache (the session's), in this order: only the first run builds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from edgepipe.cli import main
from edgepipe.fleet.executors import LocalPoolExecutor
from edgepipe.fleet.job import run_job
from edgepipe.fleet.ray_executor import RayExecutor
from edgepipe.fleet.report import FLEET_HTML, FLEET_JSON, FLEET_MD, FleetReport
from edgepipe.fleet.run import FleetRun, run_fleet
from edgepipe.fleet.spec import load_fleet
from tests.fleet import crashing
from tests.fleet.conftest import TARGETS, write_fleet

pytestmark = pytest.mark.thirdparty


def _run(folder: Path, inputs: dict[str, Path], work=run_job) -> FleetRun:
    source = write_fleet(folder / "fleet.toml", inputs)
    spec = load_fleet(source)
    return run_fleet(spec, source, RayExecutor(output=spec.output, workers=2), work=work)


@pytest.fixture(scope="module")
def first_run(local_ray: None, fleet_inputs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> FleetRun:
    return _run(tmp_path_factory.mktemp("fleet_first"), fleet_inputs)


def test_fleet_completes_on_ray(first_run: FleetRun) -> None:
    report = first_run.report
    assert report.executor == "ray" and report.models == ["digits_cnn", "silero_vad", "micro_wakeword", "broken"]
    assert report.targets == TARGETS and len(report.cells) == 12
    assert len(report.jobs) == 8  # Ethos-U runs no float layer, so it quantizes apart: two jobs per model
    for model in ("digits_cnn", "silero_vad", "micro_wakeword"):
        for target in TARGETS:
            cell = report.cell(model, target)
            assert cell is not None and cell.status == "built", (model, target, cell)
            assert cell.verdict in ("pass", "fail", "not proven")
            assert cell.report is not None and (first_run.files[0].parent / cell.report).is_file()
            if model != "micro_wakeword":  # a shipped int8 TFLite: no int8 ONNX for mobile-npu to deploy
                assert cell.size_bytes and cell.size_bytes > 0
            if model == "digits_cnn":  # silero's TFLite does not run in LiteRT: Ethos-U checks are skipped
                assert cell.cpu_ops is not None and cell.partitions is not None
                assert cell.latency_ms_estimate is not None and cell.latency_ms_estimate > 0
    assert report.cell("digits_cnn", "mobile-npu").cpu_ops == {"DequantizeLinear": 1}  # type: ignore[union-attr]
    silero_npu = report.cell("silero_vad", "mobile-npu")
    assert silero_npu is not None and silero_npu.cpu_ops is not None and silero_npu.partitions is not None
    digits = report.cell("digits_cnn", "ethos-u55")
    assert digits is not None and digits.fidelity is not None and digits.fidelity.int8_top1 is not None
    assert 0.9 <= digits.fidelity.int8_top1 <= 1.0 and digits.verdict == "pass"
    wakeword = report.cell("micro_wakeword", "ethos-u55")  # its streaming-state ops split the Ethos-U graph
    assert wakeword is not None and wakeword.partitions is not None and wakeword.partitions > 4
    assert wakeword.verdict == "fail" and "partitions" in wakeword.reason
    silero = report.cell("silero_vad", "host-cpu")
    assert silero is not None and silero.fidelity is not None and silero.fidelity.int8_top1 is None
    assert silero.fidelity.min_cosine is not None and 0.8 < silero.fidelity.min_cosine <= 1.0
    assert [f.name for f in first_run.files] == [FLEET_JSON, FLEET_MD, FLEET_HTML]
    assert FleetReport.model_validate_json(first_run.files[0].read_text()) == report


def test_broken_model_fails_only_its_row(first_run: FleetRun) -> None:
    report = first_run.report
    broken = [c for c in report.cells if c.model == "broken"]
    assert [c.target for c in broken] == TARGETS
    assert all(c.status == "error" and c.verdict == "error" and "broken.onnx" in c.reason for c in broken)
    assert report.verdict == "fail"
    assert all(c.status in ("built", "restored") for c in report.cells if c.model != "broken"), [
        (c.model, c.target, c.status, c.reason) for c in report.cells]


def test_second_run_is_all_cache_hits(first_run: FleetRun, fleet_inputs: dict[str, Path], tmp_path: Path) -> None:
    again = _run(tmp_path, fleet_inputs).report
    finished = [c for c in again.cells if c.model != "broken"]
    assert len(finished) == 9 and all(c.status == "restored" for c in finished)
    assert again.cache_hits == 9
    for cell in finished:  # restored cells carry the same figures
        first = first_run.report.cell(cell.model, cell.target)
        assert first is not None and cell.fidelity == first.fidelity and cell.cpu_ops == first.cpu_ops


def test_killed_worker_is_retried(first_run: FleetRun, fleet_inputs: dict[str, Path], tmp_path: Path) -> None:
    run = _run(tmp_path, fleet_inputs, work=crashing.crash_once)
    marker = tmp_path / "out" / ".crashed-digits_cnn-0"
    assert marker.is_file()  # the first attempt really ran and killed its worker process
    crashed_pid = int(marker.read_text())
    job = next(j for j in run.report.jobs if j.model == "digits_cnn")
    assert job.worker and int(job.worker.rsplit(":", 1)[1]) != crashed_pid  # the retry ran in another process
    assert crashed_pid != os.getpid()
    cells = [c for c in run.report.cells if c.model == "digits_cnn"]
    assert len(cells) == 3 and all(c.status == "restored" and c.verdict == "pass" for c in cells)


def test_process_pool_retries_a_killed_worker(first_run: FleetRun, fleet_inputs: dict[str, Path],
                                              tmp_path: Path) -> None:
    source = write_fleet(tmp_path / "fleet.toml", fleet_inputs)
    run = run_fleet(load_fleet(source), source, LocalPoolExecutor(workers=2), work=crashing.crash_once)
    report = run.report
    assert (tmp_path / "out" / ".crashed-digits_cnn-0").is_file()
    attempts = {j.job_id: j.attempts for j in report.jobs}
    assert attempts["digits_cnn#0"] == 2  # a job lost with the broken pool before it ran is retried too: 1 or 2
    assert all(c.status in ("built", "restored") for c in report.cells if c.model != "broken"), [
        (c.model, c.target, c.status, c.reason) for c in report.cells]
    assert all(c.status == "error" for c in report.cells if c.model == "broken")
    assert len(report.cells) == 12 and report.verdict == "fail"


def test_cli_json_and_baseline_regression(first_run: FleetRun, fleet_inputs: dict[str, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The real CLI as docs/guide/fleets.md shows it: --json, --write-baseline, then --baseline with a regression."""
    source = write_fleet(tmp_path / "fleet.toml", fleet_inputs, broken=False)
    baseline = tmp_path / "FLEET_BASELINE.json"
    code = main(["fleet", str(source), "--json", "-q", "--write-baseline", str(baseline)])
    doc = json.loads(capsys.readouterr().out)
    assert code == (0 if doc["verdict"] == "pass" else 2)
    assert [c["status"] for c in doc["fleet"]["cells"]] == ["restored"] * 9
    assert doc["files"][0].endswith("fleet.json") and doc["baseline"] is None
    saved = json.loads(baseline.read_text())
    cell = next(c for c in saved["cells"] if c["model"] == "digits_cnn" and c["target"] == "mobile-npu")
    assert cell["cpu_ops"] == {"DequantizeLinear": 1}
    cell["cpu_ops"] = {}  # as if the baseline had run every node on the accelerator
    baseline.write_text(json.dumps(saved))
    assert main(["fleet", str(source), "--json", "-q", "--baseline", str(baseline)]) == 2
    diff = json.loads(capsys.readouterr().out)["baseline"]
    assert diff["compared"] == 9 and [(r["model"], r["target"], r["check"]) for r in diff["regressions"]] == [
        ("digits_cnn", "mobile-npu", "cpu ops")]
    assert "## Baseline comparison" in (tmp_path / "out" / "fleet.md").read_text()


def test_a_bug_in_one_job_is_its_rows_with_the_traceback(first_run: FleetRun, fleet_inputs: dict[str, Path],
                                                         tmp_path: Path) -> None:
    source = write_fleet(tmp_path / "fleet.toml", fleet_inputs, broken=False)
    outcomes = []
    run = run_fleet(load_fleet(source), source, LocalPoolExecutor(workers=2), work=crashing.bug_in_silero,
                    on_done=outcomes.append)
    assert run.report.has_bug and run.report.verdict == "fail"
    silero = [c for c in run.report.cells if c.model == "silero_vad"]
    assert [c.status for c in silero] == ["bug"] * 3 and "ValueError: the truth value" in silero[0].reason
    assert all(c.status == "restored" for c in run.report.cells if c.model == "digits_cnn")
    traceback = next(o.traceback for o in outcomes if o.model == "silero_vad")
    assert traceback is not None and "bug_in_silero" in traceback
