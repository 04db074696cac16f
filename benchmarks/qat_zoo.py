"""QAT of real third-party ONNX models by distillation (ladder step d): PTQ vs QAT on the evaluation split.

For each zoo folder (``<zoo>/<name>/edgepipe.toml`` with ``data.calibration`` and
``data.evaluation`` image folders, prepared by ``python -m tests.thirdparty.zoo prepare``), the
ladder runs steps (a) PTQ and (d) QAT label-free on the ONNX artifact: decisions (and QAT's training
data) read only the calibration images; the **evaluation images only judge**: per image, the lowest
output cosine and SQNR of the int8 model against the original float model, for PTQ and for QAT.
The gain is the mean over evaluation images of (QAT − PTQ), with a 95% paired percentile bootstrap
interval (resampling the images; :data:`edgepipe.metrics.paired.RESAMPLES`, fixed seed).

    PYTHONPATH=$PWD python benchmarks/qat_zoo.py /work/zoo/ppocr_v4_det /work/zoo/picodet_layout \
        --epochs 8 --write docs/PYTORCH.md
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

from edgepipe.config import load_config
from edgepipe.data import Dataset, load_dataset
from edgepipe.load import load_model
from edgepipe.metrics.compare import run_outputs
from edgepipe.metrics.paired import CONFIDENCE, RESAMPLES, SEED
from edgepipe.quantize.ladder import LadderContext, run_ladder
from edgepipe.quantize.settings import ladder_settings, prepare_float_onnx
from edgepipe.stages.evaluate import thresholds_of

BEGIN, END = "<!-- benchmarks/qat_zoo.py: begin -->", "<!-- benchmarks/qat_zoo.py: end -->"


def per_sample(reference: list[np.ndarray], got: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per sample, the lowest cosine and the lowest SQNR (dB) over the outputs."""
    cosines, sqnrs = [], []
    for ref, out in zip(reference, got):
        r, o = ref.reshape(len(ref), -1).astype(np.float64), out.reshape(len(out), -1).astype(np.float64)
        dot = (r * o).sum(1)
        norms = np.linalg.norm(r, axis=1) * np.linalg.norm(o, axis=1)
        cosines.append(np.where(norms > 0, dot / np.maximum(norms, 1e-30), 1.0))
        noise = ((r - o) ** 2).sum(1)
        sqnrs.append(10 * np.log10(np.maximum((r ** 2).sum(1), 1e-30) / np.maximum(noise, 1e-30)))
    return np.min(cosines, axis=0), np.min(sqnrs, axis=0)


def paired_interval(gain: np.ndarray) -> tuple[float, float]:
    """95% paired percentile bootstrap interval of the mean of ``gain`` (one value per evaluation sample)."""
    rng = np.random.default_rng(SEED)
    means = gain[rng.integers(0, len(gain), size=(RESAMPLES, len(gain)))].mean(axis=1)
    tail = 100 * (1 - CONFIDENCE) / 2
    return float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))


def _datasets(folder: Path, config: object, model: object) -> tuple[Dataset, Dataset]:
    calibration = load_dataset(folder / config.data.calibration, model.signature, role="calibration",  # type: ignore[attr-defined]
                               preprocess=config.preprocess)  # type: ignore[attr-defined]
    evaluation = load_dataset(folder / config.data.evaluation, model.signature, role="evaluation",  # type: ignore[attr-defined]
                              preprocess=config.preprocess)  # type: ignore[attr-defined]
    return calibration, Dataset(evaluation.path, evaluation.inputs, None, evaluation.sha256, evaluation.whole)


def run_model(folder: Path, epochs: int, rate: float, scratch: Path) -> dict[str, object]:
    """The ladder (PTQ, QAT) on one zoo model, judged on its evaluation images."""
    config = load_config(folder / "edgepipe.toml")
    config = config.model_copy(update={"quantization": config.quantization.model_copy(update={
        "steps": ["ptq", "qat"], "qat_epochs": epochs, "qat_learning_rate": rate})})
    model = load_model(folder / config.model, input_shapes=config.input_shapes)
    float_path = scratch / "model.onnx"
    onnx.save(model.handle, str(float_path))
    calibration, evaluation = _datasets(folder, config, model)
    work = scratch / "ladder"
    work.mkdir()
    settings, notes = prepare_float_onnx({"onnx": float_path}, calibration, ladder_settings(config), work)
    context = LadderContext(model=model, graph=None, floats={"onnx": float_path}, calibration=calibration,
                            selection=None, evaluation=evaluation, train=None,
                            threshold=config.accuracy.max_drop_points, settings=settings, work=work,
                            thresholds=thresholds_of(config.accuracy), preparation=notes)
    context.settings = settings
    start = time.perf_counter()
    _, report = run_ladder(context)
    seconds = time.perf_counter() - start
    steps = {s.step: s for s in report.steps}
    reference = run_outputs(float_path, evaluation).arrays
    row: dict[str, object] = {"name": folder.name, "calibration": len(calibration), "evaluation": len(evaluation),
                              "seconds": seconds, "steps": steps, "final": report.final_step, "met": report.met}
    for step in ("ptq", "qat"):
        path = work / step / "model_int8.onnx"
        if step in steps and steps[step].status != "skipped" and path.is_file():
            row[step] = per_sample(reference, run_outputs(path, evaluation).arrays)
    return row


