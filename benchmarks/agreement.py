"""Agreement of edgepipe's per-op placement with the vendor toolchains, on reference and light models.

    python benchmarks/agreement.py [--work build/agreement] [--skip-run]

Vela (ethos-u55-128, ethos-u85-256) on int8 TFLite; the QNN HTP emulator (mobile-npu) on QDQ int8 ONNX.
Models:
- the reference models under models/*/*.keras, built with `edgepipe quantize` (the artifacts a build deploys);
- ONNX: six of the onnx package's light architectures (placeholder weights), folded with onnxsim, converted
  to opset 13 and quantized to QDQ int8 (per-channel weights) with onnxruntime.quantization;
- TFLite: the light models converted to full-integer TFLite with onnx2tf 1.28.8 (two minutes or more each on
  two cores; skip with --no-onnx2tf), and Keras nets with the same architectures' op mix
  (tests/support/nets.py) converted to int8 TFLite, plus a 'stress' net with geometries and ops the Ethos-U
  leaves on the CPU.
Prints one row per model and tool, and the totals the acceptance criterion reads (>= 99 %).
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LIGHT = ["squeezenet", "resnet50", "shufflenet", "inception_v1", "inception_v2", "densenet121"]


def light_path(name: str) -> Path:
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"light_{name}.onnx"


def light_qdq(name: str, work: Path) -> Path:
    """QDQ int8 version of a light model (weights folded from its ConstantOfShape placeholders)."""
    out = work / f"{name}_qdq.onnx"
    if out.exists():
        return out
    import onnx
    import onnx.version_converter
    import onnxsim
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model, ok = onnxsim.simplify(onnx.version_converter.convert_version(onnx.load(light_path(name)), 13))
    assert ok, f"onnxsim could not check {name}"
    onnx.save(model, work / f"{name}_f.onnx")
    quant_pre_process(str(work / f"{name}_f.onnx"), str(work / f"{name}_p.onnx"), skip_symbolic_shape=True)
    prepared = onnx.load(work / f"{name}_p.onnx")
    inits = {i.name for i in prepared.graph.initializer}
    inp = next(i for i in prepared.graph.input if i.name not in inits)
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    rng = np.random.default_rng(0)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.samples = iter([{inp.name: rng.random(shape, dtype=np.float32)} for _ in range(2)])

        def get_next(self) -> dict | None:
            return next(self.samples, None)

    quantize_static(str(work / f"{name}_p.onnx"), str(out), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"WeightSymmetric": True})
    return out


ONNX2TF_LIGHT = ["squeezenet", "resnet50", "shufflenet", "inception_v1", "densenet121"]


def light_tflite(name: str, work: Path) -> Path | None:
    """Full-integer TFLite of a light model through onnx2tf (NCHW input kept), or None if it fails."""
    out = work / f"{name}_int8.tflite"
    if out.exists():
        return out
    light_qdq(name, work)  # writes the folded float model {name}_f.onnx
    import onnx

    model = onnx.load(work / f"{name}_f.onnx")
    inp = model.graph.input[0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    calib = work / f"{name}_calib.npy"
    np.save(calib, np.random.default_rng(0).random((4, *shape[1:]), dtype=np.float32))
    folder = work / f"{name}_onnx2tf"
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    subprocess.run([sys.executable, "-c", "from onnx2tf import main; main()", "-i", str(work / f"{name}_f.onnx"),
                    "-o", str(folder), "-kat", inp.name, "-eru", "-n", "-oiqt", "-cind", inp.name, str(calib),
                    "0.0", "1.0"], capture_output=True, text=True, env=env, timeout=1800)
    produced = folder / f"{name}_f_full_integer_quant.tflite"
    if not produced.exists():
        return None
    out.write_bytes(produced.read_bytes())
    return out


def reference_artifacts(work: Path) -> dict[str, tuple[Path, Path]]:
    """(int8 ONNX, int8 TFLite) of every models/*/*.keras, made by `edgepipe quantize`."""
    calib = ROOT / "calib" / "digits" / "calibration.npz"
    out: dict[str, tuple[Path, Path]] = {}
    for keras_file in sorted(ROOT.glob("models/*/*.keras")):
        folder = work / keras_file.stem
        if not (folder / "model_int8.tflite").exists():
            exe = Path(sys.executable).with_name("edgepipe")
            subprocess.run([str(exe), "quantize", "--model", str(keras_file), "--calib", str(calib), "-o",
                            str(folder)], check=True, capture_output=True, text=True)
        out[keras_file.stem] = (folder / "model_int8.onnx", folder / "model_int8.tflite")
    return out


