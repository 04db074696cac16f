"""Is the host int8 deployment artifact faster than float? Per real model, from one build's measurement session.

For each model folder (``edgepipe.toml`` + model + data, e.g. /work/zoo/<name>) this runs
``edgepipe build -t host-cpu --no-cache`` as a fresh process and reads its report: every
latency figure there (the artifacts table and the int8-forms table) comes from one interleaved
session of the build's single timing loop, at the recorded thread count, so each int8 ÷ fp32
ratio is measured under the same load. Per form: p50, ratio, output cosine against fp32 on
calibration data, and the op profile's top entries (why it is not faster). Also the build's peak
RSS and, for the largest model, the peak RSS of a process that runs only the deployment artifact.

Run: ``python benchmarks/host_int8.py --write /work/zoo/ppocr_v5_det /work/zoo/ppocr_v4_det ...``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "benchmarks" / "results" / "performance.md"
BEGIN, END = "<!-- host_int8.py:begin -->", "<!-- host_int8.py:end -->"
TARGET_RATIO = 0.7

_SESSION_ONLY = r'''
import sys, numpy as np
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from edgepipe.latency.measure import sample_inputs
from edgepipe.runtimes import open_runner
with open_runner(Path(sys.argv[1]), threads=1) as runner:
    feed = sample_inputs(runner)
    for _ in range(10):
        runner.infer(feed)
'''


TIMEOUT_S: float | None = None


def _run(cmd: list[str], cwd: Path) -> tuple[int, int]:
    """Exit code and peak RSS (bytes, the largest process of ``cmd``) of one fresh process (killed, with its
    children, after ``TIMEOUT_S``: exit code -9)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    timer = threading.Timer(TIMEOUT_S, os.killpg, (proc.pid, signal.SIGKILL)) if TIMEOUT_S else None
    if timer is not None:
        timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    if timer is not None:
        timer.cancel()
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024


def with_steps(model: Path, steps: list[str] | None, work: Path) -> Path:
    """``model``'s folder, or (with ``steps``) a linked copy of it whose edgepipe.toml runs only those ladder steps."""
    if not steps:
        return model
    copy = work / f"{model.name}-config"
    copy.mkdir()
    for entry in model.iterdir():
        if entry.name != "edgepipe.toml":
            (copy / entry.name).symlink_to(entry.resolve())
    text = (model / "edgepipe.toml").read_text(encoding="utf-8")
    if "[quantization]" in text:
        raise SystemExit(f"{model}/edgepipe.toml has its own [quantization]; drop --steps for it")
    (copy / "edgepipe.toml").write_text(text + f"\n[quantization]\nsteps = {json.dumps(steps)}\n", encoding="utf-8")
    return copy


def build(model: Path, out: Path) -> tuple[dict, int]:
    """host-cpu report.json of ``model``'s folder and the build's peak RSS (bytes)."""
    exe = str(Path(sys.executable).with_name("edgepipe"))
    code, rss = _run([exe, "build", "-q", "--no-cache", "--config", str(model / "edgepipe.toml"),
                      "-t", "host-cpu", "--output", str(out)], out.parent)
    reports = list(out.glob("*/host-cpu/report.json"))
    if code == -signal.SIGKILL:
        raise RuntimeError(f"`edgepipe build` took longer than --timeout {TIMEOUT_S:g} s")
    if code not in (0, 2) or not reports:
        raise RuntimeError(f"`edgepipe build` exited {code}")
    return json.loads(reports[0].read_text()), rss


def read_build(out: Path) -> tuple[dict, None]:
    """host-cpu report.json of a build made elsewhere (peak RSS unknown)."""
    reports = list(out.glob("*/host-cpu/report.json"))
    if not reports:
        raise RuntimeError(f"no host-cpu report under {out}")
    return json.loads(reports[0].read_text()), None


def rows(name: str, report: dict) -> list[str]:
    """One Markdown row per int8 form of ``report`` (fp32 base, form, ratio, cosine, deployed, why)."""
    latency = report["latency"]
    performance = report.get("performance") or {}
    deployed = performance.get("deployment_artifact")
    out = []
    for form in performance.get("int8_forms", []):
        base = form.get("fp32_artifact")
        ratio = form.get("ratio_to_fp32")
        cosine = " / ".join("–" if c is None else f"{c:.4f}"
                            for c in (form.get("output_cosine"), form.get("reference_cosine")))
        mark = "**deployed**" if form["artifact"] == deployed else ""
        why = "; ".join(form.get("slow_ops", [])[:3])
        fp32 = f"{base} {latency[base]['median_ms']:.3g}" if base in latency else "– (no fp32 artifact)"
        out.append(f"| {name} | {form['artifact']} {mark} | {fp32} | "
                   f"{form['p50_ms']:.3g} | {'–' if ratio is None else f'{ratio:.2f}'} | "
                   f"{cosine} | {form.get('threads')} | {why} |")
    return out


