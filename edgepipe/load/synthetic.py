"""Synthetic inputs for a model given without data: enough to check that it runs and to time it.

Never used for accuracy: the values are random, so outputs mean nothing. Floats are
standard normal; integer inputs are uniform over their type's range (int8/uint8, e.g. a
full-int8 TFLite) or small non-negative ids (int32/int64 tokens); dynamic dims count as 1.
"""

from __future__ import annotations

import numpy as np

from edgepipe.tensors import Signature


def synthetic_sample(signature: Signature, seed: int = 0) -> list[np.ndarray]:
    """One batch-1 input list for ``signature``, deterministic for ``seed``."""
    rng = np.random.default_rng(seed)
    sample = []
    for spec in signature.inputs:
        shape = tuple(d if isinstance(d, int) and d > 0 else 1 for d in spec.shape)
        dtype = np.dtype(spec.dtype)
        if np.issubdtype(dtype, np.floating):
            sample.append(rng.standard_normal(shape).astype(dtype))
        elif dtype.itemsize == 1 and np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            sample.append(rng.integers(info.min, int(info.max) + 1, shape).astype(dtype))
        elif np.issubdtype(dtype, np.integer):
            sample.append(rng.integers(0, 2, shape).astype(dtype))
        else:
            sample.append(np.zeros(shape, dtype))
    return sample
