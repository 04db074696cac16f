"""The raw tool calls ``benchmarks/build_overhead.py`` times against ``edgepipe build`` (scripts run as is)."""

#: The reference model by hand: argv = repository root, output folder.
RAW_KERAS = r'''
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

#: A real ONNX model by hand: argv = static-shape float ONNX, folder of <input>.npy calibration arrays, output.
#: ONNX Runtime's pre-processing + static QDQ quantization (after onnx's opset upgrade to 13 where the model is
#: older, as edgepipe does: per-channel DequantizeLinear needs it), and onnx2tf float + full-integer TFLite in one
#: run with the same calibration data (what edgepipe's export and quantize stages wrap).
RAW_ONNX = r'''
import os, subprocess, sys
from pathlib import Path
import numpy as np, onnx
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process
import shutil
source, calib, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
model = shutil.copyfile(source, out / "model.onnx")  # onnx2tf simplifies its input in place: a fresh copy per run
proto = onnx.load(model)
graph = proto.graph
names = [i.name for i in graph.input if i.name not in {t.name for t in graph.initializer}]
arrays = {n: np.load(calib / f"{n}.npy") for n in names}
to_quantize = model
if next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")) < 13:
    # DequantizeLinear takes a per-channel axis from opset 13 on (PaddlePaddle exports 11): upgrade first
    from onnx.version_converter import convert_version
    to_quantize = str(out / "opset13.onnx")
    onnx.save(convert_version(proto, 13), to_quantize)
quant_pre_process(to_quantize, str(out / "prep.onnx"), skip_symbolic_shape=False)
class R(CalibrationDataReader):
    def __init__(self): self.i = 0
    def get_next(self):
        if self.i >= len(arrays[names[0]]): return None
        self.i += 1; return {n: a[self.i - 1:self.i] for n, a in arrays.items()}
quantize_static(str(out / "prep.onnx"), str(out / "model_int8.onnx"), R(), quant_format=QuantFormat.QDQ,
                per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
cind = [x for n in names for x in ("-cind", n, str(calib / f"{n}.npy"), "0.0", "1.0")]
env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", TF_ENABLE_ONEDNN_OPTS="0")
subprocess.run([sys.executable, "-c", "from onnx2tf import main; main()", "-i", model, "-o", str(out / "tf"),
                "-kat", *names, "-eru", "-n", "-oiqt", *cind], check=True, capture_output=True, env=env, cwd=out)
assert (out / "tf" / (Path(model).stem + "_full_integer_quant.tflite")).is_file()
'''

#: The vendor compilers an ``--all-targets`` build runs, by hand, after the raw calls above: argv = output folder
#: of the raw calls, folder of <input>.npy calibration arrays, the RKNN environment's Python, then the raw
#: command itself (run first, in this process tree). Vela for ethos-u55-128 and ethos-u85-256 on the int8 TFLite;
#: the QNN HTP emulator (htp_arch 73, soc_model 43) placing and running the int8 QDQ ONNX, against ONNX Runtime's
#: CPU run; rknn-toolkit2 for rk3588 and rk3576 (both in one process): config, load_onnx, build with int8
#: quantization on one calibration sample, and the simulator's per-layer accuracy analysis.
RAW_VENDORS = r'''
import os, subprocess, sys
from pathlib import Path
import numpy as np
out, calib, rknn_python, raw = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4:]
subprocess.run(raw, check=True, stdout=subprocess.DEVNULL)
int8_tflite = next(p for p in [out / "model_int8.tflite", *sorted(out.glob("tf/*_full_integer_quant.tflite"))]
                   if p.is_file())
vela = Path(sys.executable).with_name("vela")
for accelerator in ("ethos-u55-128", "ethos-u85-256"):
    subprocess.run([str(vela), str(int8_tflite), "--output-dir", str(out / f"vela-{accelerator}"),
                    "--accelerator-config", accelerator], check=True, capture_output=True)
import onnxruntime as ort, onnxruntime_qnn
ort.register_execution_provider_library("QNNExecutionProvider", onnxruntime_qnn.get_library_path())
options = ort.SessionOptions()
options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
options.add_provider_for_devices([d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"],
                                 {"backend_path": onnxruntime_qnn.get_qnn_htp_path(), "htp_arch": "73",
                                  "soc_model": "43"})
htp = ort.InferenceSession(str(out / "model_int8.onnx"), sess_options=options)
cpu = ort.InferenceSession(str(out / "model_int8.onnx"), providers=["CPUExecutionProvider"])
feeds = {i.name: np.load(calib / f"{i.name}.npy")[:1] for i in cpu.get_inputs()}
htp.run(None, feeds), cpu.run(None, feeds), htp.get_provider_graph_assignment_info()
samples = []
for name in feeds:
    samples.append(str(out / f"rknn_{len(samples)}.npy"))
    np.save(samples[-1], feeds[name])
(out / "dataset.txt").write_text(" ".join(samples) + "\n")
RKNN_SCRIPT = """
import sys
from rknn.api import RKNN
model, dataset, samples, out = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4]
for soc in ("rk3588", "rk3576"):
    rknn = RKNN(verbose=True, verbose_file=out + "/rknn_" + soc + ".log")
    assert rknn.config(target_platform=soc) == 0 and rknn.load_onnx(model=model) == 0
    assert rknn.build(do_quantization=True, dataset=dataset) == 0
    rknn.accuracy_analysis(inputs=samples, output_dir=out + "/snapshot_" + soc)
    rknn.release()
"""
subprocess.run([rknn_python, "-I", "-c", RKNN_SCRIPT, str(out / "model.onnx"), str(out / "dataset.txt"),
                ",".join(samples), str(out)], check=True, capture_output=True, cwd=out,
               env={**os.environ, "RKNN_LOG_LEVEL": "4"})
'''
