"""What the fallback ladder's steps share: its settings, the context they read, how a candidate is scored.

Kept apart from the driver (:mod:`edgepipe.quantize.ladder`) and the steps
(:mod:`edgepipe.quantize.steps`) so that both import this module and neither imports the other.

Every choice the ladder makes — which calibration, which layers to keep higher, when to
stop — reads only the **selection split** (``data.selection``; without one, the
calibration split, which the trail then says). With labels there, the decision is the
top-1 drop against the float model; without labels it is label-free fidelity: every
output's cosine / SQNR / max error against the float model's (the thresholds of
``[accuracy]``, with half the error they allow: :attr:`LadderContext.decision_thresholds`).
The evaluation split never takes part: it judges the kept result only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from edgepipe.artifacts import Artifact
from edgepipe.config import TaskConfig
from edgepipe.data.dataset import Dataset
from edgepipe.export.tf_function import TFGraph
from edgepipe.load import SourceModel
from edgepipe.metrics.accuracy import top1_accuracy
from edgepipe.metrics.compare import ModelOutputs, run_outputs, unmatched_failure
from edgepipe.metrics.label_free import Thresholds
from edgepipe.metrics.task_plan import TaskPlan, plan_tasks, task_failure
from edgepipe.quantize.quantized_once import QuantizationMemo, data_key
from edgepipe.quantize.recipe import CalibrationMethod, Granularity, LayerPrecision, QuantRecipe
from edgepipe.quantize.report import LayerSensitivity, SelectionScore, StepOutcome
from edgepipe.quantize.vendor_check import CandidateCompile

SUFFIX = {"onnx": ".onnx", "tflite": ".tflite"}
#: Intra-op threads of every run the ladder decides on (candidates, float references, per-node tries). The ladder
#: opens a session per candidate and runs it on a few samples: a runtime's thread pool costs more to start and
#: spin than it saves there (a small classifier's try: 76 ms of CPU with ONNX Runtime's default pool on a 2-core
#: host, 32 ms with one thread), and the outputs are the same bit for bit (checked on the zoo's ONNX and TFLite
#: models, float and int8).
DECISION_THREADS = 1

#: How candidates compare (smaller is better): see :func:`selection_rank`.
Rank = tuple[int, int, float, float]


def selection_rank(scores: Iterable[SelectionScore]) -> Rank:
    """How good a candidate is on the selection split, over its formats (smaller is better): formats that miss
    the stopping rule, then label-free thresholds missed, then the lowest cosine, then the lowest SQNR.

    The one ranking of the ladder: between the settings of a step, the tries of mixed precision and the steps
    themselves (the best attempt when none holds). Top-1 counts only decide whether a candidate holds: on a
    split of a few hundred samples they move by whole samples (0.5 points each on 197), so between candidates
    that all hold or all miss they rank by chance, while the outputs' cosine and SQNR over the same samples are
    continuous and stable from one split to another.
    """
    scores = list(scores)
    return (sum(not s.met for s in scores), sum(len(s.failures) for s in scores),
            -min((s.min_cosine for s in scores), default=-1.0), -min((s.min_sqnr_db for s in scores), default=-200.0))


@dataclass(frozen=True)
class LadderSettings:
    """What the ladder may try (from ``[quantization]`` in the config, or the target profile)."""

    steps: tuple[str, ...] = ("ptq", "calibration", "equalize", "nncf", "mixed", "qat")
    granularity: Granularity = "per-channel"
    methods: tuple[CalibrationMethod, ...] = ("minmax", "percentile", "entropy")
    granularities: tuple[Granularity, ...] = ("per-channel", "per-tensor")
    precisions: tuple[LayerPrecision, ...] = ("int8", "a16w8", "float")
    mixed_budget: float = 0.25
    qat_epochs: int = 3
    qat_learning_rate: float = 1e-4
    qat_budget_s: float = 900.0
    sensitivity_samples: int = 64
    #: Per-layer sensitivity: "auto" only when the ladder misses its threshold, "always" on request.
    sensitivity: str = "auto"
    #: Selection samples each candidate is scored on at most when label-free (it keeps every output);
    #: a labelled selection split is always used whole.
    selection_samples: int = 64
    #: Wall-clock seconds the ladder may take (checked between steps and between the tries inside a step).
    time_budget_s: float = 600.0
    #: The vendor compilers that must take a mixed-precision result before it is kept (one label per target that
    #: accepts no CPU fallback and has its compiler installed: :mod:`edgepipe.quantize.vendor_check`).
    compile_with: tuple[str, ...] = ()

    @property
    def start(self) -> QuantRecipe:
        """Step (a)'s recipe: minmax, asymmetric int8 activations, the configured weight granularity."""
        return QuantRecipe(per_channel=self.granularity == "per-channel")


