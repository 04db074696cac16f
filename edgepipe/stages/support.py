"""The per-target build stage: check the artifact deployed to the target and return the report section."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.quantize.host.forms import QDQ_U8_NAME
from edgepipe.stages.context import TargetContext
from edgepipe.support.check import check_model
from edgepipe.support.report import SupportReport
from edgepipe.targets.profile import TargetProfile
from edgepipe.vendors.verification import vendor_verification

log = logging.getLogger(__name__)


def deployed_artifact(profile: TargetProfile, artifacts: tuple[Artifact, ...]) -> Artifact | None:
    """The artifact this target runs: its checked format and precision, else any artifact of that format.

    An int8 target runs the quantized file whether it is plain int8 or mixed precision (some layers kept in
    int16 activations or float by the ladder): checking the float twin instead would place float ops. A target
    deploying unsigned activations runs the uint8 form (:data:`QDQ_U8_NAME`) where the build made one.
    """
    wanted = profile.artifact
    same_format = [a for a in artifacts if a.format == wanted.format]
    precisions = ("int8", "mixed") if wanted.precision == "int8" else (wanted.precision,)

    def rank(artifact: Artifact) -> tuple[bool, int]:
        unsigned_first = wanted.unsigned_activations and artifact.key == QDQ_U8_NAME
        return not unsigned_first, precisions.index(artifact.precision)

    exact = sorted((a for a in same_format if a.precision in precisions), key=rank)
    return next(iter(exact or same_format), None)


def support_stage(context: TargetContext) -> tuple[str, SupportReport | None]:
    """``support``: per-node accelerator/CPU placement of the deployed artifact (None if there is none)."""
    artifact = deployed_artifact(context.target, context.artifacts)
    if artifact is None or context.target.op_table(artifact.format) is None:
        log.warning("support check skipped for %s: no %s artifact was built", context.target.name,
                    context.target.artifact.format)
        return "support", None
    report = check_model(artifact.path, context.target)
    with tempfile.TemporaryDirectory(prefix="edgepipe-vendor-") as work:
        vendor = vendor_verification(report, context.target, artifact.path, Path(work))
    report.verification.extend([vendor] if vendor is not None else [])  # C1: the vendor compile reaches the verdict
    return "support", report.model_copy(update={"artifact": artifact.key})
