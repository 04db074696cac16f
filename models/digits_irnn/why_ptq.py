"""Measure why int8 PTQ loses accuracy on ``digits_irnn``: the hidden state drifts over the 64 steps.

Runs on exact int8 semantics (ONNX Runtime with QDQ fusion off, as edgepipe scores every int8 artifact):
the float ONNX export and its plain PTQ (minmax, per-channel weights, int8: ladder step (a)) are run on
the evaluation split with every step's hidden state ``h_t`` exposed as an extra output, and the relative
error ‖h_int8 − h_float‖ / ‖h_float‖ is reported at a few steps, with the state's range and the int8 step
it gets. ``--write`` puts the table into MODEL.md between its markers.
Run: ``OMP_NUM_THREADS=1 python models/digits_irnn/why_ptq.py --write``.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "calib" / "digits"
DOC = HERE / "MODEL.md"
STEPS = (1, 8, 16, 32, 48, 64)
BEGIN, END = "<!-- why_ptq.py: begin -->", "<!-- why_ptq.py: end -->"


def _with_states(path: Path, states: list[str], out: Path) -> Path:
    """``path`` with the tensors ``states`` added as graph outputs (float32)."""
    import onnx

    model = onnx.load(str(path))
    model.graph.output.extend(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)
                              for name in states)
    onnx.save(model, str(out))
    return out


def _state_tensors(float_onnx: Path, int8_onnx: Path) -> tuple[list[str], list[str]]:
    """Per step, the name of ``h_t`` in the float graph (Relu after the Add) and in the QDQ graph (its dequantized
    value: the quantizer folds the Relu into the Add output's QuantizeLinear)."""
    import onnx

    float_graph, int8_graph = onnx.load(str(float_onnx)).graph, onnx.load(str(int8_onnx)).graph
    consumers: dict[str, list] = {}
    for node in int8_graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    adds = [n.output[0] for n in float_graph.node if n.op_type == "Add"]
    relus = {n.input[0]: n.output[0] for n in float_graph.node if n.op_type == "Relu"}
    quantized = []  # the quantizer's preprocessing renames tensors: the QDQ graph's Adds, in the same order
    for add in (n.output[0] for n in int8_graph.node if n.op_type == "Add"):
        quantize = next(n for n in consumers[add] if n.op_type == "QuantizeLinear")
        quantized.append(next(n for n in consumers[quantize.output[0]] if n.op_type == "DequantizeLinear").output[0])
    assert len(quantized) == len(adds) == 64, (len(quantized), len(adds))
    return [relus[a] for a in adds], quantized


def _run(path: Path, dataset: object) -> list[np.ndarray]:
    from edgepipe.runtimes.ort_runner import OnnxRuntimeRunner

    outputs: list[list[np.ndarray]] = []
    with OnnxRuntimeRunner(path, threads=1, reference_int8=True) as runner:
        for sample in dataset.samples():
            outputs.append(runner.infer(sample))
    return [np.concatenate([o[i] for o in outputs]) for i in range(len(outputs[0]))]


def measure(scratch: Path) -> str:
    """The Markdown table of the hidden state's drift, and the top-1 of float and PTQ."""
    from edgepipe.data.dataset import load_dataset
    from edgepipe.export.torch_to_onnx import export_program_to_onnx
    from edgepipe.load import load_model
    from edgepipe.quantize.onnx_qdq import quantize_onnx
    from edgepipe.quantize.recipe import QuantRecipe

    model = load_model(HERE / "digits_irnn.pt2")
    float_onnx = export_program_to_onnx(model.handle.program, scratch / "float.onnx")
    calibration = load_dataset(DATA / "calibration.npz", model.signature, role="calibration")
    evaluation = load_dataset(DATA / "evaluation.npz", model.signature, role="evaluation", need_labels=True)
    int8_onnx = quantize_onnx(float_onnx, scratch / "ptq.onnx", calibration, QuantRecipe(), scratch)
    float_states, int8_states = _state_tensors(float_onnx, int8_onnx)
    reference = _run(_with_states(float_onnx, float_states, scratch / "float_states.onnx"), evaluation)
    int8 = _run(_with_states(int8_onnx, int8_states, scratch / "ptq_states.onnx"), evaluation)
    top1 = [float((out.argmax(1) == evaluation.labels).mean()) for out in (reference[0], int8[0])]
    lines = [BEGIN, f"Evaluation split ({len(evaluation)} images), exact int8 semantics: float top-1 {top1[0]:.4f}, "
             f"PTQ (minmax, per-channel weights, int8) top-1 {top1[1]:.4f}, {100 * (top1[0] - top1[1]):.2f} "
             "points lost.", "",
             "| step t | max of h_t over the images (float) | int8 step of h_t (PTQ scale) | relative error of h_t, "
             "median over images | top-1 of the head on h_t agrees with float (share of images) |",
             "|---|---|---|---|---|"]
    head = model.handle.program.state_dict
    weight, bias = (head["head.weight"].detach().numpy(), head["head.bias"].detach().numpy())
    for t in STEPS:
        f, q = reference[t], int8[t]
        error = np.linalg.norm(q - f, axis=1) / np.maximum(np.linalg.norm(f, axis=1), 1e-12)
        step = (q.max() - q.min()) / 255 if q.max() > q.min() else 0.0
        agree = float(((f @ weight.T + bias).argmax(1) == (q @ weight.T + bias).argmax(1)).mean())
        lines.append(f"| {t} | {f.max():.2f} | {step:.4f} | {np.median(error):.4f} | {agree:.4f} |")
    return "\n".join([*lines, END])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the table into MODEL.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        text = measure(Path(scratch))
    print(text)
    if args.write:
        doc = DOC.read_text(encoding="utf-8")
        DOC.write_text(re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: text, doc, flags=re.S),
                       encoding="utf-8")


if __name__ == "__main__":
    main()
