"""Stage: export the source model to float ONNX and float TFLite (batch size 1).

- Keras / SavedModel: float ONNX (tf2onnx) and float TFLite (TFLite converter).
- ONNX: the model with its dynamic dimensions fixed on load, and float TFLite through
  onnx2tf (:mod:`edgepipe.export.onnx_to_tflite`), which needs static shapes and
  calibration data, kept only when it gives the ONNX model's outputs on calibration samples
  (:mod:`edgepipe.export.float_match`). A model onnx2tf cannot convert keeps its ONNX
  artifacts; the report says why the TFLite is missing.
- PyTorch (``.pt2`` or a ``python:`` factory): float ONNX through ``torch.onnx`` (dynamo),
  then as an ONNX input (:mod:`edgepipe.stages.export_torch`).
- TFLite: the file itself, and for a float file its float ONNX through tf2onnx's TFLite front
  end (:mod:`edgepipe.export.tflite_to_onnx`, checked against LiteRT), so the ladder and the ONNX
  targets get it too. An int8 file is only checked and benchmarked; a file LiteRT cannot run
  (custom ops) yields no artifact and the report names the ops.

A converter that fails (tf2onnx, the TFLite converter, onnx2tf) or a float artifact its runtime
refuses is recorded as a failed stage with the tool's message and a next step; the build goes
on with the other format (:mod:`edgepipe.containment`).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from edgepipe.artifacts import Artifact
from edgepipe.containment import LITERT, TF2ONNX, TFLITE_CONVERTER, Tool, contained, loadable, onnx2tf_failure
from edgepipe.errors import ToolFailed
from edgepipe.export.onnx_quantized_input import already_quantized_artifacts
from edgepipe.load.onnx_quantized import quantized_kind
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

    kind = quantized_kind(inputs.model.handle)
    if kind.is_quantized:  # shipped quantized: kept as the int8 artifact, never rewritten (export/onnx_quantized_input)
        artifacts, reason = already_quantized_artifacts(inputs.model.handle, kind, folder)
        stages.skip("export", reason)
        return artifacts
    onnx_path = folder / "model.onnx"
    model = onnx.ModelProto()
    model.CopyFrom(inputs.model.handle)  # the loaded model: dynamic input dims already fixed
    constants_to_initializers(model)
    onnx.save(model, str(onnx_path))
    artifacts = [Artifact(onnx_path, "onnx", "fp32")]
    dynamic = dynamic_inputs(inputs.model.handle)
    if dynamic:
        stages.skip("export", f"input is ONNX; TFLite needs static shapes, {', '.join(dynamic)} still dynamic "
                              "(set input_shapes in the config)")
        return artifacts
    if inputs.calibration is None:
        stages.skip("export", "input is ONNX; onnx2tf needs calibration data for TFLite (give --calib)")
        return artifacts
    if inputs.targets and not any("tflite" in target.deploy_formats for target in inputs.targets):
        # onnx2tf takes minutes on a real model; no target here would deploy or check its output
        stages.skip("export", "input is ONNX and no target deploys TFLite: no onnx2tf conversion")
        return artifacts
    from edgepipe.export.onnx_to_tflite import (
        ConversionError,
        SelectOpsError,
        approximable,
        convert_onnx_to_tflite,
        discard,
    )
    from edgepipe.export.onnx_unroll_rnn import has_recurrent

    names = [spec.name for spec in inputs.model.signature.inputs]
    tflite_path = folder / "model.tflite"
    # onnx2tf's own conversion first; for a recurrent model that fails, again with edgepipe's exact unrolling; a
    # TFLite that needs Select TF ops onnx2tf can write in builtin ops, again with those (``-rtpo``)
    tries: list[_Try] = [_Try()] + ([_Try(unroll=True)] if has_recurrent(model) else [])
    failure: ToolFailed | None = None
    first: ToolFailed | None = None  # onnx2tf's own conversion's failure: what the report leads with
    index = 0
    while index < len(tries):
        attempt, index = tries[index], index + 1
        try:
            with stages.stage("export", attempt.detail(failure)):
                convert_onnx_to_tflite(onnx_path, tflite_path, inputs.calibration, names, scratch,
                                       unroll=attempt.unroll, approximate=attempt.approximate)
                _check_same_inputs(tflite_path, inputs)
                _check_same_function(onnx_path, tflite_path, inputs)
            stages.annotate("export", _constants_left_out(tflite_path, inputs))
            return [*artifacts, Artifact(tflite_path, "tflite", "fp32")]
        except ConversionError as exc:
            failure = onnx2tf_failure(f"TFLite conversion failed: {exc}")
            replace = approximable(exc.ops) if isinstance(exc, SelectOpsError) else None
            if replace and not attempt.approximate:
                tries.insert(index, _Try(attempt.unroll, replace))
        except ToolFailed as refused:  # LiteRT refused to run onnx2tf's output, or it computes something else
            failure = refused
        discard(tflite_path)
        first = first or failure
        last = attempt
    assert failure is not None and first is not None
    if failure is not first:  # a retry failed too: both reasons, onnx2tf's own first
        failure = ToolFailed(first.tool, f"{first.message}; {last.label()}: {failure.message}", first.next_step)
    stages.fail(STAGE, failure, artifact=tflite_path.name)
    return artifacts


@dataclass(frozen=True)
class _Try:
    """One onnx2tf conversion of an ONNX input: with its recurrent ops unrolled by edgepipe, and with the ONNX ops
    whose exact conversion needed Select TF ops approximated in builtin ops
    (:data:`edgepipe.export.onnx_to_tflite.APPROXIMABLE`)."""

    unroll: bool = False
    approximate: list[str] | None = None

    def label(self) -> str:
        """How this try differs from onnx2tf's own conversion (the prefix of its failure in a report)."""
        parts = (["with its recurrent ops unrolled by edgepipe"] if self.unroll else []) + (
            [f"with {', '.join(self.approximate)} approximated in builtin ops by edgepipe"] if self.approximate
            else [])
        return " and ".join(parts)

    def detail(self, before: ToolFailed | None) -> str:
        """The stage record's description of this try, with why it was needed."""
        if not self.unroll and not self.approximate:
            return "float TFLite through onnx2tf (input shapes kept)"
        why = f" after the previous try failed: {before.message}" if before else ""
        return f"float TFLite through onnx2tf (input shapes kept; {self.label()}{why})"


