"""Stage: export the source model to float ONNX and float TFLite (batch size 1).

- Keras / SavedModel: float ONNX (tf2onnx) and float TFLite (TFLite converter).
- ONNX: the model with its dynamic dimensions fixed on load, and float TFLite through
  onnx2tf (:mod:`edgepipe.export.onnx_to_tflite`), which needs static shapes and calibration data,
  along the first conversion route whose TFLite gives the ONNX model's outputs on calibration samples
  (:mod:`edgepipe.stages.export_tflite`; the report names the route). A model no route converts keeps
  its ONNX artifacts; the report says why the TFLite is missing. A dynamically quantized model
  (``MatMulInteger``, ``ConvInteger``, ``DynamicQuantizeLSTM``) is dequantized to float first
  (:mod:`edgepipe.export.onnx_dynamic_dequantized`) and quantized again like any float model.
- PyTorch (``.pt2`` or a ``python:`` factory): float ONNX through ``torch.onnx`` (dynamo),
  then as an ONNX input (:mod:`edgepipe.stages.export_torch`).
- TFLite: the file itself, and its float ONNX through tf2onnx's TFLite front end
  (:mod:`edgepipe.export.tflite_to_onnx`, checked against LiteRT; an int8 file dequantized), so the
  ladder and the ONNX targets get it too. A file LiteRT cannot run (custom ops) yields no artifact
  and the report names the ops.

A converter that fails (tf2onnx, the TFLite converter, onnx2tf) or a float artifact its runtime
refuses is recorded as a failed stage with the tool's message and a next step; the build goes
on with the other format (:mod:`edgepipe.containment`).
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from edgepipe.artifacts import Artifact
from edgepipe.containment import TF2ONNX, TFLITE_CONVERTER, Tool, contained, loadable
from edgepipe.errors import ToolFailed
from edgepipe.export.onnx_quantized_input import already_quantized_artifacts
from edgepipe.load.onnx_quantized import QuantizedKind, quantized_kind
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs

STAGE = "export"
ArtifactFormat = Literal["onnx", "tflite"]

log = logging.getLogger(__name__)


def export_stage(inputs: BuildInputs, folder: Path, scratch: Path, stages: StageLog) -> tuple[list[Artifact], object]:
    """Float ONNX and float TFLite of the source model (or the source itself when it already is one)."""
    model = inputs.model
    if model.format in ("keras", "savedmodel"):
        return _export_tf_graph(inputs, folder, scratch, stages)
    if model.format == "onnx":
        return loadable(_export_onnx_input(inputs, folder, scratch, stages), stages, STAGE), None
    if model.format == "pytorch":  # ONNX through torch.onnx, then on as an ONNX input (TFLite via onnx2tf)
        from edgepipe.stages.export_torch import as_onnx_input

        onnx_inputs = as_onnx_input(inputs, folder, stages)
        exported = _export_onnx_input(onnx_inputs, folder, scratch, stages) if onnx_inputs else []
        return loadable(exported, stages, STAGE), None
    return loadable(_export_tflite_input(inputs, folder, stages), stages, STAGE), None


def _export_tf_graph(inputs: BuildInputs, folder: Path, scratch: Path,
                     stages: StageLog) -> tuple[list[Artifact], object]:
    """Float ONNX (tf2onnx) and float TFLite (TFLite converter); a converter that fails leaves its format out."""
    from edgepipe.export.tf_function import build_tf_graph
    from edgepipe.export.to_onnx import export_onnx
    from edgepipe.export.to_tflite import export_tflite

    artifacts = []
    exporters: list[tuple[ArtifactFormat, Tool, Callable[[Any, Path], Path]]] = [
        ("onnx", TF2ONNX, export_onnx), ("tflite", TFLITE_CONVERTER, export_tflite)]
    with stages.stage(STAGE, "float ONNX (tf2onnx) and float TFLite (TFLite converter), batch size 1"):
        graph = build_tf_graph(inputs.model, scratch)
        for fmt, tool, export in exporters:
            path = folder / f"model.{fmt}"
            try:
                with contained(tool):
                    artifacts.append(Artifact(export(graph, path), fmt, "fp32"))
            except ToolFailed as failure:
                stages.fail(STAGE, failure, artifact=path.name)
                path.unlink(missing_ok=True)
    return loadable(artifacts, stages, STAGE), graph


def _export_onnx_input(inputs: BuildInputs, folder: Path, scratch: Path, stages: StageLog) -> list[Artifact]:
    import onnx

    from edgepipe.graph.onnx_edit import constants_to_initializers
    from edgepipe.load.onnx_shapes import dynamic_inputs

    source = inputs.model.handle
    kind = quantized_kind(source)
    dequantized = _dequantized_source(inputs, kind, stages) if kind.form == "dynamic" else None
    if kind.is_quantized and dequantized is None:
        # shipped quantized: kept as the int8 artifact, never rewritten (export/onnx_quantized_input)
        artifacts, reason = already_quantized_artifacts(source, kind, folder)
        reference = next((a for a in artifacts if a.precision == "fp32"), None)
        if reference is None or inputs.calibration is None or not _tflite_wanted(inputs) or dynamic_inputs(source):
            stages.skip("export", reason + "; no TFLite")
            return artifacts
        stages.skip("export", reason + "; for the TFLite targets its float reference is converted and quantized "
                                       "again with your calibration data (the shipped Q/DQ parameters do not carry "
                                       "over)")
        from edgepipe.stages.export_tflite import tflite_of_onnx

        tflite = tflite_of_onnx(inputs, reference.path, onnx.load(str(reference.path)), folder, scratch, stages)
        return artifacts + ([tflite] if tflite is not None else [])
    onnx_path = folder / "model.onnx"
    model = onnx.ModelProto()
    model.CopyFrom(dequantized if dequantized is not None else source)  # the loaded model: dynamic dims fixed
    constants_to_initializers(model)
    onnx.save(model, str(onnx_path))
    artifacts = [Artifact(onnx_path, "onnx", "fp32", route="dequantized by edgepipe" if dequantized else "")]
    dynamic = dynamic_inputs(source)
    if dynamic:
        stages.skip("export", f"input is ONNX; TFLite needs static shapes, {', '.join(dynamic)} still dynamic "
                              "(set input_shapes in the config)")
        return artifacts
    if inputs.calibration is None:
        stages.skip("export", "input is ONNX; onnx2tf needs calibration data for TFLite (give --calib)")
        return artifacts
    if not _tflite_wanted(inputs):
        stages.skip("export", "input is ONNX and no target deploys TFLite: no onnx2tf conversion")
        return artifacts
    from edgepipe.stages.export_tflite import tflite_of_onnx

    tflite = tflite_of_onnx(inputs, onnx_path, model, folder, scratch, stages)
    return artifacts + ([tflite] if tflite is not None else [])


def _tflite_wanted(inputs: BuildInputs) -> bool:
    """Whether a target of the build deploys TFLite, or none is named (``edgepipe export``): onnx2tf takes minutes
    on a real model, run only when its output is deployed or checked."""
    return not inputs.targets or any("tflite" in target.deploy_formats for target in inputs.targets)


def _dequantized_source(inputs: BuildInputs, kind: QuantizedKind, stages: StageLog) -> Any:
    """The float model of a dynamically quantized ONNX input, to convert and quantize again with the calibration
    data (:mod:`edgepipe.export.onnx_dynamic_dequantized`); None (the shipped file stays the int8 artifact) without
    calibration data or when its chains cannot be read."""
    from edgepipe.export.onnx_dynamic_dequantized import NotDequantizable, dequantize_dynamic

    if inputs.calibration is None:
        return None
    start = time.perf_counter()
    try:
        dequantized = dequantize_dynamic(inputs.model.handle)
    except NotDequantizable as exc:
        stages.skip("export", f"input is {kind.describe()}; edgepipe cannot dequantize it ({exc})")
        return None
    ops = ", ".join(f"{op} {count}" for op, count in sorted(dequantized.rewritten.items()))
    stages.ran("export", time.perf_counter() - start,
               f"input is {kind.describe()}: dequantized to float by edgepipe ({ops} rewritten with their weights "
               "times their scales), then converted and quantized again with your calibration data; the shipped "
               "file itself is not an artifact")
    return dequantized.model


def _export_tflite_input(inputs: BuildInputs, folder: Path, stages: StageLog) -> list[Artifact]:
    from edgepipe.export.tflite_ops import custom_op_names, runnable_in_litert
    from edgepipe.quantize.tflite_aiedge import tflite_kind

    source = inputs.model.path
    problem = runnable_in_litert(source)
    if problem is not None:
        custom = custom_op_names(source)
        ops = f"custom ops {', '.join(custom)}" if custom else "an op LiteRT's built-in resolver lacks"
        stages.skip("export", f"input is TFLite with {ops}: LiteRT cannot run it here ({problem}); "
                              "no artifact to quantize or evaluate")
        return []
    kind = tflite_kind(source)
    wants_onnx = not inputs.targets or any("onnx" in target.deploy_formats for target in inputs.targets)
    if kind == "int8":
        int8 = Artifact(Path(shutil.copyfile(source, folder / "model_int8.tflite")), "tflite", "int8")
        if not wants_onnx:
            stages.skip("export", "input is an int8 TFLite and no target deploys ONNX: checked and benchmarked only")
            return [int8]
        onnx = _tflite_as_onnx(inputs, source, folder, stages, "input is an int8 TFLite; its float ONNX dequantized "
                                                               "through tf2onnx's TFLite front end, checked against "
                                                               "LiteRT, for the ONNX targets to quantize again")
        return [*onnx, int8]
    custom = custom_op_names(source)
    note = " (float16 weights behind DEQUANTIZE)" if kind == "fp16-weights" else ""
    note += f" with custom ops {', '.join(custom)} (LiteRT runs them on the host)" if custom else ""
    tflite = Artifact(Path(shutil.copyfile(source, folder / "model.tflite")), "tflite", "fp32")
    if not wants_onnx:
        stages.skip("export", f"input is already a float TFLite{note}; no target deploys ONNX: no ONNX conversion")
        return [tflite]
    return [*_tflite_as_onnx(inputs, source, folder, stages, f"input is a float TFLite{note}; float ONNX through "
                                                             "tf2onnx's TFLite front end, checked against LiteRT"),
            tflite]


def _tflite_as_onnx(inputs: BuildInputs, source: Path, folder: Path, stages: StageLog, detail: str) -> list[Artifact]:
    """The checked float ONNX of the TFLite ``source`` (dequantized when it is int8), or none with the failure
    recorded; the stage record names the route that made it."""
    from edgepipe.export.tflite_to_onnx import convert_tflite_to_onnx
    from edgepipe.quantize.tflite_aiedge import tflite_kind

    onnx_path = folder / "model.onnx"
    try:
        with stages.stage("export", detail):
            with contained(TF2ONNX):
                made = convert_tflite_to_onnx(source, onnx_path, _check_samples(inputs, source),
                                              dequantize=tflite_kind(source) == "int8")
        stages.annotate("export", f"route: {made.route}")
    except ToolFailed as failure:
        stages.fail(STAGE, failure, artifact=onnx_path.name)
        return []
    return [Artifact(onnx_path, "onnx", "fp32", route=made.route)]


def _check_samples(inputs: BuildInputs, source: Path) -> list[list[Any]]:
    """Up to 4 calibration samples, else one sample of standard-normal inputs of the TFLite's own shapes."""
    import numpy as np

    from edgepipe.runtimes import open_runner

    if inputs.calibration is not None:
        return list(inputs.calibration.samples(4))
    with open_runner(source) as runner:
        rng = np.random.default_rng(0)
        shapes = [[d or 1 for d in spec.shape] for spec in runner.signature.inputs]
    return [[rng.standard_normal(shape).astype(np.float32) for shape in shapes]]
