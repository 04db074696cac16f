"""Export stage, ONNX inputs: the float TFLite, along the first conversion route that gives the model's function.

Routes (:mod:`edgepipe.export.tflite_routes`) are tried in order: onnx2tf's own conversion first, then what its
failure points at (edgepipe's unrolling of recurrent ops, builtin approximations of Select TF ops, graph rewrites
of the node it failed at, the parameter replacement onnx2tf itself suggests for that node). A route's TFLite is
kept only when LiteRT runs it with the ONNX model's inputs and it computes the ONNX model's outputs on calibration
samples (:mod:`edgepipe.export.float_match`); the report names the route and the worst output cosine. When every
route fails, the report leads with onnx2tf's own failure and names the routes tried after it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edgepipe.artifacts import Artifact
from edgepipe.containment import LITERT, contained, onnx2tf_failure
from edgepipe.errors import ToolFailed
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs

STAGE = "export"
#: Most conversions one build tries (each runs onnx2tf: minutes on a real model).
MAX_ROUTES = 5


def tflite_of_onnx(inputs: BuildInputs, onnx_path: Path, model: Any, folder: Path, scratch: Path,
                   stages: StageLog) -> Artifact | None:
    """The float TFLite of the ONNX model ``model`` (saved at ``onnx_path``), or None with the failure recorded."""
    from edgepipe.export.onnx_to_tflite import ConversionError, SelectOpsError, approximable, discard
    from edgepipe.export.onnx_unroll_rnn import has_recurrent
    from edgepipe.export.tflite_routes import Failure, Route, after_failure, first_routes

    tflite_path = folder / "model.tflite"
    routes: list[Route] = first_routes(has_recurrent(model))
    tried: list[Route] = []
    first: ToolFailed | None = None  # onnx2tf's own conversion's failure: what the report leads with
    failure: ToolFailed | None = None
    while routes and len(tried) < MAX_ROUTES:
        route = routes.pop(0)
        tried.append(route)
        found = Failure()
        try:
            return _convert(inputs, onnx_path, tflite_path, scratch, stages, route, failure)
        except ConversionError as exc:
            failure = onnx2tf_failure(f"TFLite conversion failed: {exc}")
            select = tuple(exc.ops) if isinstance(exc, SelectOpsError) else ()
            found = Failure(exc.node, select, tuple(approximable(list(select)) or ()), exc.suggested)
        except ToolFailed as refused:  # LiteRT refused to run onnx2tf's output
            failure = refused
        discard(tflite_path)
        first = first or failure
        derived = after_failure(route, model, found, tried + routes)
        approximated = [r for r in derived if r.approximate != route.approximate]  # the same conversion, builtin ops
        routes = approximated + routes + [r for r in derived if r not in approximated]
    assert failure is not None and first is not None
    if len(tried) > 1:  # other routes failed too: onnx2tf's own reason first, then the last route's
        failure = ToolFailed(first.tool, f"{first.message}; routes tried after it: "
                                         f"{', '.join(r.name for r in tried[1:])}; the last: {failure.message}",
                             first.next_step)
    stages.fail(STAGE, failure, artifact=tflite_path.name)
    return None


def _convert(inputs: BuildInputs, onnx_path: Path, tflite_path: Path, scratch: Path, stages: StageLog,
             route: Any, before: ToolFailed | None) -> Artifact:
    """One route: convert, check the inputs and the function; the artifact names the route."""
    from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite

    assert inputs.calibration is not None
    names = [spec.name for spec in inputs.model.signature.inputs]
    why = f" after the previous route failed: {before.message}" if before else ""
    with stages.stage(STAGE, f"float TFLite through {route.name} (input shapes kept{why})"):
        convert_onnx_to_tflite(onnx_path, tflite_path, inputs.calibration, names, scratch, route)
        _check_same_inputs(tflite_path, inputs)
        worst = _check_same_function(onnx_path, tflite_path, inputs)
    stages.annotate(STAGE, f"route: {route.name}; float check: worst output cosine {worst:.6f}")
    stages.annotate(STAGE, _constants_left_out(tflite_path, inputs))
    return Artifact(tflite_path, "tflite", "fp32", route=route.name)


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


def _check_same_function(onnx_path: Path, tflite_path: Path, inputs: BuildInputs) -> float:
    """onnx2tf's float TFLite must compute the ONNX model's function on calibration samples; returns the worst
    output cosine.

    A conversion can succeed and still compute something else (a byte-sequence classifier: output
    cosine 0.019); every int8 TFLite made from it would then be judged against the ONNX and fail
    for a reason no calibration fixes, and the TFLite targets would report quantization errors.
    """
    from edgepipe.export.float_match import float_agreement
    from edgepipe.export.onnx_to_tflite import ConversionError

    assert inputs.calibration is not None
    with contained(LITERT):
        agreement = float_agreement(onnx_path, tflite_path, inputs.calibration)
    if agreement.problem is not None:
        raise ConversionError(f"onnx2tf's float TFLite does not compute the ONNX model's outputs: {agreement.problem}")
    return agreement.cosine
