"""The files a build produces, as typed records."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ArtifactFormat = Literal["onnx", "tflite"]
Precision = Literal["fp32", "int8", "mixed"]


@dataclass(frozen=True)
class Artifact:
    """One deployable model file: where it is, its format and numeric precision; for a float model converted from
    the source's other format, the route that made it (the converter and the fixes it needed)."""

    path: Path
    format: ArtifactFormat
    precision: Precision
    route: str = ""

    @property
    def key(self) -> str:
        """Stable name in reports: the file name, e.g. ``model_int8.tflite``."""
        return self.path.name

    @property
    def size_bytes(self) -> int:
        return self.path.stat().st_size


@dataclass(frozen=True)
class SkippedStage:
    """A stage that did not apply to this input, and why (shown in the report)."""

    stage: str
    reason: str
