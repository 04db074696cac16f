"""Time ``edgepipe build`` against a plain script making the same library calls, on the reference model.

Both run as fresh processes (TensorFlow import included), alternating, several
times each; the median wall time (s) of each and their ratio are printed and,
with ``--write``, put into docs/BENCHMARKS.md. The plain script is what a user
would write by hand: load the .keras model, export ONNX (tf2onnx) and TFLite
(converter), quantize both to int8 (onnxruntime quantize_static; converter with
a representative dataset), evaluate the four on the evaluation split and time
them the same way (5 warm-up + 50 runs). Run: ``python benchmarks/build_overhead.py --runs 5 --write``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from doc_sections import BENCHMARKS_MD, provenance, spread, write_section  # noqa: E402

PLAIN = r'''
import os, sys, time, statistics, tempfile
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, keras, tensorflow as tf, tf2onnx, onnx, onnxruntime as ort
from onnxruntime.quantization import quantize_static, QuantFormat, QuantType, CalibrationDataReader
from onnxruntime.quantization.shape_inference import quant_pre_process
from ai_edge_litert.interpreter import Interpreter
root, out = sys.argv[1], sys.argv[2]
model = keras.saving.load_model(f"{root}/models/digits_cnn/digits_cnn.keras", compile=False, safe_mode=True)
calib = np.load(f"{root}/calib/digits/calibration.npz")["input"]
ev = np.load(f"{root}/calib/digits/evaluation.npz"); x, y = ev["input"], ev["labels"]
spec = (tf.TensorSpec((1, 8, 8, 1), tf.float32, name="input"),)
fn = tf.function(lambda t: model(t, training=False), input_signature=spec)
proto, _ = tf2onnx.convert.from_function(fn, input_signature=spec, opset=17)
onnx.save(proto, f"{out}/model.onnx")
model.export(f"{out}/sm", format="tf_saved_model", input_signature=list(spec), verbose=False)
open(f"{out}/model.tflite", "wb").write(tf.lite.TFLiteConverter.from_saved_model(f"{out}/sm").convert())
quant_pre_process(f"{out}/model.onnx", f"{out}/prep.onnx")
class R(CalibrationDataReader):
    def __init__(self): self.it = iter(calib)
    def get_next(self):
        s = next(self.it, None); return None if s is None else {"input": s[None]}
quantize_static(f"{out}/prep.onnx", f"{out}/model_int8.onnx", R(), quant_format=QuantFormat.QDQ,
                per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
conv = tf.lite.TFLiteConverter.from_saved_model(f"{out}/sm")
conv.optimizations = [tf.lite.Optimize.DEFAULT]
conv.representative_dataset = lambda: ([s[None]] for s in calib)
conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
conv.inference_input_type = conv.inference_output_type = tf.int8
open(f"{out}/model_int8.tflite", "wb").write(conv.convert())
def onnx_run(path):
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"]); return lambda a: s.run(None, {"input": a})[0]
def tfl_run(path):
    it = Interpreter(model_path=path); it.allocate_tensors()
    i, o = it.get_input_details()[0], it.get_output_details()[0]
    def run(a):
        si, zi = i["quantization"]
        it.set_tensor(i["index"], a if not si else np.clip(np.round(a / si) + zi, -128, 127).astype(np.int8))
        it.invoke(); r = it.get_tensor(o["index"]); so, zo = o["quantization"]
        return r if not so else (r.astype(np.float32) - zo) * so
    return run
for name, make in [("model.onnx", onnx_run), ("model.tflite", tfl_run), ("model_int8.onnx", onnx_run),
                   ("model_int8.tflite", tfl_run)]:
    run = make(f"{out}/{name}")
    acc = np.mean([run(x[i:i + 1]).argmax() == y[i] for i in range(len(x))])
    for _ in range(5): run(x[:1])
    t = []
    for _ in range(50):
        s = time.perf_counter(); run(x[:1]); t.append(time.perf_counter() - s)
    print(name, acc, statistics.median(t))
'''


def _timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def _stage_seconds(report: Path) -> dict[str, float]:
    """Seconds per stage name (summed over repeats) from a build's report.json."""
    import json

    totals: dict[str, float] = {}
    for stage in json.loads(report.read_text())["stages"]:
        totals[stage["name"]] = totals.get(stage["name"], 0.0) + stage["seconds"]
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="update docs/BENCHMARKS.md")
    args = parser.parse_args()
    edgepipe = str(Path(sys.executable).with_name("edgepipe"))
    tool, plain = [], []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "plain.py"
        script.write_text(PLAIN)
        for i in range(args.runs):
            out = Path(tmp) / f"plain{i}"
            out.mkdir()
            plain.append(_timed([sys.executable, str(script), str(ROOT), str(out)], Path(tmp)))
            tool.append(_timed([edgepipe, "build", "--quiet", "--no-cache", "--output", str(Path(tmp) / f"ep{i}")],
                               Path(tmp)))
        stages = _stage_seconds(Path(tmp) / f"ep{args.runs - 1}" / "digits_cnn" / "host-cpu" / "report.json")
    ratio = statistics.median(tool) / statistics.median(plain)
    lines = [
        provenance("build_overhead.py", f"{len(tool)} alternating runs each, fresh processes"),
        "",
        "| | wall time min / median / max (s) | runs (s) |",
        "|---|---|---|",
        f"| `edgepipe build` (host-cpu, full pipeline + report) | {spread(tool, '{:.2f}')} | "
        f"{', '.join(f'{t:.2f}' for t in tool)} |",
        f"| plain script, same library calls | {spread(plain, '{:.2f}')} | "
        f"{', '.join(f'{t:.2f}' for t in plain)} |",
        "",
        f"**Ratio of the medians, edgepipe / plain: {ratio:.2f}×** (aim: ≤ 1.3×).",
        "",
        "Where the last `edgepipe build` spent its time (report.json `stages`, s). The plain script does",
        "load, export, quantize, evaluate and latency only; the rest is analysis a default build adds.",
        "",
        "| stage | s |",
        "|---|---|",
        *[f"| {name} | {sec:.2f} |" for name, sec in stages.items()],
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(BENCHMARKS_MD, "build_overhead.py", text)


if __name__ == "__main__":
    main()
