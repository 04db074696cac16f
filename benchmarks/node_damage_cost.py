"""The cost model that sizes the node-damage ranking (edgepipe.quantize.node_damage), fitted on zoo models.

The ranking tries every int8 node alone; how many tries and how many samples per try is decided
from the model's nodes and multiply-accumulates by :func:`~edgepipe.quantize.node_damage.try_cost`,
never from a clock, so a verdict does not depend on machine load. This script measures real tries
(the same graph edit, save, ONNX Runtime session and inference as the ranking) on zoo models at 1
and at 8 samples, fits seconds per node and per MAC by least squares, and prints, per model, the
measured and the modelled seconds of a try and how many nodes the budget ranks.

    PYTHONPATH=$PWD python benchmarks/node_damage_cost.py /work/zoo/ppocr_v4_det /work/zoo/minilm_l6 \\
        /work/zoo/picodet_layout --check /work/zoo/ppocr_v5_det --tries 4 --write
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

from edgepipe.config import load_config
from edgepipe.data.dataset import Dataset, load_dataset
from edgepipe.graph.onnx_reader import read_onnx
from edgepipe.load import load_model
from edgepipe.quantize import node_damage
from edgepipe.quantize.alone_int8 import outputs_alone
from edgepipe.quantize.onnx_qdq import mixed_base, preprocess
from edgepipe.quantize.qdq_float_nodes import quantized_nodes
from edgepipe.quantize.recipe import QuantRecipe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_sections import PERFORMANCE_MD, model_error_lines, provenance, write_section  # noqa: E402


def _first(data: Dataset, count: int) -> Dataset:
    return Dataset(data.path, tuple(a[:count] for a in data.inputs), None, data.sha256, data.whole)


def measure(folder: Path, tries: int, scratch: Path) -> dict[str, float]:
    """Nodes, MACs, int8 candidates and the mean seconds of a try at 1 and at 8 samples for one zoo model."""
    config = load_config(folder / "edgepipe.toml")
    model = load_model(folder / config.model, input_shapes=config.input_shapes)
    if model.format != "onnx":
        raise SystemExit(f"{folder.name}: the ranking runs on ONNX models; this one is {model.format}")
    float_path = scratch / "model.onnx"
    onnx.save(model.handle, str(float_path))
    data = load_dataset(folder / config.data.calibration, model.signature, role="calibration",
                        preprocess=config.preprocess)
    base = onnx.load(str(mixed_base(float_path, data, QuantRecipe(), scratch)))
    prepared = onnx.load(str(preprocess(float_path, scratch / "prep.onnx")))
    candidates = quantized_nodes(base)
    row: dict[str, float] = {"nodes": len(base.graph.node), "candidates": len(candidates),
                             "bytes": float_path.stat().st_size,
                             "macs": sum(n.macs for n in read_onnx(float_path).nodes)}
    for samples in (1, node_damage.RANKING_SAMPLES):
        subset = _first(data, samples)
        outputs_alone(candidates[0], base, prepared, candidates, scratch / "try.onnx", subset)
        start = time.perf_counter()
        for node in candidates[1:tries + 1]:
            outputs_alone(node, base, prepared, candidates, scratch / "try.onnx", subset)
        row[f"s{samples}"] = (time.perf_counter() - start) / min(tries, len(candidates) - 1)
    return row


def _terms(row: dict[str, float], samples: int) -> list[float]:
    return [row["nodes"], row["bytes"], samples * row["nodes"], samples * row["macs"]]


def fit(rows: dict[str, dict[str, float]]) -> list[float]:
    """Seconds per node, per byte, per node-sample and per MAC-sample: least squares over every measured
    try time, each relative to its own time (a 0.03 s try weighs as much as a 2 s one), clipped at 0."""
    design, times = [], []
    for row in rows.values():
        for samples in (1, node_damage.RANKING_SAMPLES):
            design.append([t / row[f"s{samples}"] for t in _terms(row, samples)])
            times.append(1.0)
    solution = np.linalg.lstsq(np.array(design, float), np.array(times, float), rcond=None)[0]
    return [max(float(x), 0.0) for x in solution]


def modelled(row: dict[str, float], samples: int) -> float:
    return node_damage.try_cost(int(row["nodes"]), int(row["bytes"]), int(row["macs"]), samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, help="zoo models the constants are fitted on")
    parser.add_argument("--check", nargs="*", type=Path, default=[], help="held-out zoo models, only checked")
    parser.add_argument("--tries", type=int, default=4)
    parser.add_argument("--write", action="store_true", help="write the table into benchmarks/results/performance.md")
    args = parser.parse_args()
    rows, held = {}, set()
    for folder in [*args.folders, *args.check]:
        with tempfile.TemporaryDirectory() as scratch:
            rows[folder.name] = measure(folder, args.tries, Path(scratch))
        if folder in args.check:
            held.add(folder.name)
    fitted = fit({name: row for name, row in rows.items() if name not in held})
    used = [node_damage.SECONDS_PER_NODE, node_damage.SECONDS_PER_BYTE, node_damage.SECONDS_PER_NODE_SAMPLE,
            node_damage.SECONDS_PER_MAC]
    lines = [provenance("node_damage_cost.py", f"{args.tries} tries per model and sample count, after one "
                        "warm-up try"), "",
             "Constants (seconds per node, per byte, per node-sample, per MAC-sample): fitted here "
             + ", ".join(f"{x:.2e}" for x in fitted) + "; in edgepipe " + ", ".join(f"{x:.2e}" for x in used)
             + f"; budget {node_damage.RANKING_BUDGET_S:.0f} s.", "",
             "| model | set | nodes (QDQ) | int8 nodes | MB | GMAC | try, 1 sample: measured / modelled (s) | "
             "try, 8 samples: measured / modelled (s) | plan: samples, nodes ranked | modelled ranking (s) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    errors: dict[str, list[float]] = {"fit": [], "held-out": []}
    for name, row in rows.items():
        kind = "held-out" if name in held else "fit"
        plan = node_damage.ranking_plan(int(row["candidates"]), int(row["nodes"]), int(row["bytes"]),
                                        int(row["macs"]), node_damage.RANKING_SAMPLES)
        for samples in (1, node_damage.RANKING_SAMPLES):
            errors[kind].append(abs(modelled(row, samples) / row[f"s{samples}"] - 1))
        lines.append(f"| {name} | {kind} | {int(row['nodes'])} | {int(row['candidates'])} | {row['bytes'] / 1e6:.1f} "
                     f"| {row['macs'] / 1e9:.3f} | {row['s1']:.3f} / {modelled(row, 1):.3f} | "
                     f"{row['s8']:.3f} / {modelled(row, 8):.3f} | {plan[0]}, {plan[1]} | "
                     f"{plan[1] * modelled(row, plan[0]):.0f} |")
    lines += ["", *model_error_lines(errors, "try time", "measurements")]
    print("\n".join(lines))
    if args.write:
        write_section(PERFORMANCE_MD, "node_damage_cost.py", "\n".join(lines))

if __name__ == "__main__":
    main()
