"""Stage (groups with a target deploying unsigned activations): the build's int8 ONNX with uint8 activations.

ONNX Runtime's QNN EP runs the QDQ node units of some ops (HardSigmoid, LeakyRelu, Neg,
CumSum) on the HTP only with unsigned activations; with int8 ones the unit and the
DequantizeLinear and QuantizeLinear around it go to the CPU, splitting the graph. The
uint8 form is the ladder's result with every activation zero point shifted by 128: the
same integers, so the same accuracy on exact integer semantics, made without a second
calibration (:func:`~edgepipe.quantize.host.qdq_uint8.uint8_activations`).
"""

from __future__ import annotations

from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.quantize.host.forms import QDQ_U8_NAME, build_qdq
from edgepipe.quantize.host.qdq_uint8 import uint8_activations
from edgepipe.stage_log import StageLog
from edgepipe.targets.profile import TargetProfile

STAGE = "unsigned-form"


def needs_unsigned_form(targets: tuple[TargetProfile, ...]) -> bool:
    """True when a target of the group deploys its int8 ONNX with unsigned activations."""
    return any(t.artifact.unsigned_activations for t in targets)


def unsigned_form_stage(targets: tuple[TargetProfile, ...], artifacts: list[Artifact], host_forms: list[Artifact],
                        folder: Path, stages: StageLog) -> list[Artifact]:
    """The build's QDQ int8 ONNX with uint8 activations, written into ``folder``, when a target of the group
    deploys unsigned activations (host-cpu's form of the same name when the group made it); empty otherwise, or
    when the model cannot be shifted (the stages table says why and the int8 ONNX stays the deployed file)."""
    if not needs_unsigned_form(targets):
        return []
    made = [f for f in host_forms if f.key == QDQ_U8_NAME]
    if made:
        return made
    qdq = build_qdq(artifacts)
    if qdq is None:
        return []
    with stages.stage(STAGE, f"{qdq.key} with uint8 activations (zero points shifted by 128: the same integers)"):
        shifted = uint8_activations(qdq.path, folder / QDQ_U8_NAME)
    if shifted is None:
        stages.skip(f"{STAGE}:{QDQ_U8_NAME}", f"{qdq.key} has a zero point shared by a weight and an activation or "
                                              f"integers no QuantizeLinear wrote; {qdq.key} is deployed as it is")
        return []
    return [Artifact(shifted, "onnx", qdq.precision)]


def target_artifacts(target: TargetProfile, artifacts: list[Artifact], host_forms: list[Artifact],
                     unsigned: list[Artifact]) -> list[Artifact]:
    """What ``target``'s folder holds: the group's artifacts, with host-cpu's extra int8 forms on a CPU target and
    the uint8-activation form on a target that deploys it."""
    if target.device_class == "cpu":
        return artifacts + host_forms
    if target.artifact.unsigned_activations:
        return artifacts + unsigned
    return artifacts
