"""Fleet scaling: the same fleet run serially, on the local process pool and on a local Ray instance.

Each run is the real CLI (``edgepipe fleet FLEET.toml --executor X --json``) in a
fresh process: first with an empty build cache (every cell built: the cost of a
job), then again with that cache (every unchanged cell restored: the cache-hit
rate and the cost of a restore). Executors alternate within each round, so a
change in the shared machine's load hits all of them alike. Wall time is
measured around the process; CPU time two ways: the process tree's (rusage of
waited-for children: complete for serial and the pool, Ray's workers are not
our children) and the sum of every job's own CPU time in its worker (the same
definition for every executor). Results go to benchmarks/results/fleet.md between markers,
with the worked estimate for 1,000 models × 20 targets computed from them.

    PYTHONPATH=$PWD python benchmarks/fleet.py --zoo ZOO_DIR --runs 3 --write benchmarks/results/fleet.md

``--zoo`` is a folder prepared by ``python -m tests.realmodels.zoo prepare DIR`` (one sub-folder per real
third-party model, each with its edgepipe.toml and data); ``--quick`` is the reduced configuration (PTQ only,
3 latency runs); ``--targets`` narrows the matrix.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "benchmarks" / "results" / "fleet.md"
BUNDLED = ("digits_cnn", "digits_nobn")
ZOO_DEFAULT = ("akiki_vad", "micro_wakeword", "blazeface", "selfie_segmentation", "hand_landmark", "palm_detection")
START, END = "<!-- fleet-benchmark:start -->", "<!-- fleet-benchmark:end -->"
QUICK = '[build]\nlatency = { warmup = 1, runs = 3 }\nquantization = { steps = ["ptq"] }\n'
#: ``--quick``: samples kept of each .npz split (image folders are kept whole).
QUICK_SAMPLES = {"calibration": 64, "evaluation": 100}


def model_config(name: str, zoo: Path | None) -> Path:
    """The edgepipe.toml of a bundled or zoo model (digits_cnn's is the bundled default's data)."""
    if name == "digits_nobn":
        return ROOT / "models/digits_nobn/edgepipe.toml"
    if zoo is not None and (zoo / name / "edgepipe.toml").is_file():
        return zoo / name / "edgepipe.toml"
    raise SystemExit(f"{name}: not bundled and not in --zoo {zoo}")


def model_data(name: str, zoo: Path | None) -> dict[str, Path]:
    """The calibration and evaluation splits a model's config names (absolute paths)."""
    if name == "digits_cnn":
        return {split: ROOT / "calib/digits" / f"{split}.npz" for split in QUICK_SAMPLES}
    config = model_config(name, zoo)
    data = tomllib.loads(config.read_text(encoding="utf-8")).get("data", {})
    return {split: (config.parent / data[split]).resolve() for split in QUICK_SAMPLES if split in data}


