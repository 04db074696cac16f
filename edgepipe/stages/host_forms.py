"""Stage (host-cpu builds only): the extra int8 forms host-cpu may deploy, and their fidelity.

Made once per quantization group, before the latency stage, so the forms are
timed in the same measurement session as every other artifact
(:class:`~edgepipe.quantize.host.forms.HostMeasurement`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.containment import LITERT, ORT_QUANTIZER, contained
from edgepipe.errors import ToolFailed
from edgepipe.latency.interleaved import LatencyResult
from edgepipe.metrics.compare import reference_of
from edgepipe.quantize.host.forms import QDQ_U8_NAME, Faithfulness, HostMeasurement, form_fidelity, host_forms
from edgepipe.report.schema import AccuracyInfo
from edgepipe.stage_log import StageLog
from edgepipe.stages.evaluate import Accuracy
from edgepipe.stages.inputs import BuildInputs

log = logging.getLogger(__name__)
STAGE = "host-forms"


def needs_host_forms(targets: tuple[object, ...]) -> bool:
    """True when a target runs on the host CPU (its deployment artifact is chosen among the int8 forms)."""
    return any(getattr(t, "device_class", None) == "cpu" for t in targets)


def host_forms_stage(inputs: BuildInputs, artifacts: list[Artifact], folder: Path, scratch: Path,
                     stages: StageLog, min_cosine: float | None = None
                     ) -> tuple[list[Artifact], tuple[dict[str, float], dict[str, float]]]:
    """For a group with a CPU target: the host int8 form (the build's QDQ ONNX with uint8 activations, else a U8S8
    QOperator ONNX), and every int8 form's output cosine (as the host computes it; exact int8 semantics).

    ``min_cosine`` (the label-free gate's ``accuracy.min_cosine``): when the evaluation is label-free, an extra
    form whose output cosine on the calibration samples (as the host computes it) is below it is left out, with
    the reason in the stages table: offered next to a ladder result that holds, it would only fail the target.
    """
    if not needs_host_forms(inputs.targets) or inputs.calibration is None:
        return [], ({}, {})
    try:  # a quantizer or runtime failure loses the extra form, never the build
        with stages.stage(STAGE, "ONNX Runtime QDQ with uint8 activations x int8 weights (else QOperator); "
                                 "output cosine of every int8 form on calibration samples"), \
                contained(ORT_QUANTIZER), contained(LITERT):
            forms = host_forms(artifacts, inputs.calibration, folder, scratch)
            cosines = form_fidelity(artifacts + forms, inputs.calibration)
    except ToolFailed as failure:
        stages.fail(STAGE, failure, artifact=QDQ_U8_NAME)
        return [], ({}, {})
    label_free = inputs.evaluation is not None and inputs.evaluation.labels is None
    host, _ = cosines
    kept = [f for f in forms if min_cosine is None or not label_free or host.get(f.key, 1.0) >= min_cosine]
    for form in forms:
        if form not in kept:
            form.path.unlink(missing_ok=True)
            stages.skip(f"{STAGE}:{form.key}", f"left out: output cosine {host.pop(form.key):.4f} < "
                                               f"accuracy.min_cosine {min_cosine:g} on calibration samples "
                                               "(the ladder's model_int8.onnx stays)")
            cosines[1].pop(form.key, None)
    return kept, cosines


def host_measurement(inputs: BuildInputs, cosine: tuple[dict[str, float], dict[str, float]],
                     latency: dict[str, LatencyResult], threads: int | None, accuracy: Accuracy | None = None,
                     artifacts: list[Artifact] | None = None) -> HostMeasurement | None:
    """The group's measurement session with each int8 artifact's output cosine, as the host computes it and with
    exact int8 semantics, and whether each of ``artifacts`` passed its accuracy check on this host's arithmetic
    (host-cpu groups only)."""
    if not needs_host_forms(inputs.targets) or not latency:
        return None
    return HostMeasurement(latency=latency, cosine=cosine[0], threads=threads, reference_cosine=cosine[1],
                           faithful=host_checks(accuracy, artifacts or []))


def host_checks(accuracy: Accuracy | None, artifacts: list[Artifact]) -> dict[str, Faithfulness]:
    """Per artifact, whether it keeps the model's accuracy as this host computes it (``accuracy.host``: int8 ONNX
    on this machine's ONNX Runtime kernels; other artifacts on their runtimes): with labels, its format's top-1
    drop within the threshold (the build's own int8 and converted float artifacts); otherwise, and for host-cpu's
    extra int8 forms, every label-free threshold met. The float reference is faithful by definition."""
    if accuracy is None:
        return {}
    info = accuracy.host or accuracy.exact
    reference = reference_of(artifacts)
    checks: dict[str, Faithfulness] = {}
    if reference is not None:
        checks[reference.key] = Faithfulness(True, "the float reference")
    comparisons = {c.artifact: c for c in (info.label_free.comparisons if info.label_free else [])}
    primary: dict[str, str] = {}  # each format's first quantized artifact: the build's own (extra forms follow it)
    for artifact in artifacts:
        if artifact.precision != "fp32":
            primary.setdefault(artifact.format, artifact.key)
    for artifact in artifacts:
        if artifact.key in checks:
            continue
        drop = _top1_drop(info, artifact, primary)
        if drop is not None:
            ok = drop <= info.threshold_points + 1e-9
            checks[artifact.key] = Faithfulness(ok, f"top-1 drop {drop:.2f} points on {info.samples} samples "
                                                    f"({info.arithmetic}; at most {info.threshold_points:g})")
        elif artifact.key in comparisons:
            failures = comparisons[artifact.key].failures
            checks[artifact.key] = Faithfulness(not failures, failures[0] if failures else
                                                f"every label-free threshold met ({info.arithmetic})")
    return checks


def _top1_drop(info: AccuracyInfo, artifact: Artifact, primary: dict[str, str]) -> float | None:
    """The top-1 drop (points) the evaluation recorded for ``artifact``: its format's int8 drop for the build's own
    int8 artifact of that format, the float drop for a converted float one; None when none was recorded."""
    if info.metric != "top1" or info.float is None:
        return None
    if artifact.precision == "fp32":
        score = info.float_by_format.get(artifact.format)
        return None if score is None else round(100 * (info.float - score), 4)
    if primary.get(artifact.format) == artifact.key:
        return info.drop_points.get(artifact.format)
    return None
