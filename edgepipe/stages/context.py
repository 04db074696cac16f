"""What a per-target stage reads: :class:`TargetContext`, below every stage so no stage imports the registry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgepipe.artifacts import Artifact
from edgepipe.quantize.host.forms import HostMeasurement
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs
from edgepipe.targets import TargetProfile


@dataclass(frozen=True)
class TargetContext:
    """What a per-target stage may read: the validated inputs, the target, the artifacts and its output folder."""

    inputs: BuildInputs
    target: TargetProfile
    artifacts: tuple[Artifact, ...]
    folder: Path
    stages: StageLog
    measured: HostMeasurement | None = None  # the build's one host measurement session (latency, int8 fidelity)


#: A per-target stage: ``context -> (report field name, section)``.
TargetStage = Callable[[TargetContext], tuple[str, Any]]