def subset(source: Path, target: Path, count: int) -> Path:
    """The first ``count`` samples of an .npz split; an image folder (tens of files in the zoo) whole."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target)
        return target
    with np.load(source) as data:
        np.savez(target, **{key: data[key][:count] for key in data.files})
    return target


def fleet_file(folder: Path, zoo: Path | None, names: list[str], targets: str, quick: bool) -> Path:
    """The benchmark's FLEET.toml: the bundled models, then the zoo's (each with its own edgepipe.toml).

    With ``quick``, every model's calibration and evaluation splits are cut to ``QUICK_SAMPLES`` (copies in
    ``folder``); its own config (preprocessing, input shapes, thresholds) is kept.
    """
    target_list = '"all"' if targets == "all" else json.dumps(targets.split(","))
    lines = [f"targets = {target_list}", 'output = "out"', QUICK if quick else ""]
    for name in names:
        lines.append(f'[[models]]\nname = "{name}"')
        if name == "digits_cnn":
            lines.append(f'model = "{ROOT / "models/digits_cnn/digits_cnn.keras"}"')
        else:
            lines.append(f'config = "{model_config(name, zoo)}"')
        if quick:
            lines.append("[models.data]")
            for split, source in model_data(name, zoo).items():
                suffix = "" if source.is_dir() else ".npz"
                kept = subset(source, folder / "data" / f"{name}-{split}{suffix}", QUICK_SAMPLES[split])
                lines.append(f'{split} = "{kept}"')
    path = folder / "FLEET.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class RunFailed(RuntimeError):
    """An ``edgepipe fleet`` run that did not finish (not 0, 2 or 3)."""


def run_once(fleet: Path, executor: str, workers: int, cache: Path, output: Path) -> dict:
    """One ``edgepipe fleet`` process: wall (s), process-tree CPU (s) and the fleet.json it wrote."""
    exe = Path(sys.executable).with_name("edgepipe")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run([str(exe), "fleet", str(fleet), "-e", executor, "-j", str(workers), "--cache", str(cache),
                           "-o", str(output), "--json", "-q"], capture_output=True, text=True, env=env, timeout=7200)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 2, 3):  # 3: a bug row; the fleet still finished and is measured
        raise RunFailed(f"edgepipe fleet -e {executor} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    fleet_json = json.loads(proc.stdout)["fleet"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "tree_cpu": cpu, "fleet": fleet_json, "load": os.getloadavg()[0],
            "job_cpu": sum(j["cpu_seconds"] + j.get("subprocess_cpu_seconds", 0.0) for j in fleet_json["jobs"]),
            "hits": sum(c["status"] == "restored" for c in fleet_json["cells"]), "cells": len(fleet_json["cells"])}


def stats(values: list[float]) -> str:
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def cache_entry_bytes(cache: Path) -> float:
    """Mean size of one cell's cache entry (bytes)."""
    entries = [p for p in (cache / "v1").iterdir() if p.is_dir() and not p.name.startswith(".")]
    sizes = [sum(f.stat().st_size for f in e.iterdir() if f.is_file()) for e in entries]
    return statistics.mean(sizes) if sizes else 0.0


def cold_and_warm(args: argparse.Namespace, fleet: Path, scratch: Path, executor: str, round_: int) -> tuple:
    """One cold run (empty cache) and one warm run (the same cache); the pair once more, from an empty cache,
    when a run fails (a local Ray instance that did not come up on the loaded machine)."""
    cache = scratch / f"cache-{executor}-{round_}"
    for attempt in (1, 2):
        shutil.rmtree(cache, ignore_errors=True)
        try:
            cold = run_once(fleet, executor, args.workers, cache, scratch / f"out-{executor}-{round_}-cold")
            warm = run_once(fleet, executor, args.workers, cache, scratch / f"out-{executor}-{round_}-warm")
            entry = cache_entry_bytes(cache)
            shutil.rmtree(cache, ignore_errors=True)
            return cold, warm, entry
        except RunFailed as exc:
            if attempt == 2:
                raise SystemExit(str(exc)) from None
            print(f"round {round_ + 1} {executor}: failed, once more from an empty cache:\n{exc}", file=sys.stderr)
        finally:
            for kind in ("cold", "warm"):
                shutil.rmtree(scratch / f"out-{executor}-{round_}-{kind}", ignore_errors=True)
    raise AssertionError("unreachable")


def measure(args: argparse.Namespace, fleet: Path, scratch: Path) -> dict:
    """Every round of every executor; the raw figures are saved to ``--raw`` after each (``--render-only``);
    ``--resume`` goes on from what ``--raw`` holds."""
    results: dict[str, dict[str, list]] = {e: {"cold": [], "warm": []} for e in args.executors}
    entry_bytes = 0.0
    meta = {"command": " ".join(a for a in sys.argv[1:] if a != "--resume"), "quick": args.quick,
            "workers": args.workers, "machine": machine(), "commit": args.commit}
    if args.resume and args.raw is not None and args.raw.is_file():
        saved = json.loads(args.raw.read_text(encoding="utf-8"))
        results, entry_bytes = saved["results"], saved["entry_bytes"]
        if saved["meta"]["commit"] != args.commit:
            meta["commit"] = f"{saved['meta']['commit']} (rounds before the resume), {args.commit}"
    for round_ in range(args.runs):
        for executor in args.executors:
            if len(results[executor]["cold"]) > round_:
                continue
            cold, warm, entry = cold_and_warm(args, fleet, scratch, executor, round_)
            entry_bytes = entry_bytes or entry
            results[executor]["cold"].append(cold)
            results[executor]["warm"].append(warm)
            print(f"round {round_ + 1} {executor}: cold {cold['wall']:.1f} s, warm {warm['wall']:.1f} s, "
                  f"hits {warm['hits']}/{warm['cells']}", file=sys.stderr, flush=True)
            if args.raw is not None:
                meta.update(rounds=round_ + 1, date=f"{datetime.now(UTC):%Y-%m-%d %H:%M}",
                            load=os.getloadavg()[0])
                args.raw.write_text(json.dumps({"results": results, "entry_bytes": entry_bytes, "meta": meta}),
                                    encoding="utf-8")
    meta.update(rounds=args.runs, date=f"{datetime.now(UTC):%Y-%m-%d %H:%M}", load=os.getloadavg()[0])
    return {"results": results, "entry_bytes": entry_bytes, "meta": meta}


