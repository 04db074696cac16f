"""PTQ vs QAT (PyTorch pt2e) on the PyTorch reference model digits_irnn, measured on the evaluation split only.

The ladder runs with the settings ``edgepipe build`` derives from ``models/digits_irnn/edgepipe.toml``
and its target (edge-tpu: int8 only, so mixed precision has nothing to keep higher): PTQ →
calibration search → mixed (skipped) → QAT. The .pt2 is loaded and exported to ONNX the way the
build does, then the ladder runs twice: once with the labelled training split (QAT on the task
loss, the config's learning rate) and once without it (QAT by distillation from the float model on
the calibration inputs, lr :data:`DISTILLATION_LEARNING_RATE`). Settings are chosen on the selection
split; every accuracy below is on the 400-image evaluation split, which the ladder only gates on.
The gain QAT − PTQ gets a 95% paired-bootstrap interval (:func:`edgepipe.metrics.paired.paired_drop`).
``--write`` puts the section into benchmarks/results/pytorch.md.
Run: ``OMP_NUM_THREADS=1 python benchmarks/qat.py --write``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DOC = ROOT / "benchmarks" / "results" / "pytorch.md"
FOLDER = ROOT / "models" / "digits_irnn"
#: Distillation's MSE on the logits moves the weights less per step than cross-entropy: a larger Adam step.
DISTILLATION_LEARNING_RATE = 1e-4
BEGIN, END = "<!-- benchmarks/qat.py: begin -->", "<!-- benchmarks/qat.py: end -->"


def _correct(path: Path, dataset: object) -> np.ndarray:
    from edgepipe.metrics.accuracy import predict_logits

    logits = predict_logits(path, dataset)
    return logits.reshape(len(logits), -1).argmax(1) == dataset.labels


def run(labelled: bool, scratch: Path) -> dict:
    """One ladder run (labels or distillation): its trail and per-sample correctness of float, PTQ and QAT."""
    from edgepipe.config import load_config
    from edgepipe.data.dataset import load_dataset
    from edgepipe.export.torch_to_onnx import export_program_to_onnx
    from edgepipe.load import load_model
    from edgepipe.quantize.ladder import LadderContext, run_ladder
    from edgepipe.quantize.settings import ladder_settings
    from edgepipe.targets.registry import load_profiles

    config = load_config(FOLDER / "edgepipe.toml")
    settings = ladder_settings(config, load_profiles(config.targets))
    if not labelled:
        settings = replace(settings, qat_learning_rate=DISTILLATION_LEARNING_RATE)
    model = load_model(config.model)
    onnx = export_program_to_onnx(model.handle.program, scratch / "model.onnx")

    def split(role: str, labels: bool = True) -> object:
        return load_dataset(getattr(config.data, role), model.signature, role=role, need_labels=labels)

    context = LadderContext(model=model, graph=None, floats={"onnx": onnx}, calibration=split("calibration", False),
                            selection=split("selection"), evaluation=split("evaluation"),
                            train=split("train") if labelled else None, threshold=config.accuracy.max_drop_points,
                            settings=settings, work=scratch / "ladder")
    start = time.perf_counter()
    _, report = run_ladder(context)
    seconds = time.perf_counter() - start
    work = scratch / "ladder"
    qat = work / "qat" / "model_int8.onnx"  # absent when an earlier step met the threshold
    return {"report": report, "seconds": seconds, "settings": settings, "float": _correct(onnx, context.evaluation),
            "ptq": _correct(work / "ptq" / "model_int8.onnx", context.evaluation),
            "qat": _correct(qat, context.evaluation) if qat.is_file() else None}


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def _row(name: str, r: dict) -> str:
    from edgepipe.metrics.paired import paired_drop

    head = (f"| {name} | {r['settings'].qat_learning_rate:g} | {r['float'].mean():.4f} | {r['ptq'].mean():.4f} | ")
    if r["qat"] is None:
        return head + f"not reached: the ladder stopped at {r['report'].final_step} | – | – | {r['seconds']:.0f} |"
    gain = paired_drop(r["qat"], r["ptq"])  # "float − int8" with QAT as the reference: QAT − PTQ
    return head + (f"{r['qat'].mean():.4f} | {gain.drop_points:+.2f} | [{gain.low_points:+.2f}, "
                   f"{gain.high_points:+.2f}] | {r['report'].final_step} | {r['seconds']:.0f} |")


def section(results: dict[str, dict]) -> str:
    """The Markdown written between the markers of benchmarks/results/pytorch.md."""
    from edgepipe.metrics.paired import RESAMPLES

    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    epochs = next(iter(results.values()))["settings"].qat_epochs
    lines = [BEGIN, f"Measured {stamp} by `benchmarks/qat.py` at commit {_commit()} on {platform.machine()} "
             f"({os.cpu_count()} CPUs, a machine shared with other jobs: seconds are indicative only); one run per "
             f"row, deterministic seeds. QAT: {epochs} epochs, Adam, batch 32. Evaluation split: 400 images; the "
             f"gain's interval is a paired bootstrap ({RESAMPLES:,} resamples of the evaluation images).", "",
             "| QAT loss | QAT lr | float top-1 | PTQ top-1 | QAT top-1 | gain QAT − PTQ (points) | "
             "95% CI (paired bootstrap) | kept | ladder (s) |", "|---|---|---|---|---|---|---|---|---|"]
    lines += [_row(name, r) for name, r in results.items()]
    for name, r in results.items():
        lines += ["", f"Ladder trail ({name}):", "",
                  "| step | status | recipe | selection: top-1 changed (points) | evaluation top-1 | drop (points) |",
                  "|---|---|---|---|---|---|"]
        for step in r["report"].steps:
            selection = step.selection.get("onnx")
            flips = "–" if selection is None or selection.flips_points is None else f"{selection.flips_points:.2f}"
            lines.append(f"| {step.step} | {step.status} | {step.recipe.get('onnx', '–')} | {flips} | "
                         f"{step.accuracy.get('onnx', '–')} | {step.drop_points.get('onnx', '–')} |")
        tried = [c for step in r["report"].steps for c in step.candidates]
        if tried:
            lines += ["", "Calibration settings step (b) scored (selection split: top-1 changed against float, "
                      "points): " + "; ".join(f"{c.recipe} {c.flips_points:.2f}" for c in tried) + "."]
    return "\n".join([*lines, END])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the section into benchmarks/results/pytorch.md")
    args = parser.parse_args()
    results = {}
    for name, labelled in (("labels (cross-entropy, 1,000 training images)", True),
                           ("distillation (MSE to float outputs, 200 calibration images)", False)):
        with tempfile.TemporaryDirectory() as scratch:
            results[name] = run(labelled, Path(scratch))
    text = section(results)
    print(text)
    if args.write:
        doc = DOC.read_text(encoding="utf-8")
        DOC.write_text(re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: text, doc, flags=re.S),
                       encoding="utf-8")


if __name__ == "__main__":
    main()