def verdict(name: str, report: dict) -> str:
    """Whether the deployment artifact meets p50 ≤ 0.7× fp32 with cosine ≥ 0.99, and if not, why."""
    performance = report.get("performance") or {}
    chosen = next((f for f in performance.get("int8_forms", [])
                   if f["artifact"] == performance.get("deployment_artifact")), None)
    if chosen is None:
        best = max(performance.get("int8_forms", []), key=lambda f: f.get("output_cosine") or -1, default=None)
        closest = "" if best is None else (f"; the closest, `{best['artifact']}`, has cosine "
                                           f"{best.get('output_cosine')} at {best.get('ratio_to_fp32') or 0:.2f}× fp32")
        return f"- {name}: no faithful int8 form (cosine ≥ 0.99) to deploy{closest}."
    if chosen.get("ratio_to_fp32") is None:  # shipped already int8: nothing float to compare with
        return (f"- {name}: `{chosen['artifact']}` has no fp32 artifact to compare with (the model came int8); "
                f"p50 {chosen['p50_ms']:.3g} ms")
    ok = chosen["ratio_to_fp32"] <= TARGET_RATIO
    state = "meets" if ok else "misses"
    why = "" if ok else f" — where the time goes: {'; '.join(chosen.get('slow_ops', [])[:4])}"
    return (f"- {name}: `{chosen['artifact']}` {chosen['ratio_to_fp32']:.2f}× fp32, cosine "
            f"{chosen['output_cosine']}: {state} ≤ {TARGET_RATIO}×{why}")


_FUSION = r'''
import json, sys, tempfile
from collections import Counter
import onnx, onnxruntime as ort
counts = {}
for path in sys.argv[1:]:
    options = ort.SessionOptions(); options.log_severity_level = 3
    with tempfile.TemporaryDirectory() as tmp:
        options.optimized_model_filepath = f"{tmp}/optimized.onnx"
        ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        ops = Counter(n.op_type for n in onnx.load(options.optimized_model_filepath).graph.node)
    counts[path] = {"DequantizeLinear": ops["DequantizeLinear"], "QuantizeLinear": ops["QuantizeLinear"],
                    "QLinear*": sum(v for k, v in ops.items() if k.startswith("QLinear")),
                    "float Conv": ops["Conv"] + ops["FusedConv"],
                    "float Add/Mul/Div": ops["Add"] + ops["Mul"] + ops["Div"]}
print(json.dumps(counts))
'''
FUSED = ("model_int8.onnx", "model_int8_qdq_u8.onnx")


def fusion(paths: list[Path]) -> dict[str, dict[str, int]]:
    """Op counts of ONNX Runtime's optimised graph of each model (this host's default session options)."""
    done = subprocess.run([sys.executable, "-c", _FUSION, *map(str, paths)], capture_output=True, text=True,
                          check=True)
    return {Path(p).name: counts for p, counts in json.loads(done.stdout).items()}


def fusion_row(name: str, counts: dict[str, dict[str, int]]) -> str:
    """One row: each count as int8-activation QDQ / the same model with uint8 activations."""
    keys = list(next(iter(counts.values())))
    cells = [" / ".join(str(counts[a][key]) if a in counts else "–" for a in FUSED) for key in keys]
    return f"| {name} | " + " | ".join(cells) + " |"


