"""The fallback ladder: PTQ, better calibration, mixed precision, QAT — stopping at the first that holds.

:func:`run_ladder` is the driver: it walks :data:`~edgepipe.quantize.steps.LADDER_STEPS`
in order, gates each step's artifacts on the evaluation split and stops at the
first one whose largest drop is within the threshold. Every step's outcome goes
into the :class:`~edgepipe.quantize.report.QuantizationReport`, so the report
shows what was tried, why and what it cost.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgepipe.artifacts import Artifact
from edgepipe.data import Dataset
from edgepipe.evaluate import evaluate_top1, predict_logits, top1_accuracy
from edgepipe.export.tf_function import TFGraph
from edgepipe.load import SourceModel
from edgepipe.quantize.metrics import sqnr_db
from edgepipe.quantize.recipe import CalibrationMethod, Granularity, LayerPrecision, QuantRecipe
from edgepipe.quantize.report import LayerSensitivity, QuantizationReport, StepName, StepOutcome, worst_layers

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LadderSettings:
    """What the ladder may try (from ``[quantization]`` in the config, or the target profile)."""

    steps: tuple[StepName, ...] = ("ptq", "calibration", "mixed", "qat")
    granularity: Granularity = "per-channel"
    methods: tuple[CalibrationMethod, ...] = ("minmax", "percentile", "entropy")
    granularities: tuple[Granularity, ...] = ("per-channel", "per-tensor")
    precisions: tuple[LayerPrecision, ...] = ("int8", "a16w8", "float")
    mixed_budget: float = 0.25
    qat_epochs: int = 3
    qat_learning_rate: float = 1e-4
    sensitivity_samples: int = 64
    sensitivity: str = "auto"

    @property
    def start(self) -> QuantRecipe:
        """Step (a)'s recipe: minmax, asymmetric int8 activations, the configured weight granularity."""
        return QuantRecipe(per_channel=self.granularity == "per-channel")


@dataclass(frozen=True)
class Fidelity:
    """How closely a quantized artifact follows its float model on the selection split.

    ``flips_points``: share of samples whose top-1 differs from the float model's
    (percentage points; never less than the accuracy drop, so a conservative
    stand-in for it); ``sqnr_db``: SQNR of the outputs against the float outputs
    (dB); ``accuracy``: top-1 against the labels (0..1).
    """

    flips_points: float
    sqnr_db: float
    accuracy: float

    def better_than(self, other: Fidelity) -> bool:
        """Fewer top-1 flips; at equal flips, a higher output SQNR."""
        return (self.flips_points, -self.sqnr_db) < (other.flips_points, -other.sqnr_db)


@dataclass
class LadderContext:
    """Everything a step reads, and what earlier steps left for later ones."""

    model: SourceModel
    graph: TFGraph | None
    floats: dict[str, Path]
    calibration: Dataset
    selection: Dataset | None
    evaluation: Dataset
    train: Dataset | None
    threshold: float
    settings: LadderSettings
    work: Path
    float_accuracy: dict[str, float] = field(default_factory=dict)
    float_selection: dict[str, np.ndarray] = field(default_factory=dict)
    best_recipe: dict[str, QuantRecipe] = field(default_factory=dict)
    sensitivity: list[LayerSensitivity] = field(default_factory=list)
    sensitivity_recipe: str = ""

    def folder(self, name: str) -> Path:
        path = self.work / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def quantize(self, fmt: str, recipe: QuantRecipe, out: Path) -> Path:
        """One quantized artifact of format ``fmt`` following ``recipe``."""
        if fmt == "onnx":
            from edgepipe.quantize.onnx_qdq import quantize_onnx

            return quantize_onnx(self.floats["onnx"], out, self.calibration, recipe, self.work)
        from edgepipe.quantize.tflite_int8 import quantize_tflite

        assert self.graph is not None
        return quantize_tflite(self.graph, out, self.calibration, recipe)

    def fidelity(self, fmt: str, path: Path) -> Fidelity:
        """:class:`Fidelity` of the quantized ``path`` (format ``fmt``) on the selection split."""
        assert self.selection is not None and self.selection.labels is not None
        if fmt not in self.float_selection:
            self.float_selection[fmt] = predict_logits(self.floats[fmt], self.selection)
        reference, logits = self.float_selection[fmt], predict_logits(path, self.selection)
        flips = float(np.mean(reference.reshape(len(reference), -1).argmax(1) != logits.reshape(len(logits), -1)
                              .argmax(1)))
        return Fidelity(flips_points=round(100 * flips, 4), sqnr_db=sqnr_db(reference, logits),
                        accuracy=round(top1_accuracy(logits, self.selection.labels), 6))

    @property
    def formats(self) -> list[str]:
        """Formats the ladder quantizes: ONNX always, TFLite when the TensorFlow graph exists."""
        return [f for f in self.floats if f == "onnx" or self.graph is not None]


