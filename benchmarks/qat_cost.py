"""The cost model that bounds ONNX QAT (edgepipe.quantize.qat_cost), fitted on zoo models.

ONNX QAT takes as many distillation steps as fit ``quantization.qat_budget_s`` *modelled*
seconds (:func:`~edgepipe.quantize.qat_cost.step_cost`), so a verdict does not depend on machine
load. This script runs the real steps (onnx2torch form of the graph, fake quantization, the original
float ONNX as teacher, Adam, one torch thread — what the ladder runs) on zoo models, fits seconds per
node and per MAC by least squares (each model relative to its own time), and prints, per model, the
measured and the modelled seconds of a step and the steps the default budget allows.

    PYTHONPATH=$PWD python benchmarks/qat_cost.py /work/zoo/ppocr_v4_rec /work/zoo/ddddocr_det \\
        /work/zoo/picodet_layout --check /work/zoo/ppocr_v5_det /work/zoo/minilm_l6 --steps 4 --write
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

from edgepipe.config import QuantizationConfig, load_config
from edgepipe.data.dataset import load_dataset
from edgepipe.graph.onnx_reader import read_onnx
from edgepipe.load import load_model
from edgepipe.quantize import qat_cost
from edgepipe.quantize.fake_quant_fx import calibrate_ranges, insert_fake_quant
from edgepipe.quantize.onnx_to_torch import ConversionFailed, convert_onnx
from edgepipe.quantize.qat_onnx import OnnxQatRequest, fine_tune, subset, train_threads
from edgepipe.quantize.qat_torch_step import ONNX_QAT_SAMPLES
from edgepipe.quantize.recipe import QuantRecipe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_sections import PERFORMANCE_MD, model_error_lines, provenance, write_section  # noqa: E402


def measure(folder: Path, steps: int, scratch: Path) -> dict[str, float]:
    """Nodes, MACs and the mean seconds of one distillation step (after one warm-up step) of a zoo model."""
    config = load_config(folder / "edgepipe.toml")
    model = load_model(folder / config.model, input_shapes=config.input_shapes)
    if model.format != "onnx":
        raise SystemExit(f"{folder.name}: ONNX QAT trains ONNX models; this one is {model.format}")
    float_path = scratch / "model.onnx"
    onnx.save(model.handle, str(float_path))
    data = load_dataset(folder / config.data.calibration, model.signature, role="calibration",
                        preprocess=config.preprocess)
    data = subset(data, min(ONNX_QAT_SAMPLES, len(data)))
    graph = read_onnx(float_path).nodes
    row: dict[str, float] = {"nodes": len(graph), "macs": sum(n.macs for n in graph)}
    with train_threads():
        trainable = convert_onnx(float_path, data)
        names = sorted(trainable.sources)
        quantizers = insert_fake_quant(trainable.module, QuantRecipe().per_channel)
        calibrate_ranges(trainable.module, quantizers, list(data.samples()))
        times = []
        for count in (1, 1 + steps):
            request = OnnxQatRequest(float_onnx=float_path, calibration=data, recipe=QuantRecipe(), steps=count)
            start = time.perf_counter()
            fine_tune(trainable.module, request, data, names)
            times.append(time.perf_counter() - start)
    row["step_s"] = (times[1] - times[0]) / steps
    return row


def fit(rows: dict[str, dict[str, float]]) -> list[float]:
    """Seconds per node and per MAC of a step: least squares relative to each model's own step time."""
    design = [[row["nodes"] / row["step_s"], row["macs"] / row["step_s"]] for row in rows.values()]
    solution = np.linalg.lstsq(np.array(design, float), np.ones(len(design)), rcond=None)[0]
    return [max(float(x), 0.0) for x in solution]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, help="zoo models the constants are fitted on")
    parser.add_argument("--check", nargs="*", type=Path, default=[], help="held-out zoo models, only checked")
    parser.add_argument("--steps", type=int, default=4, help="timed steps per model, after one warm-up step")
    parser.add_argument("--write", action="store_true", help="write the table into benchmarks/results/performance.md")
    args = parser.parse_args()
    rows, held = {}, set()
    for folder in [*args.folders, *args.check]:
        with tempfile.TemporaryDirectory() as scratch:
            try:
                rows[folder.name] = measure(folder, args.steps, Path(scratch))
            except ConversionFailed as failure:  # a model ONNX QAT cannot train costs nothing: left out, said
                print(f"{folder.name}: not measured, onnx2torch cannot convert it ({failure})", flush=True)
                continue
        print(folder.name, rows[folder.name], flush=True)
        if folder in args.check:
            held.add(folder.name)
    fitted = fit({name: row for name, row in rows.items() if name not in held})
    defaults = QuantizationConfig()
    budget, wanted = defaults.qat_budget_s, defaults.qat_epochs * ONNX_QAT_SAMPLES
    lines = [provenance("qat_cost.py", f"{args.steps} steps per model after one warm-up step, one torch thread"),
             "",
             f"Constants (seconds per node, per MAC of a step): fitted here {fitted[0]:.2e}, {fitted[1]:.2e}; in "
             f"edgepipe {qat_cost.SECONDS_PER_STEP_NODE:.2e}, {qat_cost.SECONDS_PER_STEP_MAC:.2e}; default budget "
             f"{budget:.0f} s for {wanted} steps.", "",
             "| model | set | nodes | GMAC | step: measured / modelled (s) | steps the budget allows |",
             "|---|---|---|---|---|---|"]
    errors: dict[str, list[float]] = {"fit": [], "held-out": []}
    for name, row in rows.items():
        kind = "held-out" if name in held else "fit"
        modelled = qat_cost.step_cost(int(row["nodes"]), int(row["macs"]))
        plan = qat_cost.qat_plan(wanted, ONNX_QAT_SAMPLES, int(row["nodes"]), int(row["macs"]), budget)
        errors[kind].append(abs(modelled / row["step_s"] - 1))
        allowed = "none (skipped)" if plan.skipped else f"{plan.steps} of {wanted}"
        lines.append(f"| {name} | {kind} | {int(row['nodes'])} | {row['macs'] / 1e9:.3f} | "
                     f"{row['step_s']:.3f} / {modelled:.3f} | {allowed} |")
    lines += ["", *model_error_lines(errors, "step time", "models")]
    print("\n".join(lines))
    if args.write:
        write_section(PERFORMANCE_MD, "qat_cost.py", "\n".join(lines))


if __name__ == "__main__":
    main()
