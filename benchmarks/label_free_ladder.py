"""The fallback ladder without labels on real OCR models: output cosine after each step, and on the evaluation split.

For each zoo model folder given (``<zoo>/<name>/edgepipe.toml`` with ``data.calibration`` and
``data.evaluation`` image folders, e.g. PaddleOCR det/rec prepared by ``python -m
tests.realmodels.zoo prepare``), the calibration images are split in two: the first half
calibrates, the second half is the **selection split** every ladder decision reads; the
evaluation images only judge the kept artifact. The ONNX artifact only (no TFLite), label-free
(``[accuracy] min_cosine``, default 0.99).

    PYTHONPATH=$PWD python benchmarks/label_free_ladder.py /work/zoo/ppocr_v4_det /work/zoo/ppocr_v4_rec \
        --methods minmax --write benchmarks/results/label_free_ladder.md
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

from edgepipe.config import load_config
from edgepipe.data.dataset import Dataset, load_dataset
from edgepipe.load import load_model
from edgepipe.metrics.compare import run_outputs
from edgepipe.metrics.label_free import compare_outputs
from edgepipe.quantize.ladder import LadderContext, run_ladder
from edgepipe.quantize.settings import ladder_settings, prepare_float_onnx
from edgepipe.stages.evaluate import thresholds_of


def _half(data: Dataset, first: bool) -> Dataset:
    mid = len(data) // 2
    part = slice(0, mid) if first else slice(mid, None)
    return Dataset(data.path, tuple(a[part] for a in data.inputs), None, data.sha256, data.whole)


def run_model(folder: Path, methods: list[str], scratch: Path) -> tuple[list[str], list[str]]:
    """Markdown rows for one model: each ladder step's selection cosine, then the kept artifact on evaluation."""
    config = load_config(folder / "edgepipe.toml")
    config = config.model_copy(update={"quantization": config.quantization.model_copy(update={
        "methods": methods, "steps": ["ptq", "calibration", "mixed"]})})
    model = load_model(folder / config.model, input_shapes=config.input_shapes)
    float_path = scratch / "model.onnx"
    onnx.save(model.handle, str(float_path))
    calibration_all = load_dataset(folder / config.data.calibration, model.signature, role="calibration",
                                   preprocess=config.preprocess)
    evaluation = load_dataset(folder / config.data.evaluation, model.signature, role="evaluation",
                              preprocess=config.preprocess)
    evaluation = Dataset(evaluation.path, evaluation.inputs, None, evaluation.sha256, evaluation.whole)
    calibration, selection = _half(calibration_all, True), _half(calibration_all, False)
    work = scratch / "ladder"
    work.mkdir()
    settings, notes = prepare_float_onnx({"onnx": float_path}, calibration, ladder_settings(config), work)
    context = LadderContext(model=model, graph=None, floats={"onnx": float_path}, calibration=calibration,
                            selection=selection, evaluation=evaluation, train=None,
                            threshold=config.accuracy.max_drop_points, settings=settings, work=work,
                            thresholds=thresholds_of(config.accuracy), preparation=notes)
    start = time.perf_counter()
    kept, report = run_ladder(context)
    seconds = time.perf_counter() - start
    name = folder.name
    rows = [f"| {name} | {s.step} | {s.status} | {s.recipe.get('onnx', '–')} | "
            f"{s.selection['onnx'].min_cosine:.4f} | {s.selection['onnx'].min_sqnr_db:.1f} | – | {s.seconds:.0f} |"
            for s in report.steps if "onnx" in s.selection]
    reference, got = run_outputs(float_path, evaluation), run_outputs(kept[0].path, evaluation)
    judged = [compare_outputs(n, r, g) for n, r, g in zip(reference.names, reference.arrays, got.arrays)]
    kept_step = next(s for s in report.steps if s.step == report.final_step)
    rows.append(f"| {name} | **kept: {report.final_step}** | {'met' if report.met else 'missed'} | "
                f"{kept_step.recipe.get('onnx', '–')} | – | – | "
                f"{min(j.cosine for j in judged):.4f} (evaluation, {len(evaluation)} images) | {seconds:.0f} |")
    extra = [f"- {name}: preparation: {n}" for n in report.preparation]
    extra += [f"- {name}: kept above int8: " + ", ".join(f"`{k.layer}` ({k.precision})" for k in
                                                          kept_step.kept_layers.get("onnx", [])) or "none"]
    extra += [f"- {name}: {s.step} ran because: {s.why}" for s in report.steps]
    return rows, extra


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--methods", nargs="+", default=["minmax", "percentile", "entropy"])
    parser.add_argument("--write", type=Path, help="write the section to this markdown file")
    args = parser.parse_args()
    rows, notes = [], []
    for folder in args.folders:
        with tempfile.TemporaryDirectory() as scratch:
            got_rows, got_notes = run_model(folder, args.methods, Path(scratch))
            rows += got_rows
            notes += got_notes
    text = "\n".join([
        "## Label-free fallback ladder on real OCR models (`benchmarks/label_free_ladder.py`)", "",
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} CPU cores shared with other jobs (times are noisy), one run per model, "
        f"calibration methods {', '.join(args.methods)}. Decisions on the selection split (the second half "
        "of the calibration images); the kept artifact judged on the evaluation images.", "",
        "| model | step | on selection | setting | lowest output cosine (selection) | lowest SQNR (dB) "
        "| lowest output cosine (judged) | time (s) |", "|---|---|---|---|---|---|---|---|", *rows, "", *notes, ""])
    if args.write:
        args.write.write_text(text, encoding="utf-8")
    print(text)  # noqa: T201 - a script's output


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
