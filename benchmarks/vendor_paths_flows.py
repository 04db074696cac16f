"""The vendors' own documented paths (benchmarks/vendor_paths.py): each from the source model with static input
shapes and the build's calibration data to the vendor's compiled artifact."""


from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RUNNER = Path(__file__).with_name("vendor_paths_rknn.py")


# --------------------------------------------------------------------------------------- the source and its data


class VendorPathFailed(Exception):
    """A step of the vendor's path failed on this model: ``step`` and the tool's message."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(f"{step}: {message}")
        self.step = step


@dataclasses.dataclass
class Source:
    """The model a vendor path starts from, its config and data, and a scratch folder."""

    config: Any  # edgepipe.config.BuildConfig
    inputs: Any  # edgepipe.stages.inputs.BuildInputs
    work: Path

    @classmethod
    def load(cls, config_path: Path, target: str, work: Path) -> Source:
        from edgepipe.config import load_config
        from edgepipe.stage_log import StageLog
        from edgepipe.stages.inputs import validate_inputs

        config = load_config(config_path, overrides={"targets": [target], "output": str(work / "unused")})
        return cls(config, validate_inputs(config, StageLog()), work)

    @property
    def format(self) -> str:
        return str(self.inputs.model.format)

    @property
    def data(self) -> Any:
        """The samples the gate runs on, as edgepipe's evaluate stage picks them (evaluation, else calibration)."""
        return self.inputs.evaluation or self.inputs.calibration

    def limit(self) -> int | None:
        from edgepipe.stages.evaluate import LABEL_FREE_SAMPLES

        return None if self.data.labels is not None else LABEL_FREE_SAMPLES

    def onnx(self) -> Path:
        """The float ONNX with static input shapes: the source's own, Keras's export, or tf2onnx's of a SavedModel."""
        path = self.work / "float.onnx"
        if path.is_file():
            return path
        if self.format == "onnx":
            made = self.inputs.model.path
        elif self.format == "keras":
            made = self.work / "keras_export.onnx"
            model = self.inputs.model.handle
            with step_of("Keras export"):
                model([a[:1] for a in self.inputs.calibration.inputs])  # Keras exports only a model that was called
                model.export(str(made), format="onnx")
        elif self.format == "savedmodel":
            made = self.work / "tf2onnx.onnx"
            _tool("tf2onnx", [sys.executable, "-m", "tf2onnx.convert", "--saved-model", str(self.inputs.model.path),
                              "--output", str(made)], self.work)
        else:
            raise VendorPathFailed("n/a", f"a {self.format} source: the vendor's path starts from ONNX or the "
                                          "framework model (Keras, SavedModel)")
        import onnx

        from edgepipe.load import load_model

        onnx.save(load_model(made, input_shapes=self.config.input_shapes).handle, str(path))
        return path


def _tool_errors() -> tuple[type[BaseException], ...]:
    """What the tools a vendor path calls in this process raise (edgepipe's containment lists them: Keras and
    TensorFlow's converter, ONNX Runtime and its quantizer, LiteRT), and the OS errors of their files."""
    from edgepipe.containment import LITERT, ONNXRUNTIME, ORT_QUANTIZER, TFLITE_CONVERTER

    found = [OSError]
    for tool in (TFLITE_CONVERTER, ORT_QUANTIZER, ONNXRUNTIME, LITERT):
        found += [t for t in tool.exception_types() if t not in found]
    return tuple(found)


@contextlib.contextmanager
def step_of(name: str) -> Iterator[None]:
    """One step of a vendor path: what the tool raises there is the path's outcome at that step (anything else is
    a bug of this script and propagates)."""
    try:
        yield
    except VendorPathFailed:
        raise
    except _tool_errors() as exc:
        lines = [line for line in str(exc).strip().splitlines() if line.strip()]
        raise VendorPathFailed(name, f"{type(exc).__name__}: {lines[-1][:300] if lines else ''}") from None