def _cell(values: np.ndarray) -> str:
    return f"{values.mean():.4f} (min {values.min():.4f})"


def table(rows: list[dict[str, object]], epochs: int, rate: float) -> str:
    """The markdown section: one row per model, then each model's ladder trail."""
    lines = ["| model | PTQ cosine, mean (min) | QAT cosine, mean (min) | gain in cosine [95% CI] | "
             "PTQ SQNR (dB) | QAT SQNR (dB) | gain in SQNR (dB) [95% CI] | ladder (s) |",
             "|---|---|---|---|---|---|---|---|"]
    trails = []
    for row in rows:
        steps = row["steps"]
        assert isinstance(steps, dict)
        if "qat" in row and "ptq" in row:
            (pc, ps), (qc, qs) = row["ptq"], row["qat"]  # type: ignore[misc]
            low_c, high_c = paired_interval(qc - pc)
            low_s, high_s = paired_interval(qs - ps)
            lines.append(f"| {row['name']} | {_cell(pc)} | {_cell(qc)} | {(qc - pc).mean():+.4f} [{low_c:+.4f}, "
                         f"{high_c:+.4f}] | {ps.mean():.2f} | {qs.mean():.2f} | {(qs - ps).mean():+.2f} "
                         f"[{low_s:+.2f}, {high_s:+.2f}] | {row['seconds']:.0f} |")
        else:
            lines.append(f"| {row['name']} | – | – | QAT did not run: {steps['qat'].note if 'qat' in steps else '–'} "
                         f"| – | – | – | {row['seconds']:.0f} |")
        trails.append(f"- {row['name']} ({row['calibration']} calibration / {row['evaluation']} evaluation images): "
                      + "; ".join(f"{s.step} {s.status} (selection cosine "
                                  f"{s.selection['onnx'].min_cosine if 'onnx' in s.selection else '–'}) — {s.note}"
                                  for s in steps.values()) + f"; kept: {row['final']}")
    return "\n".join(lines) + "\n\nLadder trails (decisions on the calibration images):\n\n" + "\n".join(trails)


def _commit() -> str:
    """The commit the run starts from (read at the start: later commits must not be credited)."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=False).stdout.strip() or "unknown"


def _header(epochs: int, rate: float, runs: int, commit: str) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"Measured {now} by `benchmarks/qat_zoo.py` at commit {commit} on {platform.machine()} "
            f"({os.cpu_count()} CPUs, a machine shared with other jobs: seconds are indicative only); {runs} run "
            f"per model, deterministic seeds. QAT: {epochs} passes over the calibration images (one Adam step per "
            f"image), lr {rate:g}. Cosine/SQNR: per evaluation image, the lowest over the model's outputs, "
            f"against the original float ONNX; the gain is QAT − PTQ per image, 95% paired bootstrap interval.\n\n")


def write(doc: Path, section: str) -> None:
    text = doc.read_text(encoding="utf-8")
    block = f"{BEGIN}\n{section}\n{END}"
    if BEGIN in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    doc.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--epochs", type=int, default=8, help="passes over the calibration images")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--write", type=Path, help="markdown file whose qat_zoo section is replaced")
    args = parser.parse_args()
    logging.basicConfig(format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("edgepipe.quantize.qat_onnx").setLevel(logging.INFO)
    commit = _commit()
    rows = []
    for folder in args.folders:
        with tempfile.TemporaryDirectory() as scratch:
            rows.append(run_model(folder, args.epochs, args.lr, Path(scratch)))
        print(table(rows[-1:], args.epochs, args.lr), flush=True)
    section = _header(args.epochs, args.lr, 1, commit) + table(rows, args.epochs, args.lr)
    print(section)
    if args.write:
        write(args.write, section)


if __name__ == "__main__":
    main()
