"""Time every step of the quantization ladder on both reference models (digits_cnn, digits_nobn).

Each model is exported once, then the ladder runs with a threshold no step can
meet (-1 point), so all four steps run and each one's wall time (s), accuracy and
drop are recorded from the ladder's own report. With ``--write`` the table goes
into the ``## Quantization ladder`` section of benchmarks/results/benchmarks.md.
Run: ``python benchmarks/ladder_steps.py --write``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from doc_sections import BENCHMARKS_MD, provenance, write_section  # noqa: E402

DATA = ROOT / "calib" / "digits"
MODELS = {"digits_cnn": "per-channel", "digits_nobn": "per-tensor"}
LETTER = {"ptq": "a", "calibration": "b", "mixed": "c", "qat": "d"}


def ladder_rows(name: str, granularity: str, scratch: Path) -> list[str]:
    """Markdown rows: one per ladder step of model ``name`` (step (a) at ``granularity``)."""
    from edgepipe.data.dataset import load_dataset
    from edgepipe.export.tf_function import build_tf_graph
    from edgepipe.export.to_onnx import export_onnx
    from edgepipe.export.to_tflite import export_tflite
    from edgepipe.load import load_model
    from edgepipe.quantize.ladder import LadderContext, LadderSettings, run_ladder

    model = load_model(ROOT / "models" / name / f"{name}.keras")
    graph = build_tf_graph(model, scratch)
    floats = {"onnx": export_onnx(graph, scratch / "model.onnx"), "tflite": export_tflite(graph, scratch / "m.tflite")}

    def split(role: str):
        return load_dataset(DATA / f"{role}.npz", model.signature, role=role, need_labels=role != "calibration")

    context = LadderContext(model=model, graph=graph, floats=floats, calibration=split("calibration"),
                            selection=split("selection"), evaluation=split("evaluation"), train=split("train"),
                            threshold=-1.0, settings=LadderSettings(granularity=granularity),  # type: ignore[arg-type]
                            work=scratch / "ladder")
    _, report = run_ladder(context)
    rows = []
    for step in report.steps:
        drops = ", ".join(f"{f} {d:+.2f}" for f, d in step.drop_points.items())
        accuracy = ", ".join(f"{f} {100 * a:.2f}%" for f, a in step.accuracy.items())
        rows.append(f"| {name} | ({LETTER[step.step]}) {step.step} | {step.seconds:.1f} | {accuracy} | {drops} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/results/benchmarks.md")
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    rows = []
    for name, granularity in MODELS.items():
        with tempfile.TemporaryDirectory() as scratch:
            rows += ladder_rows(name, granularity, Path(scratch))
    section = "\n".join([
        provenance("ladder_steps.py", "1 per step (each step's wall time once)"), "",
        "Step (a) is per-channel minmax PTQ on digits_cnn and per-tensor minmax PTQ on digits_nobn; (b) scores "
        "the calibration settings on the selection split; (c) includes measuring per-layer sensitivity (ONNX and "
        "TFLite); (d) is QAT on the train split plus conversion. Accuracy and drop are on the evaluation split. "
        "A normal build stops at the first step that holds.",
        "", "| model | step | time (s) | top-1 | drop (points) |", "|---|---|---|---|---|", *rows, ""])
    sys.stdout.write(section + "\n")
    if args.write:
        write_section(BENCHMARKS_MD, "ladder_steps.py", section)


if __name__ == "__main__":
    main()
