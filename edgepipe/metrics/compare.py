"""Run artifacts on the same inputs and compare each with its float reference (label-free)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Literal

import numpy as np

from edgepipe.artifacts import Artifact
from edgepipe.data.dataset import Dataset
from edgepipe.metrics.label_free import OutputAgreement, Thresholds, compare_outputs, match_outputs
from edgepipe.metrics.records import ComparisonInfo, OutputAgreementInfo, TaskInfo
from edgepipe.metrics.task_plan import TaskPlan, run_task, task_failure
from edgepipe.runtimes import open_runner


class ModelOutputs:
    """Every output of one artifact over a dataset: names, one sample-major array per output, and the outputs that
    are constants of the model (they follow from its input shapes alone; a converter may leave them out)."""

    def __init__(self, names: list[str], arrays: list[np.ndarray], constant: tuple[str, ...] | None = None,
                 source: Path | None = None):
        self.names = names
        self.arrays = arrays
        self._constant = constant
        self._source = source  # the model file, read for its constant outputs only when one is missing (rare)

    @property
    def constant(self) -> tuple[str, ...]:
        """The outputs that are constants of the model (:func:`constant_outputs` of its file, found on first use)."""
        if self._constant is None:
            self._constant = constant_outputs(self._source) if self._source is not None else ()
        return self._constant

    def described(self) -> list[tuple[str, int]]:
        return [(name, array.size) for name, array in zip(self.names, self.arrays)]

    def agreements(self, got: ModelOutputs) -> tuple[list[OutputAgreement], list[str]]:
        """Each of these (reference) outputs against ``got``'s output of the same name, else of the same position
        or size (:func:`match_outputs`: a converter or quantizer may reorder outputs); and the names of the
        reference outputs ``got`` has no match for (:meth:`missing`)."""
        pairs = match_outputs(self.described(), got.described())
        return ([compare_outputs(self.names[i], self.arrays[i], got.arrays[j]) for i, j in pairs],
                self.missing(got, pairs))

    def by_name(self) -> dict[str, np.ndarray]:
        return dict(zip(self.names, self.arrays))

    def paired(self, got: ModelOutputs) -> dict[str, np.ndarray]:
        """``got``'s outputs under the names of the reference outputs they pair with (:func:`match_outputs`)."""
        return {self.names[i]: got.arrays[j] for i, j in match_outputs(self.described(), got.described())}

    def task_scores(self, got: ModelOutputs, plans: Sequence[TaskPlan]) -> list[TaskInfo]:
        """Every task check of ``plans`` whose outputs ``got`` has, scored against these (float) outputs."""
        paired, reference = self.paired(got), self.by_name()
        return [run_task(plan, reference, paired) for plan in plans if all(o in paired for o in plan.outputs)]

    def missing(self, got: ModelOutputs, pairs: list[tuple[int, int]]) -> list[str]:
        """The names of these (reference) outputs left unpaired in ``pairs`` with ``got``'s, but for constants of
        the model when ``got`` has fewer outputs by at most their number (a converter folded and dropped them)."""
        matched = {i for i, _ in pairs}
        fewer = len(self.names) - len(got.names)
        tolerated = set(self.constant) if fewer > 0 and fewer <= len(self.constant) else set()
        return [n for i, n in enumerate(self.names) if i not in matched and n not in tolerated]


def run_outputs(path: Path, dataset: Dataset, limit: int | None = None, *, host: bool = False,
                threads: int | None = None) -> ModelOutputs:
    """All outputs of the model at ``path`` for the first ``limit`` samples of ``dataset``, stacked.

    Int8 ONNX runs with exact integer semantics (what NPUs compute), or with ``host`` as this machine's
    ONNX Runtime runs it by default (its fused int8 kernels: what host-cpu deploys). ``threads``: the runtime's
    intra-op threads (None: its default)."""
    with open_runner(path, threads=threads, reference_int8=not host) as runner:
        names = [spec.name for spec in runner.signature.outputs]
        per_sample = [runner.infer(sample) for sample in dataset.samples(limit)]
    arrays = [np.concatenate([np.asarray(outs[i], np.float32).reshape(1, -1) if outs[i].ndim == 0
                              else np.asarray(outs[i], np.float32) for outs in per_sample])
              for i in range(len(names))]
    return ModelOutputs(names, arrays, source=path)


def constant_outputs(path: Path) -> tuple[str, ...]:
    """The outputs of the ONNX model at ``path`` that are constants (:mod:`edgepipe.load.onnx_constant_outputs`);
    none for other formats."""
    if path.suffix != ".onnx":
        return ()
    import onnx

    from edgepipe.load.onnx_constant_outputs import shape_only_outputs

    return shape_only_outputs(onnx.load(str(path), load_external_data=False))


def reference_of(artifacts: list[Artifact]) -> Artifact | None:
    """The float artifact others are compared with: the float ONNX, else the first float artifact."""
    floats = [a for a in artifacts if a.precision == "fp32"]
    return next((a for a in floats if a.format == "onnx"), floats[0] if floats else None)


Arithmetic = Literal["exact integer", "host runtime"]


def compare(artifact: Artifact, reference: Artifact, outputs: ModelOutputs, reference_outputs: ModelOutputs,
            thresholds: Thresholds, plans: Sequence[TaskPlan] = (),
            arithmetic: Arithmetic = "exact integer") -> ComparisonInfo:
    """The label-free comparison of ``artifact`` (its recorded ``outputs``) with ``reference``: every output whole
    and part by part, and the task checks of ``plans``."""
    agreements, unmatched = reference_outputs.agreements(outputs)
    tasks = reference_outputs.task_scores(outputs, plans)
    failures = [f for a in agreements for f in thresholds.failures(a)] + [unmatched_failure(n) for n in unmatched]
    failures += [line for task in tasks if (line := task_failure(task)) is not None]
    return ComparisonInfo(
        artifact=artifact.key, reference=reference.key,
        outputs=[OutputAgreementInfo(**asdict(a)) for a in agreements],
        unmatched_outputs=unmatched, tasks=tasks, arithmetic=arithmetic, failures=failures)


def unmatched_failure(name: str) -> str:
    """The failure of a reference output the candidate has no output to compare with."""
    return f"{name}: no output of the same size to compare"
