"""Tensor descriptions shared by loaders, datasets and runtimes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TensorSpec:
    """A model input or output: its name, shape (``None`` for a dynamic dimension) and dtype."""

    name: str
    shape: tuple[int | None, ...]
    dtype: np.dtype

    @property
    def is_static(self) -> bool:
        """True when every dimension is known."""
        return all(isinstance(d, int) and d > 0 for d in self.shape)

    def sample_shape(self) -> tuple[int | None, ...]:
        """The shape of one sample: the shape without its leading batch dimension."""
        return self.shape[1:]

    def describe(self) -> str:
        dims = "x".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.name} [{dims}] {np.dtype(self.dtype).name}"


@dataclass(frozen=True)
class Signature:
    """A model's inputs and outputs, in the order the model declares them."""

    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    #: Outputs whose values follow from the input shapes alone (constants once those are fixed): a converter may
    #: leave them out (:mod:`edgepipe.load.onnx_constant_outputs`).
    constant_outputs: tuple[str, ...] = ()