def _tool(step: str, command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run one vendor command; its output, or :class:`VendorPathFailed` with its last meaningful line."""
    from edgepipe.export.onnx_to_tflite import last_error

    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, check=False, timeout=3600)
    if done.returncode != 0:
        raise VendorPathFailed(step, f"exit {done.returncode}: {last_error(done.stdout + done.stderr)}")
    return done.stdout + done.stderr


def channels_last(array: Any) -> Any:
    """A batch-first array of at least 3 axes with axis 1 (the channels) moved last (NCHW to NHWC): TF's order."""
    import numpy as np

    return np.moveaxis(array, 1, -1) if array.ndim >= 3 else array


# ------------------------------------------------------------------------------------------- the vendor paths


def ethos_u55(source: Source) -> Path:
    """The int8 TFLite of Arm's documented path (onnx2tf -oiqt, or TF's converter) that Vela compiles."""
    import numpy as np

    if source.format in ("keras", "savedmodel"):
        return _tf_converter(source)
    onnx_path = source.onnx()
    from edgepipe.export.onnx_to_tflite import _environment, _offline_sample_images, onnx2tf_name
    from edgepipe.load.source import load_model

    names = [spec.name for spec in load_model(onnx_path).signature.inputs]
    args: list[str] = []
    for index, (name, array) in enumerate(zip(names, source.inputs.calibration.inputs)):
        np.save(source.work / f"calib_{index}.npy", channels_last(np.asarray(array, np.float32)))
        args += ["-cind", onnx2tf_name(name, True), str(source.work / f"calib_{index}.npy"), "0.0", "1.0"]
    _offline_sample_images(source.inputs.calibration, source.work)  # never used with -cind; no download
    out = source.work / "onnx2tf"
    _tool("onnx2tf", [sys.executable, "-c", "from onnx2tf import main; main()", "-i", str(onnx_path), "-o", str(out),
                      "-oiqt", "-n", *args], source.work, _environment())
    produced = out / f"{onnx_path.stem}_full_integer_quant.tflite"
    if not produced.is_file():
        raise VendorPathFailed("onnx2tf", "wrote no full-integer TFLite")
    return produced


def _tf_converter(source: Source) -> Path:
    """TensorFlow's full-integer conversion of the SavedModel (a Keras source exported to one first)."""
    saved = source.inputs.model.path
    if source.format == "keras":
        saved = source.work / "saved_model"
        with step_of("Keras export"):
            source.inputs.model.handle.export(str(saved), format="tf_saved_model")
    import tensorflow as tf  # heavy optional dependency

    calibration = source.inputs.calibration
    converter = tf.lite.TFLiteConverter.from_saved_model(str(saved))
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: (sample for sample in calibration.samples())
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = converter.inference_output_type = tf.int8
    path = source.work / "tf_int8.tflite"
    with step_of("TF converter"):
        path.write_bytes(converter.convert())
    return path


def mobile_npu(source: Source) -> Path:
    """ONNX Runtime's documented QNN flow: preprocess, the QNN QDQ config calibrated on the data, quantize."""
    from onnxruntime.quantization import quantize
    from onnxruntime.quantization.execution_providers.qnn import get_qnn_qdq_config, qnn_preprocess_model

    from edgepipe.load.source import load_model
    from edgepipe.quantize.onnx_qdq import calibration_reader

    onnx_path = source.onnx()
    names = [spec.name for spec in load_model(onnx_path).signature.inputs]
    preprocessed, qdq = source.work / "qnn_preprocessed.onnx", source.work / "qnn_qdq.onnx"
    with step_of("qnn_preprocess_model"):
        model = preprocessed if qnn_preprocess_model(str(onnx_path), str(preprocessed)) else onnx_path
    with step_of("ORT quantize"):
        quantize(str(model), str(qdq), get_qnn_qdq_config(str(model), calibration_reader(source.inputs.calibration,
                                                                                           names)))
    return qdq


def rk3588(source: Source) -> tuple[Any, Any]:
    """rknn-toolkit2's own flow in its environment: (the compile result with the layer table's placement, the
    simulator's outputs on the evaluation samples)."""
    import numpy as np

    from edgepipe.graph.onnx_reader import read_onnx
    from edgepipe.metrics.compare import ModelOutputs
    from edgepipe.vendors.base import CompileResult, last_line
    from edgepipe.vendors.onnx_names import named_copy
    from edgepipe.vendors.rknn import layers
    from edgepipe.vendors.rknn.toolkit import ENV, placement_from_log

    if not ENV.installed():
        raise VendorPathFailed("n/a", "rknn-toolkit2 is not installed (edgepipe toolchain install rknn)")
    graph = read_onnx(source.onnx())
    named = named_copy(source.onnx(), graph, source.work / "named.onnx")  # the layer table names edgepipe's nodes
    data = source.data
    dataset, evaluation = [], []
    for i, sample in enumerate(source.inputs.calibration.samples()):
        dataset.append([_npy(source.work / f"calib_{i}_{j}.npy", a) for j, a in enumerate(sample)])
    for i, sample in enumerate(data.samples(source.limit())):
        evaluation.append([_npy(source.work / f"eval_{i}_{j}.npy", a) for j, a in enumerate(sample)])
    request = {"model": str(named), "target_platform": "rk3588", "workdir": str(source.work), "dataset": dataset,
               "evaluation": evaluation, "answer": str(source.work / "answer.json")}
    done = subprocess.run([str(ENV.python), "-I", str(RUNNER)], input=json.dumps(request), capture_output=True,
                          text=True, cwd=source.work, env={**os.environ, "RKNN_LOG_LEVEL": "4"}, check=False,
                          timeout=3600)
    answer_path = source.work / "answer.json"
    if not answer_path.is_file():
        raise VendorPathFailed("rknn", f"the toolkit exited {done.returncode}: {last_line(done.stderr or done.stdout)}")
    answer = json.loads(answer_path.read_text())
    if "error" in answer:
        raise VendorPathFailed("rknn", last_line(answer["error"]))
    steps, raised = answer["steps"], answer["raised"]
    failed = next((s for s in ("config", "load_onnx", "build") if steps.get(s) != 0), None)
    tool = "rknn-toolkit2 " + answer["version"]
    if failed:
        errors = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("E ")]
        return CompileResult(tool=tool, status="compile_failed", detail=f"{failed}: " + raised.get(
            failed, errors[-1] if errors else f"returned {steps.get(failed)}")), None
    placement, unmatched, _ = placement_from_log(graph, layers.parse(done.stdout + done.stderr, answer.get("log", "")))
    result = CompileResult(tool=tool, status="compiled", placement=placement, unmatched=unmatched)
    if steps.get("init_runtime") != 0 or steps.get("inference") != 0:
        step = "init_runtime" if steps.get("init_runtime") != 0 else "inference"
        return result, f"{step}: {raised.get(step, 'failed')}"
    with np.load(answer["outputs"]) as saved:
        arrays = [saved[f"output_{i}"] for i in range(len(saved.files))]
    return result, ModelOutputs([t.name for t in graph.graph_outputs][:len(arrays)], arrays)


def _npy(path: Path, array: Any) -> str:
    import numpy as np

    np.save(path, np.asarray(array))
    return str(path)


