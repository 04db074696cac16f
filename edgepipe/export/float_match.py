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

from pathlib import Path

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.metrics.compare import run_outputs
from edgepipe.metrics.label_free import cosine, match_outputs

#: Samples both models run on.
SAMPLES = 4
#: Lowest output cosine of a float conversion taken as the same function (a wrong conversion seen: 0.0099).
MIN_COSINE = 0.99


def _as_source_layout(source: np.ndarray, converted: np.ndarray) -> np.ndarray:
    """``converted`` in ``source``'s layout: as is when the shapes agree, channels moved first when it is NHWC."""
    if converted.shape == source.shape or converted.ndim != source.ndim or converted.ndim < 4:
        return converted.reshape(source.shape)
    moved = np.moveaxis(converted, -1, 1)
    return moved if moved.shape == source.shape else converted.reshape(source.shape)


def float_mismatch(source: Path, converted: Path, data: Dataset) -> str | None:
    """Why ``converted`` does not compute ``source``'s outputs on the first samples of ``data``; None when it does."""
    want = run_outputs(source, data, SAMPLES)
    got = run_outputs(converted, data, SAMPLES)
    pairs = match_outputs(want.described(), got.described())
    unmatched = want.missing(got, pairs)  # constants of the model may be left out (onnx2tf folds and drops them)
    if unmatched:
        return f"no output of the same size as {', '.join(unmatched)} (outputs {got.described()})"
    resized = [want.names[i] for i, j in pairs if want.arrays[i].size != got.arrays[j].size]
    if resized:
        return f"output {resized[0]} has another size (outputs {got.described()}, the source's {want.described()})"
    worst = min(((cosine(want.arrays[i], _as_source_layout(want.arrays[i], got.arrays[j])), want.names[i])
                 for i, j in pairs), default=(1.0, ""))
    if worst[0] < MIN_COSINE:
        return (f"output {worst[1]} has cosine {worst[0]:.4f} with the source's on {min(SAMPLES, len(data))} "
                f"calibration samples (a faithful conversion gives > {MIN_COSINE})")
    return None
