"""QAT of real third-party ONNX models by distillation (ladder step d): PTQ vs QAT on the evaluation split.

For each zoo folder (``<zoo>/<name>/edgepipe.toml`` with ``data.calibration`` and
``data.evaluation`` folders, prepared by ``python -m tests.realmodels.zoo prepare``; ONNX models,
and float TFLite ones through the ONNX form tf2onnx makes of them, as a build does), the ladder
runs steps (a) PTQ, (b) the calibration search and (e) QAT label-free on the ONNX artifact:
decisions (and QAT's training data) read only the calibration samples; the **evaluation samples
only judge**: per sample, the lowest output cosine and SQNR of the int8 model against the original
float model, for the best PTQ (step b's artifact: QAT starts from its recipe) and for QAT. The gain
is the mean over evaluation samples of (QAT − PTQ), with a 95% paired percentile bootstrap interval
(resampling the samples; :data:`edgepipe.metrics.paired.RESAMPLES`, fixed seed).

    PYTHONPATH=$PWD python benchmarks/qat_zoo.py /work/zoo/ppocr_v4_rec /work/zoo/hand_landmark \
        --write benchmarks/results/pytorch.md
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
from edgepipe.data.dataset import Dataset, load_dataset
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


#: The ladder steps run; QAT is compared with the last PTQ step's artifact (its recipe is QAT's).
STEPS = ("ptq", "calibration", "qat")


def _float_onnx(folder: Path, config: object, model: object, calibration: Dataset, out: Path) -> Path:
    """The float ONNX the ladder quantizes: the model itself, or tf2onnx's form of a float TFLite."""
    if model.format == "tflite":  # type: ignore[attr-defined]
        from edgepipe.export.tflite_to_onnx import convert_tflite_to_onnx

        return convert_tflite_to_onnx(folder / config.model, out, list(calibration.samples(4)))  # type: ignore[attr-defined]
    onnx.save(model.handle, str(out))  # type: ignore[attr-defined]
    return out


def run_model(folder: Path, epochs: int | None, rate: float | None, scratch: Path) -> dict[str, object]:
    """The ladder (PTQ, calibration, QAT) on one zoo model, judged on its evaluation samples."""
    config = load_config(folder / "edgepipe.toml")
    update: dict[str, object] = {"steps": list(STEPS)}
    update.update({k: v for k, v in (("qat_epochs", epochs), ("qat_learning_rate", rate)) if v is not None})
    config = config.model_copy(update={"quantization": config.quantization.model_copy(update=update)})
    model = load_model(folder / config.model, input_shapes=config.input_shapes)
    calibration, evaluation = _datasets(folder, config, model)
    float_path = _float_onnx(folder, config, model, calibration, scratch / "model.onnx")
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
                              "seconds": seconds, "steps": steps, "final": report.final_step, "met": report.met,
                              "format": model.format, "epochs": settings.qat_epochs,
                              "rate": settings.qat_learning_rate}
    if "onnx" in context.best_recipe:
        row["simulation"] = simulation_error(float_path, calibration, context.best_recipe["onnx"], work)
    for step, key in (("calibration", "ptq"), ("qat", "qat")):
        path = work / step / "model_int8.onnx"
        if step in steps and steps[step].status != "skipped" and path.is_file():
            row[key] = per_sample(reference, run_outputs(path, evaluation).arrays)
            row[f"{key}_recipe"] = steps[step].recipe.get("onnx", "–")
    return row


def simulation_error(float_path: Path, calibration: Dataset, recipe: object, scratch: Path,
                     samples: int = 4) -> tuple[float, float]:
    """How far QAT's fake-quantized model is from the real int8 one, as a share of int8's distance to float.

    ``(as ORT's QDQ model quantizes the graph it quantizes, min/max ranges on every activation)``: the worst output's
    ``|sim − int8| / |int8 − float|`` over the first ``samples`` calibration samples. 0 is the int8 model
    itself; about 1 (or more) is rounding noise unrelated to the int8 model's.
    """
    import torch

    from edgepipe.quantize.fake_quant_fx import calibrate_ranges, insert_fake_quant
    from edgepipe.quantize.onnx_qdq import orts_quantization, quantize_onnx
    from edgepipe.quantize.onnx_to_torch import convert_onnx, run_module
    from edgepipe.quantize.qat_onnx import subset

    data = subset(calibration, samples)
    graph, reference = orts_quantization(float_path, calibration, recipe, scratch)  # type: ignore[arg-type]
    int8_path = quantize_onnx(float_path, scratch / "simulation_int8.onnx", calibration, recipe, scratch)  # type: ignore[arg-type]
    floats, int8 = run_outputs(float_path, data).arrays, run_outputs(int8_path, data).arrays
    errors = []
    for given in (reference, None):
        trainable = convert_onnx(graph, data)
        quantizers = insert_fake_quant(trainable.module, recipe.per_channel, given,  # type: ignore[attr-defined]
                                       trainable.tensors, trainable.sources,
                                       recipe.symmetric_activations)  # type: ignore[attr-defined]
        if given is None:
            calibrate_ranges(trainable.module, quantizers, list(calibration.samples()))
        with torch.no_grad():
            outs = [run_module(trainable.module, tuple(s)) for s in data.samples()]
        worst = 0.0
        for index, (f, q) in enumerate(zip(floats, int8)):
            sim = np.concatenate([o[index].numpy().reshape(1, -1) for o in outs]).reshape(q.shape)
            worst = max(worst, float(np.linalg.norm(sim - q)) / max(float(np.linalg.norm(q - f)), 1e-30))
        errors.append(worst)
    return errors[0], errors[1]


