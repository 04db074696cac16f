"""Stage (host-cpu builds only): the extra int8 forms host-cpu may deploy, and their fidelity.

Made once per quantization group, before the latency stage, so the forms are
timed in the same measurement session as every other artifact
(:class:`~edgepipe.bench.host_forms.HostMeasurement`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.bench.host_forms import HostMeasurement, form_fidelity, host_forms
from edgepipe.latency import LatencyResult
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs

log = logging.getLogger(__name__)
STAGE = "host-forms"


def needs_host_forms(targets: tuple[object, ...]) -> bool:
    """True when a target runs on the host CPU (its deployment artifact is chosen among the int8 forms)."""
    return any(getattr(t, "device_class", None) == "cpu" for t in targets)


def host_forms_stage(inputs: BuildInputs, artifacts: list[Artifact], folder: Path, scratch: Path,
                     stages: StageLog) -> list[Artifact]:
    """The U8S8 QOperator ONNX (and any further host form) for a group with a CPU target; else nothing."""
    if not needs_host_forms(inputs.targets) or inputs.calibration is None:
        return []
    if not any(a.key == "model.onnx" for a in artifacts):
        stages.skip(STAGE, "no float ONNX: the ONNX Runtime int8 forms need it")
        return []
    with stages.stage(STAGE, "ONNX Runtime QOperator, uint8 activations x int8 per-channel weights"):
        return host_forms(artifacts, inputs.calibration, folder, scratch)


def host_measurement(inputs: BuildInputs, artifacts: list[Artifact], latency: dict[str, LatencyResult],
                     threads: int | None) -> HostMeasurement | None:
    """The group's measurement session plus each int8 artifact's output cosine (host-cpu groups only)."""
    if not needs_host_forms(inputs.targets) or not latency:
        return None
    cosine = form_fidelity(artifacts, inputs.calibration) if inputs.calibration is not None else {}
    return HostMeasurement(latency=latency, cosine=cosine, threads=threads)
