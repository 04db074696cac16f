"""Host-cpu predictions vs measured ONNX Runtime latency, on the tuning or the held-out models.

    python benchmarks/predict_vs_measure.py [--set held-out|tuning] [--no-calibrate] [--json OUT]
                                            [--write-error] [--write-doc]

1. Calibration: the microbenchmark of ``edgepipe calibrate host-cpu`` (synthetic conv, matmul,
   elementwise and kernel graphs).
2. The models of one set of ``benchmarks/models.toml``: ``tuning`` (the reference models exported to
   float ONNX here, the ``onnx`` package's light architectures with weights materialised as
   initializers, and ``benchmarks/nets.py``'s generated nets — the models predictions were developed
   on) or ``held-out`` (nets nothing may be tuned on, ``nets.make_held_out_nets``; the default).
3. Each model's p50 latency under ONNX Runtime (CPU EP) next to the cost model's prediction; prints
   the median absolute % error and the share within ±10 % and ±25 %.

By default calibration rounds are interleaved with each model's runs and the override is rewritten
from that model's rounds before predicting it: on a shared machine whose load drifts minute to
minute, the calibration and the model then see the same load — the ratio-within-one-run rule of
``edgepipe bench``. ``--calibrate-once`` calibrates once up front (fine on a dedicated host).
``--write-error`` (held-out set only) stores the result as ``[performance.error]`` in the local
host-cpu override, so reports on this machine carry it; ``--write-doc`` writes the set's section of
benchmarks/results/benchmarks.md (and the summary in benchmarks/results/performance.md) between its markers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from doc_sections import BENCHMARKS_MD, PERFORMANCE_MD, provenance, spread, write_section  # noqa: E402
from nets import make_held_out_nets, make_nets  # noqa: E402

from edgepipe.latency.measure import BenchSettings, sample_inputs, single_stream  # noqa: E402
from edgepipe.latency.system import host_info  # noqa: E402
from edgepipe.perf.calibration import HostMeasurement, measure_host, override_path, write_override  # noqa: E402
from edgepipe.perf.host_probes import HostProbes  # noqa: E402
from edgepipe.perf.predict import predict  # noqa: E402
from edgepipe.runtimes import open_runner  # noqa: E402
from edgepipe.targets import load_profile  # noqa: E402

MODEL_SETS = ROOT / "benchmarks" / "models.toml"
LIGHT = Path(sys.prefix) / "lib" / "python3.11" / "site-packages" / "onnx" / "backend" / "test" / "data" / "light"


def constant_weights(path: Path, scratch: Path) -> Path:
    """The light model with its ConstantOfShape weights materialised as initializers.

    The ``onnx`` package builds each weight at run time from a shape that is also an overridable
    graph input, so ONNX Runtime cannot fold or pre-pack the weights and rebuilds them on every
    run, unlike any deployed model. The weights keep their constant fill value.
    """
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    initializers = {init.name: init for init in model.graph.initializer}
    keep = []
    for node in model.graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in initializers:
            shape = numpy_helper.to_array(initializers[node.input[0]]).astype(int)
            value = next((numpy_helper.to_array(helper.get_attribute_value(a)) for a in node.attribute
                          if a.name == "value"), np.zeros(1, np.float32))
            array = np.full(shape, value.reshape(-1)[0], dtype=value.dtype)
            model.graph.initializer.append(numpy_helper.from_array(array, node.output[0]))
        else:
            keep.append(node)
    del model.graph.node[:]
    model.graph.node.extend(keep)
    model.ir_version = max(model.ir_version, 4)  # IR 4: initializers need not be graph inputs
    out = scratch / path.name
    onnx.save(model, str(out))
    return out


def model_set(name: str) -> dict[str, list[str]]:
    """The ``reference``, ``light`` and ``generated`` model names of set ``name`` in benchmarks/models.toml."""
    return tomllib.loads(MODEL_SETS.read_text(encoding="utf-8"))[name.replace("-", "_")]


def set_models(name: str, scratch: Path) -> list[Path]:
    """Every model of set ``name`` (``tuning`` or ``held-out``), as float ONNX files."""
    wanted = model_set(name)
    models = []
    exe = Path(sys.executable).with_name("edgepipe")
    for stem in wanted["reference"]:
        out = scratch / stem
        subprocess.run([str(exe), "export", "--quiet", "--model", str(ROOT / "models" / stem / f"{stem}.keras"),
                        "-o", str(out)], check=True, capture_output=True)
        models.append((out / "model.onnx").rename(out / f"{stem}.onnx"))
    models += [constant_weights(LIGHT / f"{stem}.onnx", scratch) for stem in wanted["light"]]
    generated = [*make_nets(scratch / "generated"), *make_held_out_nets(scratch / "generated")]
    models += [path for path in generated if path.stem in wanted["generated"]]
    missing = {*wanted["reference"], *wanted["light"], *wanted["generated"]} - {m.stem for m in models}
    if missing:
        raise SystemExit(f"models.toml names models this script cannot make: {', '.join(sorted(missing))}")
    return models


def _paired(model: Path, probes: HostProbes, threads: int | None, budget_s: float) -> tuple[list[float], dict]:
    """Model runs interleaved with calibration rounds: both see the same load (ms, rates)."""
    runner = open_runner(model, threads=threads).activate()
    feed = sample_inputs(runner)
    for _ in range(3):
        runner.infer(feed)
    times, rounds = [], []
    deadline = time.perf_counter() + budget_s
    while len(times) < 40 and (time.perf_counter() < deadline or len(times) < 8):
        rounds.append(probes.run_round())
        runner.infer(feed)  # warm again after the probes, as back-to-back inference is
        start = time.perf_counter_ns()
        runner.infer(feed)
        times.append((time.perf_counter_ns() - start) / 1e6)
    runner.close()
    return times, probes.rates(rounds)


def run(calibrate: bool, budget_s: float, threads: int | None, paired: bool, which: str) -> dict:
    profile = load_profile("host-cpu")
    if calibrate and not paired:
        print(f"calibrated: {write_override('host-cpu', measure_host(threads=threads))}", file=sys.stderr)
    probes = HostProbes(threads) if paired else None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in set_models(which, Path(tmp)):
            if probes is not None:
                times, rates = _paired(model, probes, threads, budget_s)
                write_override("host-cpu", HostMeasurement(**rates))
            else:
                settings = BenchSettings(warmup=3, max_samples=60, budget_s=budget_s, threads=threads)
                times = [single_stream([model], settings)[0].stats.p50_ms]
            predicted = predict(model, profile).delegate
            assert predicted is not None
            p50, best = statistics.median(times), min(times)
            error = 100 * (predicted.total_ms - p50) / p50
            rows.append({"model": model.stem, "macs": predicted_macs(model), "measured_p50_ms": p50,
                         "measured_min_ms": best, "measured_max_ms": max(times), "runs": len(times),
                         "predicted_ms": predicted.total_ms, "error_pct": error})
            print(f"{model.stem:<24} measured p50 {p50:9.3f} ms (min {best:9.3f}, {len(times)} runs)  predicted "
                  f"{predicted.total_ms:9.3f} ms  {error:+7.1f}%", file=sys.stderr)
    errors = [abs(r["error_pct"]) for r in rows]
    return {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "host": host_info().model_dump(),
            "threads": threads, "paired": paired, "set": which, "budget_s": budget_s, "models": rows,
            "median_abs_error_pct": statistics.median(errors),
            "within_10_pct": sum(e <= 10 for e in errors) / len(errors),
            "within_25_pct": sum(e <= 25 for e in errors) / len(errors)}


def predicted_macs(model: Path) -> int:
    from edgepipe.perf.graph import read_graph

    return read_graph(model).macs


def write_error(result: dict) -> Path:
    """Append the held-out error to the local host-cpu override as [performance.error]."""
    if result["set"] != "held-out":
        raise SystemExit("--write-error records only the held-out set's error (--set held-out)")
    path = override_path("host-cpu")
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    text = text.split("[performance.error]")[0].rstrip() + "\n"
    cpu = result["host"]["cpu_model"] or "unknown CPU"
    text += ("[performance.error]\n"
             f"median_abs_pct = {result['median_abs_error_pct']:.1f}\n"
             f"within_25_pct_share = {result['within_25_pct']:.2f}\n"
             f"models = {len(result['models'])}\n"
             f"measured_on = \"held-out set of benchmarks/models.toml, ONNX Runtime CPU EP p50 on {cpu}, "
             f"{result['date']}\"\n")
    path.write_text(text, encoding="utf-8")
    return path


def write_doc(result: dict) -> None:
    """The set's table into benchmarks/results/benchmarks.md and a one-line summary into performance.md there."""
    rows = result["models"]
    runs = [r["runs"] for r in rows]
    how = ("calibration rounds interleaved with each model's runs" if result["paired"] else "calibrated once")
    head = provenance("predict_vs_measure.py", f"{spread(runs, '{:.0f}')} timed runs per model (min / median / "
                      f"max), {result['budget_s']:g} s budget each, {result['threads'] or 'all'} thread(s), {how}")
    table = ["| model | MMAC | measured p50 (ms) | runs min / median / max (ms) | predicted (ms) | error |",
             "|---|---|---|---|---|---|"]
    table += [f"| {r['model']} | {r['macs'] / 1e6:,.1f} | {r['measured_p50_ms']:.4g} | "
              f"{r['measured_min_ms']:.4g} / {r['measured_p50_ms']:.4g} / {r['measured_max_ms']:.4g} | "
              f"{r['predicted_ms']:.4g} | {r['error_pct']:+.1f}% |" for r in rows]
    n = len(rows)
    summary = (f"{result['set']} set, {n} models: median absolute error **{result['median_abs_error_pct']:.1f} %**, "
               f"{round(result['within_10_pct'] * n)}/{n} within ±10 %, "
               f"{round(result['within_25_pct'] * n)}/{n} within ±25 %.")
    name = f"predict_vs_measure.py:{result['set']}"
    write_section(BENCHMARKS_MD, name, "\n".join([head, "", *table, "", summary]))
    if result["set"] == "held-out":
        write_section(PERFORMANCE_MD, name, f"{head}\n\n{summary}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-calibrate", action="store_true", help="Use the existing override (or none).")
    parser.add_argument("--budget", type=float, default=6.0, help="Seconds of timing per model.")
    parser.add_argument("--threads", type=int, default=1,
                        help="ONNX Runtime threads, calibration and measurement (default 1: stable on a shared host).")
    parser.add_argument("--calibrate-once", action="store_true",
                        help="Calibrate once up front instead of interleaving calibration rounds with each model "
                             "(fine on a dedicated host).")
    parser.add_argument("--json", type=Path, help="Write the full result here.")
    parser.add_argument("--set", choices=("held-out", "tuning"), default="held-out",
                        help="Which models of benchmarks/models.toml (default: held-out).")
    parser.add_argument("--write-error", action="store_true",
                        help="Record the held-out error in the host-cpu override.")
    parser.add_argument("--write-doc", action="store_true", help="Write into benchmarks/results/.")
    args = parser.parse_args()
    result = run(not args.no_calibrate, args.budget, args.threads or None, not args.calibrate_once, args.set)
    print(f"{len(result['models'])} models: median |error| {result['median_abs_error_pct']:.1f}%, "
          f"within ±10%: {100 * result['within_10_pct']:.0f}%, within ±25%: {100 * result['within_25_pct']:.0f}%")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    if args.write_error:
        print(f"error recorded in {write_error(result)}")
    if args.write_doc:
        write_doc(result)


if __name__ == "__main__":
    main()
