"""The quantization section of ``report.json``: the ladder's decision trail and per-layer sensitivity."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: A ladder step's name (the registry in :mod:`edgepipe.quantize.steps` lists them: ptq, calibration, mixed, qat…).
StepName = str


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LayerSensitivity(_Record):
    """How much one quantized layer hurts, in one format.

    ``accumulated_*``: the layer's output tensor in the fully quantized model
    against the float model (errors of all layers before it included).
    ``isolated_*``: only this layer quantized (ONNX: the model's output with just
    this node quantized; TFLite: the layer's output against the float op on the
    same inputs, from ``QuantizationDebugger``). SQNR in dB (higher is better);
    cosine similarity in [-1, 1] (1 is identical).
    """

    format: Literal["onnx", "tflite"]
    layer: str = Field(description="ONNX node name, or TFLite output tensor name.")
    op: str
    accumulated_sqnr_db: float | None = None
    accumulated_cosine: float | None = None
    isolated_sqnr_db: float | None = None
    isolated_cosine: float | None = None
    added_noise_db: float | None = Field(
        None, description="Quantization noise this layer adds in the fully quantized model: its output's relative "
                          "noise minus its input's, in dB of the output's signal power (higher: adds more).")


class KeptLayer(_Record):
    """A layer mixed precision kept above int8."""

    layer: str
    precision: Literal["a16w8", "float"]


class CandidateScore(_Record):
    """One PTQ setting tried in step (b), scored on the selection split.

    Labelled: fewest top-1 flips, then highest SQNR wins; label-free: fewest missed
    thresholds, then highest lowest-cosine, then highest SQNR.
    """

    format: Literal["onnx", "tflite"]
    recipe: str
    selection_accuracy: float | None = Field(None, description="Top-1 on the selection split (0..1), if labelled.")
    flips_points: float | None = Field(
        None, description="Selection samples whose top-1 differs from the float model's (points), if labelled.")
    sqnr_db: float = Field(description="Lowest SQNR of the outputs against the float outputs (dB).")
    min_cosine: float | None = Field(None, description="Lowest cosine of the outputs against the float outputs.")


class SelectionScore(_Record):
    """A step's artifact of one format scored on the selection split: what the ladder's stopping rule reads."""

    min_cosine: float = Field(description="Lowest cosine over the outputs, against the float model.")
    min_sqnr_db: float = Field(description="Lowest SQNR over the outputs, against the float model (dB).")
    accuracy: float | None = Field(None, description="Top-1 (0..1) when the selection split has labels.")
    drop_points: float | None = Field(None, description="Float minus quantized top-1 on the selection split.")
    flips_points: float | None = Field(
        None, description="Selection samples whose top-1 differs from the float model's (points): the labelled rule.")
    failures: list[str] = Field(default_factory=list, description="Label-free thresholds missed.")
    met: bool


class StepOutcome(_Record):
    """One rung of the ladder: why it ran, what it tried, its score on the selection split (which decides).

    ``accuracy`` / ``drop_points`` are on the evaluation split when it has labels: a record
    of each step, never read by the ladder's decisions.
    """

    step: StepName
    title: str
    status: Literal["met", "missed", "skipped"]
    why: str = Field("", description="Why the step ran: what the step before it missed.")
    note: str = Field("", description="Why it was skipped, or what it chose.")
    selection: dict[str, SelectionScore] = Field(default_factory=dict,
                                                 description="Score per format on the selection split.")
    recipe: dict[str, str] = Field(default_factory=dict, description="Setting used, per format.")
    accuracy: dict[str, float] = Field(default_factory=dict, description="Top-1 per format (0..1), evaluation split.")
    drop_points: dict[str, float] = Field(default_factory=dict, description="Float minus quantized, points.")
    size_bytes: dict[str, int] = Field(default_factory=dict, description="Artifact size per format (bytes).")
    kept_layers: dict[str, list[KeptLayer]] = Field(default_factory=dict,
                                                    description="Layers above int8, per format.")
    cost: str = Field("", description="What the higher precision costs on the target (CPU fallback, int16).")
    candidates: list[CandidateScore] = Field(default_factory=list)
    vendor_compile: list[str] = Field(
        default_factory=list, description="Vendor compilers run on this step's mixed-precision artifacts before "
                                          "keeping them (targets without CPU fallback): target, tool, result.")
    seconds: float = Field(0.0, description="Wall time of the step (s).")

    @property
    def worst_drop(self) -> float | None:
        return max(self.drop_points.values()) if self.drop_points else None


class QuantizationReport(_Record):
    """The fallback ladder's decision trail, and the sensitivity of every quantized layer."""

    threshold_points: float
    metric: Literal["top1", "label_free"] = Field("top1", description="What decided: top-1 drop or fidelity.")
    decided_on: str = Field("", description="The split, sample count and measure every decision read.")
    preparation: list[str] = Field(default_factory=list,
                                   description="What was done to the float model so it quantizes, and why.")
    met: bool = Field(description="True when some step met the threshold on the selection split.")
    final_step: StepName | None = Field(description="The step whose artifacts were kept.")
    allowed_precisions: list[str]
    steps: list[StepOutcome]
    sensitivity_recipe: str = Field("", description="PTQ setting the sensitivity was measured on.")
    sensitivity: list[LayerSensitivity] = Field(default_factory=list)
    still_sensitive: list[str] = Field(default_factory=list,
                                       description="When no step met the threshold: the most sensitive layers.")
    time_budget_s: float | None = Field(None, description="Wall-clock seconds the ladder was allowed "
                                                          "(quantization.time_budget_s).")
    seconds: float | None = Field(None, description="Wall-clock seconds the ladder took (s).")
    unfinished: list[str] = Field(default_factory=list,
                                  description="What the time budget left undone (steps not run, searches cut "
                                              "short), and why; the kept result is the best of what ran.")

    def worst_layers(self, count: int = 10) -> list[LayerSensitivity]:
        """The ``count`` most sensitive layers of all formats (see :func:`worst_layers`)."""
        return worst_layers(self.sensitivity, count)


def worst_layers(rows: list[LayerSensitivity], count: int = 10) -> list[LayerSensitivity]:
    """The ``count`` rows with the lowest isolated (else accumulated) SQNR."""
    def key(row: LayerSensitivity) -> float:
        value = row.isolated_sqnr_db if row.isolated_sqnr_db is not None else row.accumulated_sqnr_db
        return float("inf") if value is None else value

    return sorted(rows, key=key)[:count]
