"""Typed records of a label-free comparison (``accuracy.label_free`` in ``report.json``): per artifact, per output."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PartInfo(_Record):
    part: str = Field(description="Which channels, e.g. 'channels 4–83'.")
    axis: int = Field(description="The feature axis the channels are counted along (0 is the sample axis).")
    channels: int = Field(description="How many channels the part has.")
    sqnr_db: float = Field(description="SQNR of the part alone, dB.")
    cosine: float = Field(description="Cosine similarity of the part alone.")


class TaskInfo(_Record):
    kind: str = Field(description="The task: classification, detection-yolo, text-detection, ctc, segmentation, ...")
    outputs: list[str] = Field(description="The outputs it reads.")
    metric: str = Field(description="What the score is, e.g. 'detection F1 vs float'.")
    value: float = Field(description="The score (0..1, higher is better).")
    min_score: float = Field(description="The smallest score that passes.")
    detail: str = Field(description="What was compared, in one line.")
    chosen: str = Field(description="Why this task: 'configured', or the guess's reason.")
    extra: dict[str, float] = Field(default_factory=dict, description="Other figures (precision, recall, mAP@0.5).")


class OutputAgreementInfo(_Record):
    output: str = Field(description="Output name in the reference model.")
    cosine: float = Field(description="Cosine similarity over all samples (1 = identical direction).")
    sqnr_db: float = Field(description="Signal-to-quantization-noise ratio, dB (capped at 200).")
    max_abs_error: float = Field(description="Largest absolute difference, in the output's unit.")
    top1_agreement: float | None = Field(None, description="Share of samples with the same top-1 class (0..1).")
    top5_agreement: float | None = Field(
        None, description="Share of samples whose reference top-1 is in the candidate's top 5 (0..1).")
    kind: Literal["class-scores", "regression"] = Field(
        "regression", description="Class scores get top-1/top-5 agreement; regression outputs cosine/SQNR/error only.")
    parts: list[PartInfo] = Field(default_factory=list, description="Parts of very different ranges, judged apart "
                                  "(empty: the output is judged whole).")
    worst_channel: PartInfo | None = Field(None, description="The channel of significant range with the lowest SQNR.")


class ComparisonInfo(_Record):
    artifact: str = Field(description="The compared artifact (int8, or a float conversion).")
    reference: str = Field(description="The float artifact it is compared with.")
    outputs: list[OutputAgreementInfo]
    unmatched_outputs: list[str] = Field(default_factory=list,
                                         description="Reference outputs with no counterpart of the same size.")
    tasks: list[TaskInfo] = Field(default_factory=list, description="Task-level checks against the float model.")
    arithmetic: Literal["exact integer", "host runtime"] = Field(
        "exact integer", description="How the int8 artifact was run: exact integer semantics (what NPUs compute), or "
                                     "the build machine's runtime with its default options (what host-cpu deploys).")
    failures: list[str] = Field(default_factory=list, description="Thresholds missed, one line each.")


class LabelFreeInfo(_Record):
    samples: int = Field(description="Inputs both models ran on.")
    data: Literal["evaluation", "calibration"] = Field(description="Which split the inputs came from.")
    gated: bool = Field(description="True when the verdict uses these thresholds (no labels to gate top-1 on).")
    thresholds: dict[str, float | None] = Field(description="min_cosine, min_sqnr_db, min_top1_agreement, "
                                                            "max_abs_error (None: not gated).")
    comparisons: list[ComparisonInfo]

    @property
    def failures(self) -> list[str]:
        return [f"{c.artifact}: {f}" for c in self.comparisons for f in c.failures]