def commit() -> str:
    """The measured tree's git commit (short), or 'unknown' outside a checkout (pass --commit then)."""
    proc = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else "unknown"


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} CPU ({cpu}), {mem:.0f} GiB, Python {platform.python_version()}"


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _job_cpu(job: dict) -> float:
    """A job's CPU (s): its worker's own and the subprocesses it waited for (converters, vendor compilers)."""
    return job["cpu_seconds"] + job.get("subprocess_cpu_seconds", 0.0)


def header(measured: dict, fleet: dict) -> list[str]:
    """Where, when, what: the machine, the commit, the fleet and its configuration."""
    meta = measured["meta"]
    quick = (f"**reduced build settings** (`--quick`: PTQ only, 1 + 3 latency runs, the first "
             f"{QUICK_SAMPLES['calibration']} calibration and {QUICK_SAMPLES['evaluation']} evaluation samples of "
             "each .npz split, image folders whole)") if meta["quick"] else "each model's full build settings"
    every = "every target `edgepipe targets list` shows" if len(fleet["targets"]) >= 9 else "a subset of the targets"
    return [START, "",
            f"Measured {meta['date']} UTC at commit `{meta['commit']}` on {meta['machine']}, **shared with the "
            f"other engineers' builds and tests** (load average {meta['load']:.1f} at the end on 2 cores): absolute "
            "times are slower and noisier than on a quiet machine; the executors alternate within each round, so "
            "their ratios are fairer than their absolute times. Cells: min / median / max over the runs.", "",
            f"Fleet: {len(fleet['models'])} models ({', '.join(fleet['models'])}) × {len(fleet['targets'])} targets "
            f"({every}: {', '.join(fleet['targets'])}) = {len(fleet['cells'])} cells in {len(fleet['jobs'])} jobs "
            f"(model × group of targets sharing quantization); {quick}; {meta['workers']} workers. Each run is "
            "`edgepipe fleet FLEET.toml -e EXECUTOR --json` in a fresh process, cold (empty build cache) then warm "
            f"(the same cache). Command: `PYTHONPATH=$PWD python benchmarks/fleet.py {meta['command']}`"]


def executor_table(results: dict) -> list[str]:
    lines = ["", "| executor | runs | cold wall (s) | cold CPU, process tree (s) | cold CPU, jobs (s) | warm wall (s) "
             "| warm cache hits |", "|---|---|---|---|---|---|---|"]
    for executor, runs in results.items():
        cold, warm = runs["cold"], runs["warm"]
        if not cold:
            continue
        tree = stats([r["tree_cpu"] for r in cold]) if executor != "ray" else "– (workers not our children)"
        hits = f"{sum(r['hits'] for r in warm)}/{sum(r['cells'] for r in warm)}"
        lines.append(f"| {executor} | {len(cold)} | {stats([r['wall'] for r in cold])} | {tree} | "
                     f"{stats([r['job_cpu'] for r in cold])} | {stats([r['wall'] for r in warm])} | {hits} |")
    lines += ["", "Process-tree CPU: every process the command waited for (for serial and the pool: the command, its "
              "workers and the converters and vendor compilers they ran); Ray's workers are not the command's "
              "children. Jobs' CPU: the sum over jobs of the worker's own CPU and that of the subprocesses the job "
              "waited for, measured in the worker, so the same for every executor (it leaves out each worker's "
              "start-up and imports)."]
    medians = {e: (_median(r["cold"], "wall"), _median(r["warm"], "wall")) for e, r in results.items()
               if r["cold"] and r["warm"]}
    if "serial" in medians and len(medians) > 1:
        speedups = ", ".join(f"{e} ×{medians['serial'][0] / cold:.2f}" for e, (cold, _) in medians.items()
                             if e != "serial")
        lines += ["", f"Speed-up of the cold run over serial (medians): {speedups}. Warm runs are start-up: the "
                  "command's own, the pool's spawned workers, and for Ray the local instance (" +
                  ", ".join(f"{e} {warm:.1f} s" for e, (_, warm) in medians.items()) + ")."]
    return lines


