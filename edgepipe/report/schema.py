"""The ``report.json`` schema. Bump ``SCHEMA_VERSION`` on any change a reader would notice."""

from __future__ import annotations

import builtins
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edgepipe.figures import MEASURED, FigureKind
from edgepipe.legalize.report import LegalizationReport
from edgepipe.perf.report import PerformanceReport
from edgepipe.quantize.report import QuantizationReport
from edgepipe.report.accuracy_stats import DropInterval
from edgepipe.report.custom_ops import CustomOpsReport
from edgepipe.report.label_free import LabelFreeInfo
from edgepipe.report.pytorch import TorchComparisonInfo
from edgepipe.report.verdict import Evidence, ToolFailure, Verdict
from edgepipe.support.report import SupportReport

SCHEMA_VERSION = "1.3"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelInfo(_Record):
    path: str
    format: Literal["keras", "savedmodel", "onnx", "tflite", "pytorch"]
    sha256: str


class ArtifactInfo(_Record):
    path: str = Field(description="File name inside the target's output folder.")
    format: Literal["onnx", "tflite"]
    precision: Literal["fp32", "int8", "mixed"]
    size_bytes: int
    route: str | None = Field(None, description="For a float model converted from the source's other format: the "
                                                "route that made it, e.g. 'onnx2tf' or \"tf2onnx's TFLite front end "
                                                "(sparse weights densified)\".")


class AccuracyInfo(_Record):
    metric: str = Field(description="'top1': share of evaluation samples classified right (0..1).")
    samples: int = Field(description="Evaluation samples used.")
    threshold_points: builtins.float = Field(description="Largest allowed drop, percentage points.")
    float: builtins.float | None = Field(description="Accuracy of the float model (0..1).")
    float_by_format: dict[str, builtins.float] = Field(description="Float accuracy per format (0..1).")
    int8: dict[str, builtins.float] = Field(description="Int8 accuracy per format (0..1).")
    drop_points: dict[str, builtins.float] = Field(
        description="Float minus int8 accuracy per format, percentage points.")
    label_free: LabelFreeInfo | None = Field(
        None, description="Int8/converted outputs compared with float outputs, no labels needed (edgepipe.metrics).")
    drop_interval: dict[str, DropInterval] = Field(
        default_factory=dict, description="95% confidence interval of each format's drop, paired over the samples.")
    resolution_warnings: list[str] = Field(
        default_factory=list, description="Why the evaluation set cannot resolve the threshold, if it cannot.")
    kind: FigureKind = Field(MEASURED, description="Accuracies are scored here with the real runtimes.")
    min_top1: builtins.float | None = Field(None, description="Smallest allowed int8 top-1 (0..1) when there is no "
                                             "float model to measure a drop against (accuracy.min_top1).")
    arithmetic: Literal["exact integer", "host runtime"] = Field(
        "exact integer", description="What the int8 figures were computed on: exact integer semantics (what NPUs "
                                     "and GPUs compute), or this machine's ONNX Runtime with its default options "
                                     "(what host-cpu deploys; the CPU class is in performance.host_cpu).")


class LatencyDetail(_Record):
    runtime: str
    median_ms: float
    min_ms: float
    runs: int
    init_ms: float
    ci_low_ms: float | None = Field(None, description="Lower bound of the 95% confidence interval of the median (ms).")
    ci_high_ms: float | None = Field(None, description="Upper bound of the 95% confidence interval of the median (ms).")
    kind: FigureKind = Field(MEASURED, description="Timed on this host with the real runtime.")
    threads: int | None = Field(None, description="Intra-op threads of the measurement session (None: default).")


class StageInfo(_Record):
    name: str
    status: Literal["ran", "skipped", "failed"]
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
    verdict: Verdict
    verdict_reason: str
    quantization: QuantizationReport | None = Field(
        None, description="The quantization ladder's decision trail and per-layer sensitivity.")
    legalization: LegalizationReport | None = Field(
        None, description="Rewrites of ops the target runs on its CPU into forms its accelerator runs, with the "
                          "float model's placement before and after (targets that check an ONNX artifact).")
    support: SupportReport | None = Field(
        None, description="Per-node accelerator/CPU placement of the artifact deployed to the target.")
    performance: PerformanceReport | None = Field(
        None, description="Latency per power mode, energy per inference (mJ) and the estimate's known error.")
    custom_ops: CustomOpsReport | None = Field(
        None, description="Custom or unknown ops of the model and whether this target's accelerator lists them.")
    evidence: list[Evidence] = Field(
        default_factory=list, description="What the verdict rests on: int8 artifact, accuracy, compatibility, compile.")
    failures: list[ToolFailure] = Field(
        default_factory=list, description="Third-party tools that failed; the build went on without their output.")
    pytorch: TorchComparisonInfo | None = Field(
        None, description="PyTorch inputs: each artifact's outputs compared with the PyTorch program's own.")
