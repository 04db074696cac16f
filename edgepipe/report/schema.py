"""The ``report.json`` schema. Bump ``SCHEMA_VERSION`` on any change a reader would notice."""

from __future__ import annotations

import builtins
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1.0"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelInfo(_Record):
    path: str
    format: Literal["keras", "savedmodel", "onnx", "tflite"]
    sha256: str


class ArtifactInfo(_Record):
    path: str = Field(description="File name inside the target's output folder.")
    format: Literal["onnx", "tflite"]
    precision: Literal["fp32", "int8", "mixed"]
    size_bytes: int


class AccuracyInfo(_Record):
    metric: str = Field(description="'top1': share of evaluation samples classified right (0..1).")
    samples: int = Field(description="Evaluation samples used.")
    threshold_points: builtins.float = Field(description="Largest allowed drop, percentage points.")
    float: builtins.float | None = Field(description="Accuracy of the float model (0..1).")
    float_by_format: dict[str, builtins.float] = Field(description="Float accuracy per format (0..1).")
    int8: dict[str, builtins.float] = Field(description="Int8 accuracy per format (0..1).")
    drop_points: dict[str, builtins.float] = Field(
        description="Float minus int8 accuracy per format, percentage points.")


class LatencyDetail(_Record):
    runtime: str
    median_ms: float
    min_ms: float
    runs: int
    init_ms: float


class StageInfo(_Record):
    name: str
    status: Literal["ran", "skipped"]
    seconds: float
    detail: str = ""


class BuildReport(_Record):
    """Everything one build found out about one model on one target."""

    schema_version: str = SCHEMA_VERSION
    edgepipe_version: str
    target: str
    model: ModelInfo
    artifacts: list[ArtifactInfo]
    accuracy: AccuracyInfo | None
    latency_ms: dict[str, float] = Field(description="Median single-stream host latency per artifact (ms).")
    latency: dict[str, LatencyDetail]
    stages: list[StageInfo]
    tool_versions: dict[str, str]
    verdict: Literal["pass", "fail"]
    verdict_reason: str
