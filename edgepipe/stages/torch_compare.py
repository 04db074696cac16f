"""Per-target stage for PyTorch inputs: every artifact's outputs against the PyTorch program's own outputs.

The float ONNX and TFLite come from the PyTorch model through two converters, and the int8
artifacts from those; the label-free comparison elsewhere in the report uses the float ONNX as
its reference, so it cannot see an exporter error. This stage runs the ``torch.export``
program itself (eager, CPU) on the same inputs (evaluation split, else calibration) and
compares each artifact with it; it becomes the report's ``pytorch`` section.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

from edgepipe.metrics.compare import ModelOutputs, run_outputs
from edgepipe.metrics.label_free import compare_outputs, match_outputs
from edgepipe.report.label_free import ComparisonInfo, OutputAgreementInfo
from edgepipe.report.pytorch import TorchComparisonInfo

#: At most this many samples are compared (the program runs eagerly, one sample at a time).
MAX_SAMPLES = 200
REFERENCE = "pytorch"


def _program_outputs(model: Any, dataset: Any, limit: int) -> ModelOutputs:
    per_sample = [model.handle.run(sample) for sample in dataset.samples(limit)]
    arrays = [np.concatenate([np.asarray(outs[i], np.float32).reshape(1, -1) if outs[i].ndim == 0
                              else np.asarray(outs[i], np.float32) for outs in per_sample])
              for i in range(len(per_sample[0]))]
    return ModelOutputs([spec.name for spec in model.signature.outputs], arrays)


def torch_compare_stage(context: Any) -> tuple[str, TorchComparisonInfo | None]:
    """The ``pytorch`` report section; ``None`` when the input is not PyTorch or there is no data."""
    inputs = context.inputs
    dataset = inputs.evaluation if inputs.evaluation is not None else inputs.calibration
    if inputs.model.format != "pytorch" or dataset is None or not context.artifacts:
        return "pytorch", None
    limit = min(MAX_SAMPLES, len(dataset))
    outputs = {REFERENCE: _program_outputs(inputs.model, dataset, limit)}
    for artifact in context.artifacts:
        outputs[artifact.key] = run_outputs(artifact.path, dataset, limit)
    comparisons = [_compare(key, outputs[REFERENCE], got) for key, got in outputs.items() if key != REFERENCE]
    return "pytorch", TorchComparisonInfo(samples=limit, comparisons=comparisons,
                                          data="evaluation" if inputs.evaluation is not None else "calibration")


def _compare(key: str, reference: ModelOutputs, candidate: ModelOutputs) -> ComparisonInfo:
    pairs = match_outputs(reference.described(), candidate.described())
    agreements = [compare_outputs(reference.names[i], reference.arrays[i], candidate.arrays[j]) for i, j in pairs]
    matched = {i for i, _ in pairs}
    return ComparisonInfo(artifact=key, reference=REFERENCE,
                          outputs=[OutputAgreementInfo(**asdict(a)) for a in agreements],
                          unmatched_outputs=[n for i, n in enumerate(reference.names) if i not in matched])
