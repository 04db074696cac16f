"""The runner interface: ``activate → infer → close``; each runtime writes only the ``*_impl`` steps.

The base class checks inputs once (count, shape, dtype kind) so every runtime
fails the same readable way, and times session creation (``init_ms``).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np

from edgepipe.tensors import Signature


class Runner(ABC):
    """One inference session on one model file. Inputs and outputs are float unless the model's are not."""

    runtime: ClassVar[str]

    def __init__(self, path: Path, threads: int | None = None):
        self.path = path
        self.threads = threads
        self.init_ms: float | None = None
        self._signature: Signature | None = None

    def activate(self) -> Runner:
        """Create the session; ``init_ms`` records how long it took (ms)."""
        start = time.perf_counter()
        self._signature = self.activate_impl()
        self.init_ms = (time.perf_counter() - start) * 1e3
        return self

    @property
    def signature(self) -> Signature:
        if self._signature is None:
            raise RuntimeError(f"{type(self).__name__} used before activate()")
        return self._signature

    def infer(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run one inference on ``inputs`` (one array per model input, in order, batch included)."""
        specs = self.signature.inputs
        if len(inputs) != len(specs):
            raise ValueError(f"{self.path.name} takes {len(specs)} inputs, got {len(inputs)}")
        for array, spec in zip(inputs, specs):
            expected = tuple(spec.shape)
            if len(array.shape) != len(expected) or any(
                e is not None and e != a for e, a in zip(expected, array.shape)
            ):
                raise ValueError(f"{self.path.name} input {spec.name}: shape {array.shape} != {expected}")
        return self.infer_impl(inputs)

    def close(self) -> None:
        """Release the session."""
        self.close_impl()
        self._signature = None

    def __enter__(self) -> Runner:
        return self.activate()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @abstractmethod
    def activate_impl(self) -> Signature:
        """Create the session and return the signature as callers see it (float where quantized)."""

    @abstractmethod
    def infer_impl(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the session on validated inputs."""

    def close_impl(self) -> None:
        """Free runtime resources (optional)."""