@dataclass
class StepResult:
    """A step's outcome and, when it produced any, its quantized artifacts per format."""

    outcome: StepOutcome
    artifacts: dict[str, Artifact] = field(default_factory=dict)


def gate(context: LadderContext, result: StepResult) -> StepResult:
    """Score ``result``'s artifacts on the evaluation split; status ``met`` when every drop is within threshold."""
    outcome = result.outcome
    for fmt, artifact in result.artifacts.items():
        accuracy = evaluate_top1(artifact.path, context.evaluation)
        outcome.accuracy[fmt] = round(accuracy, 6)
        outcome.drop_points[fmt] = round(100 * (context.float_accuracy[fmt] - accuracy), 4)
        outcome.size_bytes[fmt] = artifact.size_bytes
    worst = outcome.worst_drop
    outcome.status = "met" if worst is not None and worst <= context.threshold + 1e-9 else "missed"
    return result


def _final(results: list[StepResult]) -> StepResult | None:
    """The step whose artifacts are kept: the first that met the threshold, else the smallest worst drop."""
    tried = [r for r in results if r.artifacts]
    met = [r for r in tried if r.outcome.status == "met"]
    if met:
        return met[0]
    return min(tried, key=lambda r: r.outcome.worst_drop or 0.0, default=None)


def _still_sensitive(sensitivity: list[LayerSensitivity], count: int = 5) -> list[str]:
    return [f"{row.format}:{row.layer}" for row in worst_layers(sensitivity, count)]


def run_ladder(context: LadderContext) -> tuple[list[Artifact], QuantizationReport]:
    """Walk the ladder; returns the kept quantized artifacts and the decision trail."""
    from edgepipe.quantize.steps import LADDER_STEPS

    context.float_accuracy = {f: evaluate_top1(p, context.evaluation) for f, p in context.floats.items()
                              if f in context.formats}
    results: list[StepResult] = []
    for name, step in LADDER_STEPS:
        if name not in context.settings.steps:
            continue
        start = time.perf_counter()
        result = step(context)
        if result.artifacts:
            result = gate(context, result)
        result.outcome.seconds = round(time.perf_counter() - start, 3)
        log.info("ladder step %s: %s (%s)", name, result.outcome.status, result.outcome.worst_drop)
        results.append(result)
        if result.outcome.status == "met":
            break
    final = _final(results)
    met = final is not None and final.outcome.status == "met"
    if not context.sensitivity and (not met or context.settings.sensitivity == "always"):
        from edgepipe.quantize.sensitivity import measure_sensitivity

        measure_sensitivity(context)
    report = QuantizationReport(
        threshold_points=context.threshold, met=met, final_step=final.outcome.step if final else None,
        allowed_precisions=list(context.settings.precisions), steps=[r.outcome for r in results],
        sensitivity_recipe=context.sensitivity_recipe, sensitivity=context.sensitivity,
        still_sensitive=[] if met else _still_sensitive(context.sensitivity))
    return (list(final.artifacts.values()) if final else []), report
