"""Whether a rewritten float model computes the original's outputs: ONNX Runtime on the same samples.

Both models run as written, without ONNX Runtime's graph optimizations: its fused kernels round differently from
the nodes they replace (a text recogniser's outputs move by 2.4e-5 of their range between the two), which would
hide what the rewrite itself changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from edgepipe.containment import ONNXRUNTIME, contained
from edgepipe.runtimes import open_runner

#: Largest |rewritten - original| / max|original| of any output a kept rewrite may show.
TOLERANCE = 1e-5

Outputs = list[list[np.ndarray]]


def outputs_of(path: Path, samples: Sequence[list[np.ndarray]]) -> Outputs:
    """Every output of the ONNX model at ``path`` on each sample (ONNX Runtime, CPU, the graph as written), inside
    its boundary."""
    with contained(ONNXRUNTIME), open_runner(path, graph_as_written=True) as runner:
        return [[np.asarray(o) for o in runner.infer(sample)] for sample in samples]


def relative_error(reference: np.ndarray, got: np.ndarray) -> float:
    """max|got - reference| / max|reference| over the finite values (inf when they are not finite alike)."""
    reference, got = np.asarray(reference, np.float64), np.asarray(got, np.float64)
    if reference.shape != got.shape or not np.array_equal(np.isfinite(reference), np.isfinite(got)):
        return float("inf")
    finite = np.isfinite(reference)
    if not finite.any():
        return 0.0
    scale = float(np.max(np.abs(reference[finite])))
    error = float(np.max(np.abs(got[finite] - reference[finite])))
    return error / scale if scale > 0 else error


def max_relative_error(reference: Outputs, got: Outputs) -> float:
    """The largest :func:`relative_error` of any output on any sample."""
    if len(reference) != len(got) or any(len(r) != len(g) for r, g in zip(reference, got)):
        return float("inf")
    return max((relative_error(r, g) for rs, gs in zip(reference, got) for r, g in zip(rs, gs)), default=0.0)
