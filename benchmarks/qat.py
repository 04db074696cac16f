"""PTQ vs QAT (PyTorch pt2e) on the PyTorch reference model digits_vit, measured on the evaluation split only.

The .pt2 is loaded and exported to ONNX the way ``edgepipe build`` does, then the ladder runs
twice on an int8-only target (``precisions = ["int8"]``, so mixed precision cannot keep layers
in float): once with the labelled training split (QAT on the task loss) and once without it
(QAT by distillation from the float model on the calibration inputs). Settings are chosen on
the selection split; every accuracy below is on the 400-image evaluation split, which the
ladder only gates on. The gain QAT − PTQ gets a 95% paired-bootstrap interval (10,000
resamples of the evaluation images, seed 0). ``--write`` puts the section into docs/PYTORCH.md.
Run: ``OMP_NUM_THREADS=1 python benchmarks/qat.py --write``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DOC = ROOT / "docs" / "PYTORCH.md"
DATA = ROOT / "calib" / "digits"
MODEL = ROOT / "models" / "digits_vit" / "digits_vit.pt2"
EPOCHS, LEARNING_RATE = 3, 1e-3
BEGIN, END = "<!-- benchmarks/qat.py: begin -->", "<!-- benchmarks/qat.py: end -->"


def paired_bootstrap_gain_ci(before: np.ndarray, after: np.ndarray, resamples: int = 10_000,
                             seed: int = 0) -> tuple[float, float, float]:
    """Gain in accuracy points (after − before) on the same samples and its 95% paired-bootstrap interval.

    ``before``/``after``: per-sample correctness (0/1) of two models on the same images, in order.
    """
    rng = np.random.default_rng(seed)
    diff = after.astype(np.float64) - before.astype(np.float64)
    means = diff[rng.integers(0, len(diff), size=(resamples, len(diff)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return 100 * float(diff.mean()), 100 * float(low), 100 * float(high)


def _correct(path: Path, dataset: object) -> np.ndarray:
    from edgepipe.evaluate import predict_logits

    logits = predict_logits(path, dataset)
    return (logits.reshape(len(logits), -1).argmax(1) == dataset.labels).astype(np.int8)


def run(labelled: bool, scratch: Path) -> dict:
    """One ladder run (labels or distillation): its trail and per-sample correctness of PTQ and QAT."""
    from edgepipe.data import load_dataset
    from edgepipe.export.torch_to_onnx import export_program_to_onnx
    from edgepipe.load import load_model
    from edgepipe.quantize.ladder import LadderContext, LadderSettings, run_ladder

    model = load_model(MODEL)
    onnx = export_program_to_onnx(model.handle.program, scratch / "model.onnx")

    def split(role: str, labels: bool = True) -> object:
        return load_dataset(DATA / f"{role}.npz", model.signature, role=role, need_labels=labels)

    settings = LadderSettings(steps=("ptq", "calibration", "mixed", "qat"), precisions=("int8",),
                              qat_epochs=EPOCHS, qat_learning_rate=LEARNING_RATE)
    context = LadderContext(model=model, graph=None, floats={"onnx": onnx}, calibration=split("calibration", False),
                            selection=split("selection"), evaluation=split("evaluation"),
                            train=split("train") if labelled else None, threshold=1.0, settings=settings,
                            work=scratch / "ladder")
    start = time.perf_counter()
    _, report = run_ladder(context)
    seconds = time.perf_counter() - start
    work = scratch / "ladder"
    qat = work / "qat" / "model_int8.onnx"  # absent when an earlier step met the threshold
    return {"report": report, "seconds": seconds, "float": _correct(onnx, context.evaluation),
            "ptq": _correct(work / "ptq" / "model_int8.onnx", context.evaluation),
            "qat": _correct(qat, context.evaluation) if qat.is_file() else None}


def section(results: dict[str, dict]) -> str:
    """The Markdown written between the markers of docs/PYTORCH.md."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [BEGIN, f"Measured {stamp} by `benchmarks/qat.py` on {platform.machine()} ({os.cpu_count()} CPUs, "
             "a machine shared with other jobs: seconds are indicative only); one run per row, deterministic "
             f"seeds. QAT: {EPOCHS} epochs, Adam lr {LEARNING_RATE:g}. Evaluation split: 400 images.", "",
             "| QAT loss | float top-1 | PTQ top-1 | QAT top-1 | gain QAT − PTQ (points) | 95% CI (paired bootstrap) |"
             " ladder (s) |", "|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        if r["qat"] is None:
            lines.append(f"| {name} | {r['float'].mean():.4f} | {r['ptq'].mean():.4f} | not reached: the ladder "
                         f"stopped at {r['report'].final_step} | – | – | {r['seconds']:.0f} |")
            continue
        gain, low, high = paired_bootstrap_gain_ci(r["ptq"], r["qat"])
        lines.append(f"| {name} | {r['float'].mean():.4f} | {r['ptq'].mean():.4f} | {r['qat'].mean():.4f} | "
                     f"{gain:+.2f} | [{low:+.2f}, {high:+.2f}] | {r['seconds']:.0f} |")
    for name, r in results.items():
        lines += ["", f"Ladder trail ({name}):", "", "| step | status | evaluation top-1 | drop (points) | note |",
                  "|---|---|---|---|---|"]
        for step in r["report"].steps:
            note = step.note.replace("|", "/")
            lines.append(f"| {step.step} | {step.status} | {step.accuracy.get('onnx', '–')} | "
                         f"{step.drop_points.get('onnx', '–')} | {note} |")
    return "\n".join([*lines, END])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the section into docs/PYTORCH.md")
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
