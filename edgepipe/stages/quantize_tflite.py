"""Stage branch: int8 TFLite from a float TFLite that has no source graph (a .tflite input, or onnx2tf's output).

The TFLite converter needs the TF graph; without one, ``ai-edge-quantizer`` quantizes the
flatbuffer itself (:mod:`edgepipe.quantize.tflite_aiedge`). A file the quantizer cannot
handle (or whose int8 output LiteRT cannot run) is recorded as a failed stage with the
quantizer's message and a next step; the build goes on with the other artifacts and no
target that deploys int8 TFLite can pass.

An int8 op LiteRT refuses at run time on calibration data (a DIV whose divisor quantizes to
its zero point: "div.cc ... data[i] != zero_point", a normalization by a range that is zero on
silence) is repaired: the file is quantized again with that op kept in float
(:data:`FLOAT_WHEN_REFUSED`), and the stage says so.

Without a source graph the fallback ladder cannot re-quantize layer by layer, but it has
one rung here (:func:`widen_if_missed`): when the int8 file misses the label-free
thresholds on the calibration split and every target of the group runs int16
activations, ai-edge-quantizer's int16-activation recipe (a16w8) is tried and kept when
it scores better; the stage detail records both scores and the cost. On a target without CPU fallback
whose vendor compiler is installed (Vela), the a16w8 file is compiled beside the int8 one first, and not kept
when the compiler rejects it or leaves more ops on the CPU (ai-edge-quantizer leaves ops it has no int16 kernel
for, such as HARD_SWISH, in float, which Vela refuses: "IFM has to be 8bit").
"""

from __future__ import annotations

import logging
import re
import shutil
import time
from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.containment import AI_EDGE_QUANTIZER, LITERT, LITERT_ON_QUANTIZED, contained
from edgepipe.errors import ToolFailed
from edgepipe.metrics.compare import ModelOutputs, run_outputs, unmatched_failure
from edgepipe.metrics.label_free import Thresholds
from edgepipe.quantize.quantized_once import data_key
from edgepipe.quantize.vendor_check import VendorCheck
from edgepipe.runtimes import open_runner
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs

log = logging.getLogger(__name__)
STAGE = "quantize-tflite"


#: Calibration samples the a16w8 rung scores int8 against a16w8 on (the ladder's label-free selection size), and
#: that every quantized file must run on.
RUNG_SAMPLES = 64
#: TFLite ops whose int8 kernel can refuse a file at run time (LiteRT's DIV: a divisor at its zero point), kept in
#: float when it does.
FLOAT_WHEN_REFUSED = ("DIV",)
#: Outputs of one file on the rung's samples the build keeps for a second reader (the check that LiteRT runs a file,
#: then its score; another group's rung); larger ones (a segmentation map per sample) are run again.
KEPT_OUTPUT_BYTES = 256 << 20
_REFUSED_OP = re.compile(r"\((\w+)\) failed to (?:invoke|prepare)")


def quantize_graphless_tflite(inputs: BuildInputs, floats: list[Artifact], folder: Path, scratch: Path,
                              stages: StageLog, widen: Thresholds | None = None,
                              vendor_check: VendorCheck | None = None) -> list[Artifact]:
    """Int8 TFLite of every float TFLite artifact, through ai-edge-quantizer (static int8, min/max).

    ``widen``: the label-free thresholds of a gated build whose targets all run int16 activations;
    then :func:`widen_if_missed` may replace a file that misses them by its a16w8 twin, which ``vendor_check``
    (the group's targets without CPU fallback) must compile first.
    """
    made = _quantize_graphless(inputs, floats, folder, scratch, stages)
    if widen is None or not made:
        return made
    source = next(a for a in floats if a.format == "tflite" and a.precision == "fp32")
    return [widen_if_missed(inputs, source.path, a, scratch, stages, widen, vendor_check) for a in made]