def job_table(runs: dict) -> list[str]:
    """Per job of the serial runs: median cold wall and CPU, and the warm restore (s)."""
    cold = [{j["job_id"]: j for j in r["fleet"]["jobs"]} for r in runs["cold"]]
    warm = [{j["job_id"]: j for j in r["fleet"]["jobs"]} for r in runs["warm"]]
    lines = ["", "Per job (serial executor, median of the runs; a job's targets share one export and quantization; "
             "the RKNN targets compile in their own environment inside the job):", "",
             "| job | targets | cold wall (s) | cold CPU (s) | warm restore (s) |", "|---|---|---|---|---|"]
    for job_id, job in cold[0].items():
        lines.append(f"| {job_id} | {', '.join(job['targets'])} | "
                     f"{statistics.median(c[job_id]['seconds'] for c in cold):.1f} | "
                     f"{statistics.median(_job_cpu(c[job_id]) for c in cold):.1f} | "
                     f"{statistics.median(w[job_id]['seconds'] for w in warm):.2f} |")
    return lines


def per_cell(measured: dict, base: str) -> dict[str, float]:
    """The figures the estimate uses, per cell, from the ``base`` executor's runs (medians over runs)."""
    runs = measured["results"][base]
    cells = runs["cold"][0]["cells"]
    all_warm = [r for e in measured["results"].values() for r in e["warm"]]
    return {"cells": cells,
            "cpu": _median(runs["cold"], "tree_cpu" if base != "ray" else "job_cpu") / cells,
            "wall": _median(runs["cold"], "wall") / cells,
            "restore": statistics.median(sum(j["seconds"] for j in r["fleet"]["jobs"]) for r in runs["warm"]) / cells,
            "hit_rate": sum(r["hits"] for r in all_warm) / sum(r["cells"] for r in all_warm),
            "entry": measured["entry_bytes"]}


def render(measured: dict, fleet: dict) -> str:
    results = measured["results"]
    base = "serial" if results.get("serial", {}).get("cold") else next(e for e, r in results.items() if r["cold"])
    cell = per_cell(measured, base)
    lines = [*header(measured, fleet), *executor_table(results)]
    if base == "serial":
        lines += job_table(results["serial"])
    lines += ["", f"Per cell ({base}, cold, medians): **{cell['cpu']:.1f} s CPU** (process-tree CPU ÷ "
              f"{cell['cells']} cells, start-up included) and {cell['wall']:.1f} s wall on the shared machine; a "
              f"restored cell (warm): **{cell['restore']:.2f} s**. Cache-hit rate of an unchanged rerun: "
              f"**{100 * cell['hit_rate']:.0f} %** (every warm run of every executor). One cell's cache entry: "
              f"{cell['entry'] / 1024:.0f} KiB.", ""]
    lines += estimate(cell, results)
    return "\n".join([*lines, "", END])


def efficiency(results: dict, workers: int) -> tuple[float, str]:
    """Parallel efficiency measured here: serial cold wall ÷ (best parallel cold wall × workers), at most 1."""
    if "serial" not in results or not results["serial"]["cold"]:
        return 1.0, "not measured: 100 % assumed"
    serial = _median(results["serial"]["cold"], "wall")
    parallel = {e: _median(r["cold"], "wall") for e, r in results.items() if e != "serial" and r["cold"]}
    if not parallel:
        return 1.0, "not measured: 100 % assumed"
    best = min(parallel, key=lambda e: parallel[e])
    value = min(1.0, serial / (parallel[best] * workers))
    return value, f"{100 * value:.0f} %, {best} vs serial on {workers} workers"


