"""Does a converted float model compute its source's function? Checked on a few real samples.

Converters can succeed and still change what a model computes (onnx2tf on a byte-sequence
classifier gave output cosine 0.019 against the ONNX). A float artifact is the reference its
int8 forms are quantized from, so one that is not the same function is refused at export, with
the output and the figure that show it, rather than failing every quantization after it.

Outputs are paired by name, else position or size (:func:`match_outputs`); an output whose
converted shape is the channels-last form of the source's (NHWC of NCHW) is compared after
moving its last axis back, as converters to TFLite may lay feature maps out that way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.metrics.compare import run_outputs
from edgepipe.metrics.label_free import match_outputs
from edgepipe.metrics.similarity import cosine

#: Samples both models run on.
SAMPLES = 4
#: Lowest output cosine of a float conversion taken as the same function (a wrong conversion seen: 0.0099).
MIN_COSINE = 0.99
#: Outputs this close (absolute, and relative to each element) are the same function whatever their cosine: an
#: output that is all but zero on the samples (a sigmoid mask far below its threshold) has no direction to compare.
ATOL, RTOL = 1e-5, 1e-3


def same_values(reference: np.ndarray, converted: np.ndarray) -> tuple[bool, float]:
    """Whether ``converted`` gives ``reference``'s values (cosine >= :data:`MIN_COSINE`, or equal within
    :data:`ATOL` / :data:`RTOL`), and their cosine."""
    similarity = cosine(reference, converted)
    close = reference.shape == converted.shape and bool(np.allclose(converted, reference, rtol=RTOL, atol=ATOL))
    return similarity >= MIN_COSINE or close, similarity


def _as_source_layout(source: np.ndarray, converted: np.ndarray) -> np.ndarray:
    """``converted`` in ``source``'s layout: as is when the shapes agree, channels moved first when it is NHWC."""
    if converted.shape == source.shape or converted.ndim != source.ndim or converted.ndim < 4:
        return converted.reshape(source.shape)
    moved = np.moveaxis(converted, -1, 1)
    return moved if moved.shape == source.shape else converted.reshape(source.shape)


@dataclass(frozen=True)
class FloatAgreement:
    """How closely a converted float model computes its source's outputs on a few samples."""

    #: The lowest cosine over the paired outputs (1.0 when no output could be paired).
    cosine: float
    #: The source's output with that cosine.
    output: str
    #: Why the conversion is not the source's function; None when it is (:data:`MIN_COSINE`).
    problem: str | None


def float_agreement(source: Path, converted: Path, data: Dataset) -> FloatAgreement:
    """Compare ``converted``'s outputs with ``source``'s on the first :data:`SAMPLES` samples of ``data``."""
    want = run_outputs(source, data, SAMPLES)
    got = run_outputs(converted, data, SAMPLES)
    pairs = match_outputs(want.described(), got.described())
    unmatched = want.missing(got, pairs)  # constants of the model may be left out (onnx2tf folds and drops them)
    if unmatched:
        return FloatAgreement(0.0, unmatched[0], f"no output of the same size as {', '.join(unmatched)} "
                                                 f"(outputs {got.described()})")
    resized = [want.names[i] for i, j in pairs if want.arrays[i].size != got.arrays[j].size]
    if resized:
        return FloatAgreement(0.0, resized[0], f"output {resized[0]} has another size (outputs {got.described()}, "
                                               f"the source's {want.described()})")
    checks = [(*same_values(want.arrays[i], _as_source_layout(want.arrays[i], got.arrays[j])), want.names[i])
              for i, j in pairs]
    failing = [(similarity, name) for same, similarity, name in checks if not same]
    worst, name = min(failing or [(similarity, name) for _, similarity, name in checks], default=(1.0, ""))
    if failing:
        return FloatAgreement(worst, name, f"output {name} has cosine {worst:.4f} with the source's on "
                                           f"{min(SAMPLES, len(data))} calibration samples (a faithful conversion "
                                           f"gives > {MIN_COSINE})")
    return FloatAgreement(worst, name, None)


def float_mismatch(source: Path, converted: Path, data: Dataset) -> str | None:
    """Why ``converted`` does not compute ``source``'s outputs on the first samples of ``data``; None when it does."""
    return float_agreement(source, converted, data).problem
