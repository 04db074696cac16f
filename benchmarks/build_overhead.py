"""Time ``edgepipe build`` against the raw tool calls it makes, on the reference model and on real zoo models.

Every command runs as a fresh process, alternating (raw, edgepipe, [edgepipe --all-targets, raw + vendors])
round after round, so load drifting on a shared machine hits all of them alike; min/median/max wall time (s) per
column, the ratio of medians, each build's peak RSS (the largest process of it, from ``wait4``), and
the stage profile of the last edgepipe build (report.json ``stages``).

- Reference model (``digits``): the raw side is a script making the same library calls by hand: load the
  .keras model, tf2onnx + TFLite converter, quant_pre_process + quantize_static (QDQ, per-channel),
  converter with a representative dataset, evaluate and time the four artifacts (5 warm-up + 50 runs).
- A real ONNX model (a folder with ``edgepipe.toml``, e.g. /work/zoo/ppocr_v5_det): ``edgepipe build``
  for host-cpu and ethos-u55 vs. the raw calls it wraps: ONNX Runtime quant_pre_process +
  quantize_static (QDQ, per-channel, int8) and onnx2tf float + full-integer TFLite with the same
  calibration data, on the static-shape float ONNX edgepipe exports (made once, untimed).
- With ``--all-targets``, ``edgepipe build --all-targets`` against the same raw calls followed by the vendor
  compilers that build runs (``RAW_VENDORS``: Vela for both Ethos-U targets, the QNN HTP emulator, rknn-toolkit2
  for rk3588 and rk3576 with its simulator's accuracy analysis), so the ratio shows what edgepipe adds to them.

Run: ``python benchmarks/build_overhead.py --runs 5 --all-targets --write digits /work/zoo/ppocr_v5_det``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "benchmarks" / "results" / "performance.md"
BEGIN, END = "<!-- build_overhead.py:begin -->", "<!-- build_overhead.py:end -->"
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_overhead_raw import RAW_KERAS, RAW_ONNX, RAW_VENDORS  # noqa: E402 - the scripts live beside this one
from host_int8 import machine  # noqa: E402

from edgepipe.vendors.rknn.toolkit import Rknn  # noqa: E402


def _timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    """Wall time (s) and peak RSS (bytes, largest process of the command) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode not in (0, 2):  # 2: the build's gate failed; its timing still counts
        raise RuntimeError(f"{' '.join(cmd[:4])} … exited {proc.returncode}: {err[-2000:]}")
    return seconds, usage.ru_maxrss * 1024


def _stage_seconds(report: Path) -> dict[str, float]:
    """Seconds per stage name (targets folded together) from a build's report.json."""
    totals: dict[str, float] = {}
    for stage in json.loads(report.read_text())["stages"]:
        name = stage["name"].split(":")[0]
        totals[name] = totals.get(name, 0.0) + stage["seconds"]
    return totals


def _edgepipe_cmd(model: str, out: Path, all_targets: bool) -> list[str]:
    exe = str(Path(sys.executable).with_name("edgepipe"))
    targets = ["--all-targets"] if all_targets else ["-t", "host-cpu", "-t", "ethos-u55"]
    config = [] if model == "digits" else ["--config", str(Path(model) / "edgepipe.toml")]
    return [exe, "build", "--quiet", "--no-cache", *config, *targets, "--output", str(out)]


def _prepare_raw(model: str, tmp: Path, env: dict[str, str]) -> list[str]:
    """The raw command for ``model``; for a real model, first (untimed) the static float ONNX edgepipe's
    loader makes of it and its calibration arrays (``tmp/calib/<input>.npy``), with edgepipe's own loader and
    preprocessing."""
    if model == "digits":
        (tmp / "calib").mkdir()
        np.save(tmp / "calib" / "input.npy", np.load(ROOT / "calib" / "digits" / "calibration.npz")["input"])
        script = tmp / "raw_keras.py"
        script.write_text(RAW_KERAS)
        return [sys.executable, str(script), str(ROOT), "{out}"]
    subprocess.run([sys.executable, "-c", _DUMP_CALIB, str(Path(model) / "edgepipe.toml"), str(tmp / "calib")],
                   env=env, check=True)
    script = tmp / "raw_onnx.py"
    script.write_text(RAW_ONNX)
    return [sys.executable, str(script), str(tmp / "calib" / "model.onnx"), str(tmp / "calib"), "{out}"]


_DUMP_CALIB = r'''
import sys, numpy as np
from pathlib import Path
from edgepipe.config import load_config
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import validate_inputs
config = load_config(Path(sys.argv[1]))
inputs = validate_inputs(config, StageLog(None))
out = Path(sys.argv[2]); out.mkdir(exist_ok=True)
import onnx
from edgepipe.graph.onnx_edit import constants_to_initializers
model = onnx.ModelProto(); model.CopyFrom(inputs.model.handle); constants_to_initializers(model)
onnx.save(model, str(out / "model.onnx"))
for spec, array in zip(inputs.model.signature.inputs, inputs.calibration.inputs):
    np.save(out / f"{spec.name}.npy", np.asarray(array))
'''