def _simulation(row: dict[str, object]) -> str:
    simulation = row.get("simulation")
    return f"{simulation[0]:.2f} / {simulation[1]:.2f}" if isinstance(simulation, tuple) else "–"


def _cell(values: np.ndarray) -> str:
    return f"{values.mean():.4f} (min {values.min():.4f})"


def table(rows: list[dict[str, object]]) -> str:
    """The markdown section: one row per model, then each model's ladder trail."""
    lines = ["| model | input | best PTQ recipe (step b) | PTQ cosine, mean (min) | QAT cosine, mean (min) | "
             "gain in cosine [95% CI] | PTQ SQNR (dB) | QAT SQNR (dB) | gain in SQNR (dB) [95% CI] | "
             "simulation error: ORT's QDQ / min-max | ladder (s) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    trails = []
    for row in rows:
        steps = row["steps"]
        assert isinstance(steps, dict)
        if "qat" in row and "ptq" in row:
            ptq, qat = row["ptq"], row["qat"]
            assert isinstance(ptq, tuple) and isinstance(qat, tuple)
            (pc, ps), (qc, qs) = ptq, qat
            low_c, high_c = paired_interval(qc - pc)
            low_s, high_s = paired_interval(qs - ps)
            lines.append(f"| {row['name']} | {row['format']} | {row['ptq_recipe']} | {_cell(pc)} | {_cell(qc)} | "
                         f"{(qc - pc).mean():+.4f} [{low_c:+.4f}, "
                         f"{high_c:+.4f}] | {ps.mean():.2f} | {qs.mean():.2f} | {(qs - ps).mean():+.2f} "
                         f"[{low_s:+.2f}, {high_s:+.2f}] | {_simulation(row)} | {row['seconds']:.0f} |")
        else:
            lines.append(f"| {row['name']} | {row['format']} | – | – | – | QAT did not run: "
                         f"{steps['qat'].note if 'qat' in steps else '–'} | – | – | – | {_simulation(row)} | "
                         f"{row['seconds']:.0f} |")
        trails.append(f"- {row['name']} ({row['calibration']} calibration / {row['evaluation']} evaluation samples): "
                      + "; ".join(f"{s.step} {s.status} (selection cosine "
                                  f"{s.selection['onnx'].min_cosine if 'onnx' in s.selection else '–'}) — {s.note}"
                                  for s in steps.values()) + f"; kept: {row['final']}")
    return "\n".join(lines) + "\n\nLadder trails (decisions on the calibration samples):\n\n" + "\n".join(trails)


def _commit() -> str:
    """The commit the run starts from (read at the start: later commits must not be credited)."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=False).stdout.strip() or "unknown"


def _header(rows: list[dict[str, object]], runs: int, commit: str) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    settings = sorted({(r["epochs"], r["rate"]) for r in rows})
    qat = "; ".join(f"{e} passes over the calibration samples (one Adam step per sample), starting lr {r:g}"
                    for e, r in settings)
    return (f"Measured {now} by `benchmarks/qat_zoo.py` at commit {commit} on {platform.machine()} "
            f"({os.cpu_count()} CPUs, a machine shared with other jobs: seconds are indicative only); {runs} run "
            f"per model, deterministic seeds; ladder steps {', '.join(STEPS)}. QAT: {qat}. PTQ is step b's "
            "artifact (the best calibration setting on the calibration samples, the recipe QAT starts from). "
            "Cosine/SQNR: per evaluation sample, the lowest over the model's outputs, against the original float "
            "model; the gain is QAT − PTQ per sample, 95% paired bootstrap interval. Simulation error: how far the "
            "fake-quantized model QAT trains is from the real int8 model (step b's recipe), |sim − int8| / "
            "|int8 − float| on 4 calibration samples, worst output; with ORT's ranges on the graph ORT quantizes "
            "(what QAT uses) and with min/max ranges on every activation (what it used before).\n\n")


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
    parser.add_argument("--epochs", type=int, help="passes over the calibration samples (default: the config's)")
    parser.add_argument("--lr", type=float, help="QAT's starting learning rate (default: the config's)")
    parser.add_argument("--write", type=Path, help="markdown file whose qat_zoo section is replaced")
    args = parser.parse_args()
    logging.basicConfig(format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("edgepipe.quantize.qat_onnx").setLevel(logging.INFO)
    commit = _commit()
    rows = []
    for folder in args.folders:
        with tempfile.TemporaryDirectory() as scratch:
            rows.append(run_model(folder, args.epochs, args.lr, Path(scratch)))
        print(table(rows[-1:]), flush=True)
    section = _header(rows, 1, commit) + table(rows)
    print(section)
    if args.write:
        write(args.write, section)


if __name__ == "__main__":
    main()