def _quantize_graphless(inputs: BuildInputs, floats: list[Artifact], folder: Path, scratch: Path,
                        stages: StageLog) -> list[Artifact]:
    sources = [a for a in floats if a.format == "tflite" and a.precision == "fp32"]
    if not sources:
        return []
    if inputs.calibration is None:
        stages.skip(STAGE, "no calibration data (give --calib or data.calibration)")
        return []
    from edgepipe.export.onnx_to_tflite import int8_output
    from edgepipe.quantize.tflite_aiedge import tflite_kind

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
                path, repair = quantized_once(source.path, folder / "model_int8.tflite", inputs, scratch)
        except ToolFailed as failure:
            (folder / "model_int8.tflite").unlink(missing_ok=True)
            stages.fail(STAGE, failure, artifact="model_int8.tflite")
            continue
        stages.annotate(STAGE, repair)
        quantized.append(Artifact(path, "tflite", "int8"))
    return quantized


def quantize_runnable(source: Path, out: Path, inputs: BuildInputs, scratch: Path,
                      activation_bits: int = 8) -> tuple[Path, str]:
    """ai-edge-quantizer's file of ``source`` that LiteRT runs on the calibration samples, and a note when an op of
    :data:`FLOAT_WHEN_REFUSED` had to stay float for that (empty otherwise); :class:`ToolFailed` when none runs."""
    from edgepipe.quantize.tflite_aiedge import quantize_float_tflite

    assert inputs.calibration is not None
    with contained(AI_EDGE_QUANTIZER):
        path = quantize_float_tflite(source, out, inputs.calibration, scratch, activation_bits)
    try:
        _check_runs(path, inputs)
        return path, ""
    except ToolFailed as refused:
        match = _REFUSED_OP.search(refused.message)
        if match is None or match.group(1) not in FLOAT_WHEN_REFUSED:
            raise
        op, why = match.group(1), refused.message
    with contained(AI_EDGE_QUANTIZER):
        path = quantize_float_tflite(source, out, inputs.calibration, scratch, activation_bits, float_ops=(op,))
    _check_runs(path, inputs)
    return path, (f"LiteRT's int8 {op} refused the quantized file on calibration data ({why}): every {op} kept in "
                  "float (a DEQUANTIZE before it, a QUANTIZE after it)")


def _score(float_path: Path, path: Path, inputs: BuildInputs, thresholds: Thresholds) -> tuple[float, list[str]]:
    """Lowest output cosine of ``path`` against ``float_path`` on the calibration samples, and the thresholds it
    misses; measured once per build (another group's rung on the same files gets these figures)."""
    memo, data = inputs.memo, inputs.calibration
    assert data is not None
    key = ("a16w8 rung score", memo.digest(float_path), memo.digest(path), data_key(data), repr(thresholds))
    return memo.recall(key, lambda: _measured_score(float_path, path, inputs, thresholds))


def _outputs(path: Path, inputs: BuildInputs) -> ModelOutputs:
    """``path``'s outputs on the first :data:`RUNG_SAMPLES` calibration samples, run once per build: the check that
    LiteRT runs a quantized file and its score read the same run (int16 activations run in LiteRT's reference
    kernels, tens of times slower than float)."""
    memo, data = inputs.memo, inputs.calibration
    assert data is not None
    key = ("LiteRT outputs", memo.digest(path), data_key(data), RUNG_SAMPLES)
    return memo.recall(key, lambda: run_outputs(path, data, RUNG_SAMPLES),
                       keep=lambda outputs: sum(a.nbytes for a in outputs.arrays) <= KEPT_OUTPUT_BYTES)


def _measured_score(float_path: Path, path: Path, inputs: BuildInputs,
                    thresholds: Thresholds) -> tuple[float, list[str]]:
    reference, got = _outputs(float_path, inputs), _outputs(path, inputs)
    agreements, unmatched = reference.agreements(got)  # ai-edge-quantizer may reorder outputs (a detector's two)
    lowest = min((a.cosine for a in agreements), default=-1.0) if not unmatched else -1.0
    return lowest, [f for a in agreements for f in thresholds.failures(a)] + [unmatched_failure(n) for n in unmatched]