def estimate(cell: dict, results: dict) -> list[str]:
    """The worked estimate for 1,000 models × 20 targets, from the measured per-cell figures."""
    cells, workers = 1000 * 20, 10 * 32
    eff, eff_text = efficiency(results, 2)
    cold_h = cells * cell["cpu"] / 3600
    rebuilt = cells * (1 - cell["hit_rate"])
    warm_worker_s = cells * cell["hit_rate"] * cell["restore"] + rebuilt * cell["cpu"]
    warm_min = warm_worker_s / workers / 60
    size = cells * cell["entry"]
    return [
        "### Worked estimate: 1,000 models × 20 targets on 10 nodes × 32 CPUs (computed by the script from the "
        "figures above)", "",
        f"- Cold (nothing cached): 20,000 cells × {cell['cpu']:.1f} s CPU per cell = **{cold_h:,.0f} CPU-hours**; "
        f"on 320 one-CPU Ray workers at the parallel efficiency measured here ({eff_text}) = "
        f"**{cold_h * 60 / workers / eff:.0f} min** wall, plus the longest single job at the tail.",
        f"- Nightly with nothing changed, at the measured hit rate ({100 * cell['hit_rate']:.0f} %): "
        f"{cells * cell['hit_rate']:,.0f} restores × {cell['restore']:.2f} s + {rebuilt:,.0f} rebuilds × "
        f"{cell['cpu']:.1f} s = **{warm_min:.1f} min** on 320 workers — if the cache keeps up, which it does not: "
        f"it holds 20,000 × {cell['entry'] / 1024:.0f} KiB = **{size / 2**30:.1f} GiB**, and restoring it in that "
        f"time needs {size / 2**20 / max(warm_min * 60, 1e-9):,.0f} MiB/s from the shared folder. The warm night's "
        "time is the cache's size ÷ the shared file system's read bandwidth: the bottleneck has moved from the "
        "workers to the cache.",
        f"- Object store: a job ships back only its cells' rows (a few KiB), 20,000 cells ≈ tens of MiB; shipping "
        f"the artifacts back instead of a shared cache would move {size / 2**30:.1f} GiB through it.",
    ]


def write_doc(text: str, path: Path) -> None:
    doc = path.read_text(encoding="utf-8")
    if START not in doc or END not in doc:
        raise SystemExit(f"{path}: markers {START} … {END} not found")
    path.write_text(doc[:doc.index(START)] + text + doc[doc.index(END) + len(END):], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--zoo", type=Path, default=None, help="Prepared zoo folder (one sub-folder per model).")
    parser.add_argument("--models", default=",".join(BUNDLED + ZOO_DEFAULT), help="Comma-separated model names.")
    parser.add_argument("--targets", default="all", help="'all' or comma-separated target names.")
    parser.add_argument("--executors", default="serial,process,ray", type=lambda s: s.split(","))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="Reduced build settings: PTQ only, 3 latency runs.")
    parser.add_argument("--write", type=Path, default=None, help="Write the results into this Markdown file.")
    parser.add_argument("--raw", type=Path, default=None, help="Save the raw figures here after every round.")
    parser.add_argument("--render-only", action="store_true", help="Render --raw's figures; measure nothing.")
    parser.add_argument("--resume", action="store_true", help="Go on from the rounds --raw already holds.")
    parser.add_argument("--commit", default=None, help="The commit measured (default: this checkout's HEAD).")
    args = parser.parse_args()
    args.commit = args.commit or commit()
    scratch = Path(tempfile.mkdtemp(prefix="fleet-bench-"))
    try:
        if args.render_only:
            measured = json.loads(args.raw.read_text(encoding="utf-8"))
        else:
            fleet = fleet_file(scratch, args.zoo, args.models.split(","), args.targets, args.quick)
            measured = measure(args, fleet, scratch)
        first = next(iter(measured["results"].values()))["cold"][0]["fleet"]
        text = render(measured, first)
        print(text)
        if args.write is not None:
            write_doc(text, args.write)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