@dataclass(frozen=True)
class Fidelity:
    """How closely a quantized artifact follows its float model on the selection split.

    ``cosine`` / ``sqnr_db``: the lowest over the model's outputs (dB for SQNR);
    ``failures``: the label-free thresholds missed, one line each. With labels:
    ``accuracy`` (top-1, 0..1) and ``flips_points``, the share of samples whose top-1
    differs from the float model's (percentage points; never less than the drop).
    """

    cosine: float
    sqnr_db: float
    failures: tuple[str, ...] = ()
    accuracy: float | None = None
    flips_points: float | None = None


@dataclass
class LadderContext:
    """Everything a step reads, and what earlier steps left for later ones.

    ``floats``: the float model per format that steps quantize; a step may :meth:`rebase` it on a rewrite with the
    same function (equalized weights), while fidelity is always measured against the original's outputs.
    ``evaluation`` is only for the driver's record of the kept result; steps never read it.
    ``thresholds``: the label-free gate, used when the selection split has no labels.
    """

    model: SourceModel
    graph: TFGraph | None
    floats: dict[str, Path]
    calibration: Dataset
    selection: Dataset | None
    evaluation: Dataset | None
    train: Dataset | None
    threshold: float
    settings: LadderSettings
    work: Path
    thresholds: Thresholds = field(default_factory=Thresholds)
    preparation: list[str] = field(default_factory=list)
    float_accuracy: dict[str, float] = field(default_factory=dict)
    float_selection: dict[str, ModelOutputs] = field(default_factory=dict)
    #: Per format, the digest of the float file :attr:`float_selection` ran (what every fidelity is measured against).
    reference_digest: dict[str, str] = field(default_factory=dict)
    best_recipe: dict[str, QuantRecipe] = field(default_factory=dict)
    sensitivity: list[LayerSensitivity] = field(default_factory=list)
    sensitivity_recipe: str = ""
    memo: QuantizationMemo = field(default_factory=QuantizationMemo)
    #: The task-level check (``[accuracy.task]``), planned from the float outputs of the decision split.
    task: TaskConfig = field(default_factory=TaskConfig)
    #: The group has a CPU target: ONNX candidates are judged on this host's int8 kernels too.
    host_kernels: bool = False
    task_plans: dict[tuple[object, ...], list[TaskPlan]] = field(default_factory=dict)
    #: Seconds from an arbitrary origin (tests inject their own); the ladder's time budget reads it.
    clock: Callable[[], float] = time.monotonic
    started: float | None = None
    #: What the time budget left undone: a step not run, a search cut short; one line each, for the report.
    unfinished: list[str] = field(default_factory=list)
    #: Per format, the first step whose all-int8 artifact held on the selection split, and that artifact: a later
    #: step (mixed precision) keeps it rather than raise layers of a format that already holds.
    held: dict[str, tuple[str, Artifact]] = field(default_factory=dict)
    #: Compiles a mixed-precision candidate with the vendor compilers of ``settings.compile_with``.
    vendor_check: Callable[[Artifact, Artifact | None], list[CandidateCompile]] | None = None

    def start_clock(self) -> None:
        self.started = self.clock()

    @property
    def seconds_used(self) -> float:
        """Seconds since :meth:`start_clock` (0 before it)."""
        return 0.0 if self.started is None else self.clock() - self.started

    def out_of_time(self, what: str | None = None) -> bool:
        """True when the ladder's time budget (``quantization.time_budget_s``) is spent; then ``what`` (a step, a
        search) is recorded in :attr:`unfinished` as not done for that reason."""
        spent = self.started is not None and self.seconds_used >= self.settings.time_budget_s
        if spent and what is not None:
            self.unfinished.append(f"{what}: the time budget of {self.settings.time_budget_s:g} s "
                                   f"(quantization.time_budget_s) was spent after {self.seconds_used:.0f} s")
        return spent

    @property
    def decision_thresholds(self) -> Thresholds:
        """What a label-free choice must reach on the decision split: :meth:`Thresholds.with_margin` of the gate.
        Choosing the fewest float layers that just hold on a small split is optimistic (a text detector:
        cosine 0.9904 on calibration, 0.98998 on evaluation against a 0.99 gate)."""
        return self.thresholds.with_margin()

    def folder(self, name: str) -> Path:
        path = self.work / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def decision_split(self) -> Dataset:
        """The split every choice is made on: the selection split, else the calibration split."""
        return self.selection if self.selection is not None else self.calibration

    @property
    def labelled(self) -> bool:
        """True when choices are top-1 drops (the selection split has labels), else label-free fidelity."""
        return self.decision_split.labels is not None

    def describe_decisions(self) -> str:
        """One line for the report: which split, how many samples, which measure."""
        split = self.decision_split
        name = "selection" if self.selection is not None else "calibration (no data.selection given)"
        count = len(split) if split.labels is not None else min(len(split), self.settings.selection_samples)
        measure = (f"top-1 changes against the float model <= {self.threshold:g} points" if self.labelled else
                   "label-free fidelity of every output (" + self.decision_thresholds.describe()
                   + ": the gate's " + self.thresholds.describe() + " with half the error it allows, so that a "
                   "choice made on this split still holds on the evaluation split)")
        return f"{name} split, {count} samples of {split.path.name}: {measure}"

    def quantize(self, fmt: str, recipe: QuantRecipe, out: Path, source: Path | None = None) -> Path:
        """One quantized artifact of format ``fmt`` following ``recipe``; ONNX from ``source`` (a rewrite of the
        float ONNX with the same function) when given, else from the float model."""
        if fmt == "onnx":
            from edgepipe.quantize.onnx_qdq import quantize_onnx

            return quantize_onnx(source or self.floats["onnx"], out, self.calibration, recipe, self.work,
                                 memo=self.memo)
        from edgepipe.quantize.tflite_int8 import quantize_tflite

        assert self.graph is not None
        return quantize_tflite(self.graph, out, self.calibration, recipe, memo=self.memo)

    def _subset(self) -> Dataset:
        """The decision split; label-free, at most ``selection_samples`` of it (top-1 needs every labelled sample)."""
        split = self.decision_split
        limit = self.settings.selection_samples
        if split.labels is not None or len(split) <= limit:
            return split
        labels = None if split.labels is None else split.labels[:limit]
        return Dataset(split.path, tuple(a[:limit] for a in split.inputs), labels, split.sha256, split.whole)

    def decision_tasks(self, reference: ModelOutputs) -> list[TaskPlan]:
        """The task checks of the float ``reference`` outputs, each with half the score loss the gate allows
        (like :attr:`decision_thresholds`)."""
        key = (tuple(reference.names), tuple(a.shape for a in reference.arrays))
        if key not in self.task_plans:
            self.task_plans[key] = [replace(plan, min_score=1 - (1 - plan.min_score) / 2)
                                    for plan in plan_tasks(reference.names, reference.arrays, self.task)]
        return self.task_plans[key]

    def label_free(self, reference: ModelOutputs, got: ModelOutputs) -> Fidelity:
        """Label-free :class:`Fidelity` of ``got`` against the float ``reference`` (same samples): every output
        whole and part by part, and the task checks."""
        agreements, unmatched = reference.agreements(got)
        tasks = reference.task_scores(got, self.decision_tasks(reference))
        failures = tuple([f for a in agreements for f in self.decision_thresholds.failures(a)]
                         + [unmatched_failure(n) for n in unmatched]
                         + [line for task in tasks if (line := task_failure(task)) is not None])
        if unmatched or not agreements:
            return Fidelity(cosine=-1.0, sqnr_db=-200.0, failures=failures)
        return Fidelity(cosine=min(a.cosine for a in agreements), sqnr_db=min(a.sqnr_db for a in agreements),
                        failures=failures)

    def candidate_fidelity(self, fmt: str, path: Path) -> Fidelity:
        """:meth:`fidelity` of a candidate the ladder made; one ONNX Runtime refuses to load scores worst, with
        ONNX Runtime's message as its failure. Its optimiser can fail on a valid mixed graph (a sentence encoder with
        one LayerNorm left int8: "Attempt to replace the existing tensor" in an extended fusion), and a candidate
        that does not load is simply not chosen."""
        if fmt != "onnx":
            return self.fidelity(fmt, path)
        from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidGraph, NotImplemented

        try:
            return self.fidelity(fmt, path)
        except (Fail, InvalidArgument, InvalidGraph, NotImplemented) as exc:
            message = str(exc).strip().splitlines()[0][-160:] if str(exc).strip() else type(exc).__name__
            return Fidelity(cosine=-1.0, sqnr_db=-200.0, failures=(f"ONNX Runtime cannot run it: {message}",))

    def rebase(self, fmt: str, path: Path) -> None:
        """Later steps quantize ``path``, a rewrite of the float ``fmt`` model with the same function (equalized
        weights), instead of it. Every fidelity stays measured against the original float model's outputs."""
        self.float_outputs(fmt)
        self.floats[fmt] = path

    def float_outputs(self, fmt: str) -> ModelOutputs:
        """The float ``fmt`` model's outputs on the decision split (run once per build and float file)."""
        if fmt not in self.float_selection:
            source, subset = self.floats[fmt], self._subset()
            self.reference_digest[fmt] = self.memo.digest(source)
            self.float_selection[fmt] = self.memo.recall(
                ("float outputs", self.reference_digest[fmt], data_key(subset)),
                lambda: run_outputs(source, subset, threads=DECISION_THREADS))
        return self.float_selection[fmt]

    def fidelity(self, fmt: str, path: Path) -> Fidelity:
        """:class:`Fidelity` of the quantized ``path`` (format ``fmt``) on the decision split; an ONNX candidate of
        a group with a CPU target is scored on this host's int8 kernels too, and the worse of the two counts (the
        host deploys it on those kernels, an NPU computes exact integers).

        Each run is measured once per build: another group's ladder that makes the same file (the memo's copy of
        the same quantization) against the same float model, split and thresholds gets its figures again, a group
        with a CPU target only adds the run on this host's kernels."""
        exact = self._run_score(fmt, path, host=False)
        if not (self.host_kernels and fmt == "onnx"):
            return exact
        host = self._run_score(fmt, path, host=True)

        def badness(f: Fidelity) -> tuple[float, int, float, float]:
            return f.flips_points or 0.0, len(f.failures), -f.cosine, -f.sqnr_db

        if badness(host) <= badness(exact):
            return exact
        return replace(host, failures=tuple(f"on this host's kernels: {line}" for line in host.failures))

    def _run_score(self, fmt: str, path: Path, host: bool) -> Fidelity:
        """The score of one run of ``path`` on the decision split: exact integers, or this host's kernels."""
        reference, subset = self.float_outputs(fmt), self._subset()
        key = ("fidelity", fmt, self.memo.digest(path), self.reference_digest[fmt], data_key(subset), host,
               repr(self.decision_thresholds), repr(self.task))
        return self.memo.recall(key, lambda: self._scored(
            reference, run_outputs(path, subset, threads=DECISION_THREADS, host=host), subset))

    def _scored(self, reference: ModelOutputs, got: ModelOutputs, subset: Dataset) -> Fidelity:
        score = self.label_free(reference, got)
        if subset.labels is None:
            return score
        ref, out = reference.arrays[0], got.arrays[0]
        flips = float(np.mean(ref.reshape(len(ref), -1).argmax(1) != out.reshape(len(out), -1).argmax(1)))
        return Fidelity(cosine=score.cosine, sqnr_db=score.sqnr_db, failures=score.failures,
                        accuracy=round(top1_accuracy(out, subset.labels), 6), flips_points=round(100 * flips, 4))

    def float_selection_accuracy(self, fmt: str) -> float:
        """Top-1 (0..1) of the float ``fmt`` model on the labelled decision split."""
        subset = self._subset()
        assert subset.labels is not None
        return top1_accuracy(self.float_outputs(fmt).arrays[0], subset.labels)

    def meets(self, fmt: str, score: Fidelity) -> bool:
        """The stopping rule. Labelled: at most ``threshold`` points of the selection samples change their
        top-1 against the float model (flips bound the accuracy drop from above, and a drop that cancels out
        on a small split still shows as flips). Label-free: every threshold met by every output.
        """
        if score.flips_points is not None:
            return score.flips_points <= self.threshold + 1e-9
        return not score.failures

    def better(self, fmt: str, score: Fidelity, than: Fidelity | None) -> bool:
        """True when ``score`` ranks above ``than`` (None: anything does) by :func:`selection_rank`."""
        return than is None or (selection_rank([self.selection_score(fmt, score)])
                                < selection_rank([self.selection_score(fmt, than)]))

    def selection_score(self, fmt: str, score: Fidelity) -> SelectionScore:
        """The report record of ``score``."""
        drop = None if score.accuracy is None else round(100 * (self.float_selection_accuracy(fmt)
                                                                - score.accuracy), 4)
        return SelectionScore(min_cosine=score.cosine, min_sqnr_db=score.sqnr_db, accuracy=score.accuracy,
                              drop_points=drop, flips_points=score.flips_points, failures=list(score.failures),
                              met=self.meets(fmt, score))

    @property
    def formats(self) -> list[str]:
        """Formats the ladder quantizes: ONNX always, TFLite when the TensorFlow graph exists."""
        return [f for f in self.floats if f == "onnx" or self.graph is not None]


@dataclass
class StepResult:
    """A step's outcome and, when it produced any, its quantized artifacts per format."""

    outcome: StepOutcome
    artifacts: dict[str, Artifact] = field(default_factory=dict)
