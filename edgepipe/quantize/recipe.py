"""What a quantization run does, as one typed value shared by the ONNX and TFLite paths."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

CalibrationMethod = Literal["minmax", "percentile", "entropy"]


@dataclass(frozen=True)
class QuantRecipe:
    """Settings of one PTQ run.

    - ``method``: how activation ranges are calibrated;
    - ``per_channel``: per-output-channel weight scales (else one scale per tensor);
    - ``symmetric_activations``: zero point fixed at 0 for activations;
    - ``activation_bits``: 8 (int8) or 16 (int16 activations, int8 weights: a16w8);
    - ``keep_float``: node names left in float (mixed precision).
    """

    method: CalibrationMethod = "minmax"
    per_channel: bool = True
    symmetric_activations: bool = False
    activation_bits: Literal[8, 16] = 8
    keep_float: tuple[str, ...] = field(default_factory=tuple)

    @property
    def label(self) -> str:
        """A short human name, e.g. ``minmax/per-channel/int8``."""
        granularity = "per-channel" if self.per_channel else "per-tensor"
        bits = "int8" if self.activation_bits == 8 else "a16w8"
        return f"{self.method}/{granularity}/{bits}"


DEFAULT_RECIPE = QuantRecipe()