def _vendor_cmd(raw: list[str], tmp: Path) -> list[str]:
    """The raw calls followed by the vendor compilers an ``--all-targets`` build runs (RAW_VENDORS)."""
    script = tmp / "raw_vendors.py"
    script.write_text(RAW_VENDORS)
    return [sys.executable, str(script), "{out}", str(tmp / "calib"), str(Rknn.env.python), *raw]


def _spread(values: list[float]) -> str:
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def measure(model: str, runs: int, all_targets: bool,
            done: Callable[[list[str]], None] = lambda lines: None) -> list[str]:
    """Alternating runs for one model; the Markdown lines of its section (also given to ``done`` after each
    round, so a long measurement on a busy machine leaves its completed rounds behind)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    columns: dict[str, list[float]] = {"raw": [], "edgepipe": []} | ({"all": [], "raw_all": []} if all_targets
                                                                      else {})
    rss: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="build-overhead-") as name:
        tmp = Path(name)
        raw = _prepare_raw(model, tmp, env)
        commands = {"raw": raw, "raw_all": _vendor_cmd(raw, tmp)}
        for i in range(runs):
            for column in columns:
                out = tmp / f"{column}{i}"
                if column in commands:
                    out.mkdir()
                    cmd = [str(out) if a == "{out}" else a for a in commands[column]]
                else:
                    cmd = _edgepipe_cmd(model, out, column == "all")
                seconds, peak = _timed(cmd, tmp, env)
                columns[column].append(seconds)
                rss[column] = max(rss.get(column, 0), peak)
            report = next((tmp / f"edgepipe{i}").glob("*/host-cpu/report.json"))
            lines = _section(model, columns, rss, _stage_seconds(report))
            done(lines)
    return lines


def _section(model: str, columns: dict[str, list[float]], rss: dict[str, int], stages: dict[str, float]) -> list[str]:
    all_targets = "all" in columns
    label = "reference model digits_cnn (Keras)" if model == "digits" else f"{Path(model).name} (ONNX)"
    median = {c: statistics.median(v) for c, v in columns.items()}
    lines = [f"### {label}", "", f"{len(columns['raw'])} alternating rounds.", "",
             "| command | min / median / max (s) | peak RSS (MiB) |", "|---|---|---|",
             f"| `edgepipe build` host-cpu + ethos-u55 | {_spread(columns['edgepipe'])} | "
             f"{rss['edgepipe'] / 2**20:.0f} |",
             f"| raw tool calls it wraps | {_spread(columns['raw'])} | {rss['raw'] / 2**20:.0f} |"]
    if all_targets:
        lines += [f"| `edgepipe build --all-targets` | {_spread(columns['all'])} | {rss['all'] / 2**20:.0f} |",
                  f"| raw tool calls + the vendor compilers `--all-targets` runs (Vela ×2, QNN HTP, RKNN ×2) | "
                  f"{_spread(columns['raw_all'])} | {rss['raw_all'] / 2**20:.0f} |"]
    lines += ["", f"**edgepipe / raw (medians): {median['edgepipe'] / median['raw']:.2f}×**"
              + (f"; **`--all-targets` / its raw calls and vendor compilers: {median['all'] / median['raw_all']:.2f}×**"
                 f" (`--all-targets` / the two-target raw calls: {median['all'] / median['raw']:.2f}×)."
                 if all_targets else "."), "",
              "Stages of the last `edgepipe build` (s): " + ", ".join(f"{n} {s:.1f}" for n, s in stages.items()), ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="'digits' or a folder with edgepipe.toml and an ONNX model")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--all-targets", action="store_true", help="also time `edgepipe build --all-targets`")
    parser.add_argument("--write", action="store_true", help="update benchmarks/results/performance.md")
    args = parser.parse_args()
    lines = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()}, **shared with other "
             f"jobs** (absolute times drift; the ratios come from the same alternating rounds: raw, then edgepipe). "
             f"Up to {args.runs} rounds, fresh processes, `--no-cache`.", ""]
    sections: dict[str, list[str]] = {}
    for model in args.models:

        def done(section: list[str], model: str = model) -> None:
            sections[model] = section
            print("\n".join(section), flush=True)
            if args.write:
                write_sections([model], lines[:2], sections)

        measure(model, args.runs, args.all_targets, done)


def write_sections(models: list[str], header: list[str], sections: dict[str, list[str]]) -> None:
    """Each model's lines between its own markers in benchmarks/results/performance.md (other models' sections stay)."""
    doc = DOC.read_text(encoding="utf-8")
    if BEGIN not in doc:
        doc += f"\n## Build time: edgepipe vs the raw tool calls (`benchmarks/build_overhead.py`)\n\n{BEGIN}\n{END}\n"
    for model in models:
        key = "digits" if model == "digits" else Path(model).name
        begin, end = f"<!-- build_overhead.py:{key}:begin -->", f"<!-- build_overhead.py:{key}:end -->"
        block = "\n".join([begin, *header, *sections[model], end])
        if begin in doc:
            doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _, b=block: b, doc, flags=re.S)
        else:
            doc = doc.replace(END, f"{block}\n{END}")
    DOC.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    main()