def _check_same_inputs(tflite_path: Path, inputs: BuildInputs) -> None:
    """The TFLite must run a calibration sample and take the ONNX inputs in the same order and shapes."""
    from edgepipe.export.onnx_to_tflite import ConversionError, SelectOpsError
    from edgepipe.export.tflite_ops import custom_op_names, runnable_in_litert
    from edgepipe.runtimes import open_runner

    problem = runnable_in_litert(tflite_path)
    if problem is not None:
        select = [op for op in custom_op_names(tflite_path) if op.startswith("Flex")]
        if select:
            raise SelectOpsError(f"LiteRT cannot run onnx2tf's output: it needs Select TF op(s) {', '.join(select)} "
                                 f"(the Flex delegate, which no NPU runs): {problem}", select)
        raise ConversionError(f"LiteRT cannot run onnx2tf's output: {problem}")
    with open_runner(tflite_path) as runner:
        got = [tuple(s.shape) for s in runner.signature.inputs]
        want = [tuple(s.shape) for s in inputs.model.signature.inputs]
        if got != want:
            raise ConversionError(f"onnx2tf's TFLite takes inputs {got}, the ONNX model {want}")
        assert inputs.calibration is not None
        with contained(LITERT):
            runner.infer(next(inputs.calibration.samples()))


def _constants_left_out(tflite_path: Path, inputs: BuildInputs) -> str:
    """The note that the TFLite at ``tflite_path`` leaves out outputs of the model that are constants (onnx2tf folds
    them away), naming them; empty when it has every output."""
    from edgepipe.runtimes import open_runner

    with open_runner(tflite_path) as runner:
        count = len(runner.signature.outputs)
    constant = inputs.model.signature.constant_outputs
    left_out = len(inputs.model.signature.outputs) - count
    if left_out <= 0 or not constant:
        return ""
    return (f"the TFLite has {count} of the model's {count + left_out} outputs: onnx2tf left out constants among "
            f"{', '.join(constant)} (their values follow from the fixed input shapes alone; an app computes them)")


def _check_same_function(onnx_path: Path, tflite_path: Path, inputs: BuildInputs) -> None:
    """onnx2tf's float TFLite must compute the ONNX model's function on calibration samples.

    A conversion can succeed and still compute something else (a byte-sequence classifier: output
    cosine 0.019); every int8 TFLite made from it would then be judged against the ONNX and fail
    for a reason no calibration fixes, and the TFLite targets would report quantization errors.
    """
    from edgepipe.export.float_match import float_mismatch
    from edgepipe.export.onnx_to_tflite import ConversionError

    assert inputs.calibration is not None
    with contained(LITERT):
        problem = float_mismatch(onnx_path, tflite_path, inputs.calibration)
    if problem is not None:
        raise ConversionError(f"onnx2tf's float TFLite does not compute the ONNX model's outputs: {problem}")


def _export_tflite_input(inputs: BuildInputs, folder: Path, stages: StageLog) -> list[Artifact]:
    from edgepipe.export.tflite_ops import custom_op_names, runnable_in_litert
    from edgepipe.export.tflite_to_onnx import convert_tflite_to_onnx
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
    if kind == "int8":
        stages.skip("export", "input is an int8 TFLite: checked and benchmarked only")
        return [Artifact(Path(shutil.copyfile(source, folder / "model_int8.tflite")), "tflite", "int8")]
    custom = custom_op_names(source)
    note = " (float16 weights behind DEQUANTIZE)" if kind == "fp16-weights" else ""
    note += f" with custom ops {', '.join(custom)} (LiteRT runs them on the host)" if custom else ""
    tflite = Artifact(Path(shutil.copyfile(source, folder / "model.tflite")), "tflite", "fp32")
    if inputs.targets and not any("onnx" in target.deploy_formats for target in inputs.targets):
        stages.skip("export", f"input is already a float TFLite{note}; no target deploys ONNX: no ONNX conversion")
        return [tflite]
    onnx_path = folder / "model.onnx"
    try:
        with stages.stage("export", f"input is a float TFLite{note}; float ONNX through tf2onnx's TFLite front end, "
                                    "checked against LiteRT"):
            with contained(TF2ONNX):
                convert_tflite_to_onnx(tflite.path, onnx_path, _check_samples(inputs, source))
    except ToolFailed as failure:
        stages.fail(STAGE, failure, artifact=onnx_path.name)
        return [tflite]
    return [Artifact(onnx_path, "onnx", "fp32"), tflite]


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