def keras_tflite(work: Path) -> dict[str, Path]:
    from tests.support.nets import NETS, build_net, to_int8_tflite

    out = {}
    for name in NETS:
        path = work / f"{name}.tflite"
        if not path.exists():
            to_int8_tflite(build_net(name), path)
        out[name] = path
    return out


def row(model: str, result: object) -> tuple[int, int]:
    from edgepipe.support.report import Verification

    assert isinstance(result, Verification)
    extra = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in result.extra.items()
                      if k.startswith(("htp", "inferred", "cycles_total")))
    share = f"{100 * result.agreement:.2f}%" if result.status == "ran" else "–"
    extra = extra if result.status == "ran" else result.detail[:200]
    print(f"| {model} | {result.tool} | {result.status} | {result.compared} | {result.agree} | "
          f"{result.edgepipe_only} | {result.vendor_only} | {share} | {extra} |")
    for d in result.disagreements[:5]:
        print(f"|   disagreement | {d.op} `{d.name[:50]}` | edgepipe {d.edgepipe} | vendor {d.vendor} | | | | | |")
    return result.compared, result.agree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "agreement")
    parser.add_argument("--skip-run", action="store_true", help="Do not run the QNN model to compare outputs.")
    parser.add_argument("--no-onnx2tf", action="store_true", help="Skip the onnx2tf TFLite of the light models.")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    args.work.mkdir(parents=True, exist_ok=True)

    from edgepipe.support import check_model, read_graph
    from edgepipe.targets import load_profile
    from edgepipe.verify import qnn, vela

    refs = reference_artifacts(args.work)
    tflites = {**{k: v[1] for k, v in refs.items()}, **keras_tflite(args.work)}
    if not args.no_onnx2tf:
        converted = {f"{n} (onnx2tf)": light_tflite(n, args.work) for n in ONNX2TF_LIGHT}
        tflites.update({k: v for k, v in converted.items() if v is not None})
        for name in (k for k, v in converted.items() if v is None):
            print(f"| {name} | onnx2tf | failed | | | | | | |")
    onnxes = {**{k: v[0] for k, v in refs.items()}, **{n: light_qdq(n, args.work) for n in LIGHT}}
    totals: dict[str, list[int]] = {}
    print("| model | tool | status | ops compared | agree | edgepipe only | vendor only | agreement | notes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for target, accelerator in (("ethos-u55", "ethos-u55-128"), ("ethos-u85", "ethos-u85-256")):
        profile = load_profile(target)
        for name, path in tflites.items():
            report = check_model(path, profile)
            compared, agree = row(name, vela.verify(report, path, accelerator, args.work / "vela" / name))
            totals.setdefault(f"vela {accelerator}", [0, 0])
            totals[f"vela {accelerator}"][0] += compared
            totals[f"vela {accelerator}"][1] += agree
    profile = load_profile("mobile-npu")
    for name, path in onnxes.items():
        graph = read_graph(path)
        from edgepipe.support import check_graph

        report = check_graph(graph, profile)
        compared, agree = row(name, qnn.verify(report, path, graph, run=not args.skip_run))
        totals.setdefault("qnn-htp-emulator", [0, 0])
        totals["qnn-htp-emulator"][0] += compared
        totals["qnn-htp-emulator"][1] += agree
    print()
    for tool, (compared, agree) in totals.items():
        print(f"{tool}: {agree}/{compared} ops agree = {100 * agree / max(compared, 1):.2f}%")
    return 0 if all(a >= 0.99 * c for c, a in totals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