def widen_if_missed(inputs: BuildInputs, float_path: Path, int8: Artifact, scratch: Path, stages: StageLog,
                    thresholds: Thresholds, vendor_check: VendorCheck | None = None) -> Artifact:
    """``int8``, or its a16w8 twin (int16 activations, int8 weights) when int8 misses ``thresholds``.

    Decided on the calibration split only (the evaluation split judges the kept file); the
    twin is kept when it misses fewer thresholds or has the higher lowest cosine there, and ``vendor_check``
    (when given) does not refuse it.
    """
    assert inputs.calibration is not None
    name, start = f"{STAGE}-a16w8", time.perf_counter()
    samples = min(len(inputs.calibration), RUNG_SAMPLES)
    try:
        with contained(LITERT_ON_QUANTIZED):
            cosine, missed = _score(float_path, int8.path, inputs, thresholds)
    except ToolFailed as failure:  # the int8 file cannot be scored here: kept, and evaluation reports it
        stages.fail(name, failure, artifact=int8.key)
        return int8
    if not missed:
        stages.ran(name, time.perf_counter() - start, f"int8 met the label-free thresholds on {samples} calibration "
                   f"samples (lowest output cosine {cosine:.4f}): kept, int16 activations not tried")
        return int8
    wide_path = scratch / "a16w8" / int8.path.name
    wide_path.parent.mkdir(exist_ok=True)
    try:
        _, repair = quantized_once(float_path, wide_path, inputs, scratch, activation_bits=16)
        with contained(LITERT_ON_QUANTIZED):
            wide_cosine, wide_missed = _score(float_path, wide_path, inputs, thresholds)
    except ToolFailed as failure:
        stages.fail(name, failure)
        return int8
    kept = (len(wide_missed), -wide_cosine) < (len(missed), -cosine)
    refused: list[str] = []
    if kept and vendor_check is not None:  # a target without CPU fallback: its compiler must take it whole
        wide = Artifact(wide_path, "tflite", "mixed")
        refused = [c.line(wide) for c in vendor_check(wide, int8) if c.refused]
        kept = not refused
    stages.ran(name, time.perf_counter() - start,
               f"int8 missed on {samples} calibration samples ({missed[0]}); ai-edge-quantizer int16 activations "
               f"(a16w8): lowest output cosine {cosine:.4f} -> {wide_cosine:.4f}, "
               + ("a16w8 kept (2x activation memory and bandwidth)" if kept else
                  f"int8 kept (the vendor compiler refused a16w8: {'; '.join(refused)})" if refused else
                  "int8 kept")
               + (f"; a16w8: {repair}" if repair else ""))
    if not kept:
        return int8
    shutil.copyfile(wide_path, int8.path)
    return Artifact(int8.path, "tflite", "mixed")


def quantized_once(source: Path, out: Path, inputs: BuildInputs, scratch: Path,
                   activation_bits: int = 8) -> tuple[Path, str]:
    """:func:`quantize_runnable`, once per build for a float file and activation width: another group gets a copy
    of the file and its repair note (and runs no quantizer, nor LiteRT to check the file again)."""
    memo = inputs.memo
    assert inputs.calibration is not None
    digest = memo.digest(source)
    key = ("ai-edge-quantizer file", digest, activation_bits, data_key(inputs.calibration))
    kept = scratch / "quantized_once" / f"{digest[:16]}_a{activation_bits}.tflite"  # never edited, unlike `out`
    kept.parent.mkdir(exist_ok=True)

    def made() -> tuple[Path, str]:
        return quantize_runnable(source, kept, inputs, scratch, activation_bits)

    path, repair = memo.recall(key, made)
    shutil.copyfile(path, out)
    return out, repair


def _check_runs(path: Path, inputs: BuildInputs) -> None:
    """Raise :class:`ToolFailed` unless LiteRT runs the quantized model on the first :data:`RUNG_SAMPLES` calibration
    samples (first in a child process: a file that crashes LiteRT must not take the build down with it)."""
    from edgepipe.runtimes.crash_probe import litert_crash

    assert inputs.calibration is not None
    crash = litert_crash(path)
    if crash is not None:
        raise ToolFailed(LITERT_ON_QUANTIZED.name, crash, LITERT_ON_QUANTIZED.advice(crash))
    with contained(LITERT_ON_QUANTIZED):
        _outputs(path, inputs)


def _takes_source_inputs(path: Path, inputs: BuildInputs) -> bool:
    """True when ``path`` runs and takes the source model's inputs in the same order and shapes."""
    from edgepipe.runtimes.crash_probe import litert_crash

    crash = litert_crash(path)
    if crash is not None:  # a file that kills LiteRT is never opened in this process
        log.info("onnx2tf's int8 TFLite is unusable (%s); quantizing the float TFLite instead", crash)
        return False
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
