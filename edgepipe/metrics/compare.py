"""Run artifacts on the same inputs and compare each with its float reference (label-free)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np

from edgepipe.artifacts import Artifact
from edgepipe.data.dataset import Dataset
from edgepipe.metrics.label_free import OutputAgreement, Thresholds, compare_outputs, match_outputs
from edgepipe.metrics.records import ComparisonInfo, OutputAgreementInfo
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

    def missing(self, got: ModelOutputs, pairs: list[tuple[int, int]]) -> list[str]:
        """The names of these (reference) outputs left unpaired in ``pairs`` with ``got``'s, but for constants of
        the model when ``got`` has fewer outputs by at most their number (a converter folded and dropped them)."""
        matched = {i for i, _ in pairs}
        fewer = len(self.names) - len(got.names)
        tolerated = set(self.constant) if fewer > 0 and fewer <= len(self.constant) else set()
        return [n for i, n in enumerate(self.names) if i not in matched and n not in tolerated]


def run_outputs(path: Path, dataset: Dataset, limit: int | None = None) -> ModelOutputs:
    """All outputs of the model at ``path`` for the first ``limit`` samples of ``dataset``, stacked."""
    with open_runner(path, reference_int8=True) as runner:  # judged on exact int8 semantics
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


def compare(artifact: Artifact, reference: Artifact, outputs: dict[str, ModelOutputs],
            thresholds: Thresholds) -> ComparisonInfo:
    """The label-free comparison of ``artifact`` with ``reference`` from their recorded ``outputs``."""
    agreements, unmatched = outputs[reference.key].agreements(outputs[artifact.key])
    return ComparisonInfo(
        artifact=artifact.key, reference=reference.key,
        outputs=[OutputAgreementInfo(**asdict(a)) for a in agreements],
        unmatched_outputs=unmatched,
        failures=[f for a in agreements for f in thresholds.failures(a)] + [unmatched_failure(n) for n in unmatched])


def unmatched_failure(name: str) -> str:
    """The failure of a reference output the candidate has no output to compare with."""
    return f"{name}: no output of the same size to compare"