def machine() -> str:
    """CPU model, logical CPUs, the SIMD features ONNX Runtime's int8 kernels depend on, and edgepipe's commit."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    name = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")),
                platform.processor() or platform.machine())
    flags = set(next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), []))
    simd = ", ".join(f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni") if f in flags) or "no AVX2"
    vnni = "VNNI" if flags & {"avx512_vnni", "avx_vnni"} else "**no VNNI**"
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    return f"{name}, {os.cpu_count()} logical CPUs ({simd}; {vnni}), edgepipe commit {commit}"


STEPS: list[str] | None = None
#: Where the reports came from when they were not built here (``--from-builds``): said in the section's header.
FROM_BUILDS: str | None = None


def render(table: list[str], verdicts: list[str], memory: list[tuple[str, int | None, int]],
           session: tuple[str, dict[str, int]] | None, fused: list[str] | None = None) -> str:
    """The doc section from what has been measured so far."""
    ladder = f"ladder steps {', '.join(STEPS)}" if STEPS else "the model's own ladder settings"
    source = FROM_BUILDS or f"one `edgepipe build -t host-cpu --no-cache` ({ladder})"
    lines = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()}, "
             f"**shared with other jobs**. Each model: {source}; "
             "all figures of a row come from that build's one interleaved measurement session (10 to 50 timed runs per "
             "artifact within a 10 s budget, p50), so fp32 and int8 saw the same load.", "", *table, "",
             f"Deployment artifact vs. the aim (p50 ≤ {TARGET_RATIO}× fp32 at the same threads, cosine ≥ 0.99):", "",
             *verdicts, "", "Memory (peak RSS of the largest process, MiB):", "",
             "| model | build | largest artifact (MiB) |", "|---|---|---|",
             *[f"| {m} | {'–' if rss is None else f'{rss / 2**20:.0f}'} | {size / 2**20:.1f} |"
               for m, rss, size in memory]]
    if fused:
        lines += ["", "Does ONNX Runtime fuse the QDQ models? Op counts of its optimised graph (this host's default "
                  "session options), the build's `model_int8.onnx` (int8 activations × int8 weights) / host-cpu's "
                  "`model_int8_qdq_u8.onnx` (the same model, uint8 activations):", "",
                  "| model | DequantizeLinear | QuantizeLinear | QLinear* | float Conv | float Add/Mul/Div |",
                  "|---|---|---|---|---|---|", *fused]
    if session is not None:
        lines += ["", f"Runtime session alone, largest model ({session[0]}): " + ", ".join(
            f"`{a}` {rss / 2**20:.0f} MiB" for a, rss in session[1].items())
            + " (peak RSS of a fresh process that opens the session, threads=1, and runs it 10 times)."]
    return "\n".join(lines)


def write(text: str, section: str = "") -> None:
    """``text`` between this script's markers in benchmarks/results/performance.md (``section``: a second, named
    table, e.g. the models held out of the zoo, with its own markers so one run never overwrites the other's)."""
    begin, end = (BEGIN, END) if not section else (f"<!-- host_int8.py:{section}:begin -->",
                                                   f"<!-- host_int8.py:{section}:end -->")
    doc = DOC.read_text(encoding="utf-8")
    block = f"{begin}\n{text}\n{end}"
    if begin in doc:
        doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, doc, flags=re.S)
    else:
        title = "Host int8 vs fp32 on real models" + (f" ({section})" if section else "")
        doc += f"\n## {title} (`benchmarks/host_int8.py`)\n\n{block}\n"
    DOC.write_text(doc, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path, help="folders with edgepipe.toml, model and data")
    parser.add_argument("--write", action="store_true", help="update benchmarks/results/performance.md")
    parser.add_argument("--steps", help="only these ladder steps, comma-separated (e.g. ptq,calibration)")
    parser.add_argument("--timeout", type=float, help="seconds one build may take (then it is reported as such)")
    parser.add_argument("--section", default="", help="write a separate, named table (e.g. held-out)")
    parser.add_argument("--from-builds", type=Path, help="read DIR/<model>/*/host-cpu/report.json (e.g. the out/ "
                        "folder of benchmarks/realzoo.py) instead of building; the build's peak RSS is then not known")
    args = parser.parse_args()
    global FROM_BUILDS  # noqa: PLW0603 - read by render()
    if args.from_builds:
        FROM_BUILDS = (f"the host-cpu report of an existing build, read from {args.from_builds} (its timing loop "
                       "ran inside that build, whatever else the build's machine was doing)")
    global TIMEOUT_S
    TIMEOUT_S = args.timeout
    steps = args.steps.split(",") if args.steps else None
    global STEPS  # noqa: PLW0603 - read by render()
    STEPS = steps
    table = ["| model | int8 form | fp32 artifact, p50 (ms) | int8 p50 (ms) | int8 ÷ fp32 | output cosine (host / "
             "exact int8) | "
             "threads | top of the op profile |", "|---|---|---|---|---|---|---|---|"]
    verdicts: list[str] = []
    fused: list[str] = []
    memory: list[tuple[str, int | None, int]] = []
    largest: tuple[str, int] | None = None
    session: tuple[str, dict[str, int]] | None = None
    with tempfile.TemporaryDirectory(prefix="host-int8-") as name:
        for model in args.models:
            out = (args.from_builds or Path(name)) / model.name
            try:
                report, rss = read_build(out) if args.from_builds else build(with_steps(model, steps, Path(name)), out)
            except RuntimeError as exc:
                verdicts.append(f"- {model.name}: build failed ({exc}).")
                if args.write:
                    write(render(table, verdicts, memory, session, fused), args.section)
                continue
            table += rows(model.name, report)
            folder = next(out.glob("*/host-cpu"))
            present = [folder / a for a in FUSED if (folder / a).is_file()]
            if present:
                fused.append(fusion_row(model.name, fusion(present)))
            verdicts.append(verdict(model.name, report))
            size = max(a["size_bytes"] for a in report["artifacts"])
            memory.append((model.name, rss, size))
            if largest is None or size > largest[1]:  # the session alone, for the largest model so far
                largest = (model.name, size)
                deployed = report["performance"].get("deployment_artifact")
                session = (model.name, {a: _run([sys.executable, "-c", _SESSION_ONLY, str(folder / a), str(ROOT)],
                                                 Path(name))[1] for a in ("model.onnx", deployed) if a})
            text = render(table, verdicts, memory, session, fused)
            print(text, flush=True)
            if args.write:
                write(text, args.section)

if __name__ == "__main__":
    main()
