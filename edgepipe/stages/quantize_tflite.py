"""Stage branch: int8 TFLite from a float TFLite that has no source graph (a .tflite input, or onnx2tf's output).

The TFLite converter needs the TF graph; without one, ``ai-edge-quantizer`` quantizes the
flatbuffer itself (:mod:`edgepipe.quantize.tflite_aiedge`). A file the quantizer cannot
handle (or whose int8 output LiteRT cannot run) is recorded as a failed stage with the
quantizer's message and a next step; the build goes on with the other artifacts and no
target that deploys int8 TFLite can pass.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.errors import ToolFailed
from edgepipe.runtimes import open_runner
from edgepipe.stage_log import StageLog
from edgepipe.stages.boundaries import AI_EDGE_QUANTIZER, LITERT, LITERT_ON_QUANTIZED, contained
from edgepipe.stages.inputs import BuildInputs

log = logging.getLogger(__name__)
STAGE = "quantize-tflite"


def quantize_graphless_tflite(inputs: BuildInputs, floats: list[Artifact], folder: Path, scratch: Path,
                              stages: StageLog) -> list[Artifact]:
    """Int8 TFLite of every float TFLite artifact, through ai-edge-quantizer (static int8, min/max)."""
    sources = [a for a in floats if a.format == "tflite" and a.precision == "fp32"]
    if not sources:
        return []
    if inputs.calibration is None:
        stages.skip(STAGE, "no calibration data (give --calib or data.calibration)")
        return []
    from edgepipe.export.onnx_to_tflite import int8_output
    from edgepipe.quantize.tflite_aiedge import quantize_float_tflite, tflite_kind

    prebuilt = next((p for p in map(int8_output, (a.path for a in sources)) if p is not None), None)
    if prebuilt is not None and _takes_source_inputs(prebuilt, inputs):
        # onnx2tf already calibrated a full-integer TFLite during export (_takes_source_inputs ran it)
        with stages.stage(STAGE, f"onnx2tf full-integer TFLite (TF converter, {len(inputs.calibration)} "
                                 "calibration samples)"):
            path = Path(shutil.copyfile(prebuilt, folder / "model_int8.tflite"))
        return [Artifact(path, "tflite", "int8")]
    quantized = []
    for source in sources:
        kind = tflite_kind(source.path)
        detail = (f"ai-edge-quantizer static int8 on {len(inputs.calibration)} calibration samples"
                  + (" (float16 weights folded to float32 first)" if kind == "fp16-weights" else ""))
        try:
            with stages.stage(STAGE, detail):
                with contained(AI_EDGE_QUANTIZER):
                    path = quantize_float_tflite(source.path, folder / "model_int8.tflite", inputs.calibration,
                                                 scratch)
                _check_runs(path, inputs)
        except ToolFailed as failure:
            (folder / "model_int8.tflite").unlink(missing_ok=True)
            stages.fail(STAGE, failure, artifact="model_int8.tflite")
            continue
        quantized.append(Artifact(path, "tflite", "int8"))
    return quantized


def _check_runs(path: Path, inputs: BuildInputs) -> None:
    """Raise :class:`ToolFailed` unless LiteRT runs the quantized model on a calibration sample."""
    assert inputs.calibration is not None
    with contained(LITERT_ON_QUANTIZED), open_runner(path) as runner:
        runner.infer(next(inputs.calibration.samples()))


def _takes_source_inputs(path: Path, inputs: BuildInputs) -> bool:
    """True when ``path`` runs and takes the source model's inputs in the same order and shapes."""
    try:
        with contained(LITERT), open_runner(path) as runner:
            got = [tuple(s.shape) for s in runner.signature.inputs]
            if got == [tuple(s.shape) for s in inputs.model.signature.inputs] and inputs.calibration is not None:
                runner.infer(next(inputs.calibration.samples()))
    except ToolFailed as failure:  # an unusable prebuilt file only means quantizing ourselves
        log.info("onnx2tf's int8 TFLite does not run (%s); quantizing the float TFLite instead", failure.message)
        return False
    want = [tuple(s.shape) for s in inputs.model.signature.inputs]
    if got != want:
        log.info("onnx2tf's int8 TFLite takes inputs %s, not %s; quantizing the float TFLite instead", got, want)
    return got == want
