"""What a quantization run does, as one typed value shared by the ONNX and TFLite paths.

A layer's precision (:data:`~edgepipe.targets.profile.LayerPrecision`: int8, a16w8, float) is what a target
profile says it runs, so it is defined there.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from edgepipe.targets.profile import LayerPrecision

CalibrationMethod = Literal["minmax", "percentile", "entropy"]
Granularity = Literal["per-channel", "per-tensor"]

METHODS: tuple[CalibrationMethod, ...] = ("minmax", "percentile", "entropy")
GRANULARITIES: tuple[Granularity, ...] = ("per-channel", "per-tensor")


@dataclass(frozen=True)
class QuantRecipe:
    """Settings of one PTQ run.

    - ``method``: how activation ranges are calibrated;
    - ``per_channel``: per-output-channel weight scales (else one scale per tensor);
    - ``symmetric_activations``: zero point fixed at 0 for activations;
    - ``activation_bits``: 8 (int8) or 16 (int16 activations, int8 weights: a16w8) for the whole model;
    - ``keep_float``: layer names left in float (mixed precision; ONNX node or TFLite tensor names);
    - ``keep_a16w8``: layer names whose activations stay int16 (mixed precision; ONNX only).
    """

    method: CalibrationMethod = "minmax"
    per_channel: bool = True
    symmetric_activations: bool = False
    activation_bits: Literal[8, 16] = 8
    keep_float: tuple[str, ...] = field(default_factory=tuple)
    keep_a16w8: tuple[str, ...] = field(default_factory=tuple)

    @property
    def granularity(self) -> Granularity:
        return "per-channel" if self.per_channel else "per-tensor"

    @property
    def label(self) -> str:
        """A short human name, e.g. ``minmax/per-channel/int8`` or ``entropy/per-tensor/int8/sym +1 float``."""
        bits = "int8" if self.activation_bits == 8 else "a16w8"
        text = f"{self.method}/{self.granularity}/{bits}" + ("/sym" if self.symmetric_activations else "")
        if self.keep_a16w8:
            text += f" +{len(self.keep_a16w8)} a16w8"
        if self.keep_float:
            text += f" +{len(self.keep_float)} float"
        return text

    @property
    def is_mixed(self) -> bool:
        """True when some layers are kept in a higher precision than the rest."""
        return bool(self.keep_float or self.keep_a16w8)

    def raising(self, layer: str, precision: LayerPrecision) -> QuantRecipe:
        """This recipe with ``layer`` also kept in ``precision`` ('a16w8' or 'float')."""
        if precision == "a16w8":
            return replace(self, keep_a16w8=(*self.keep_a16w8, layer))
        return replace(self, keep_float=(*self.keep_float, layer))


DEFAULT_RECIPE = QuantRecipe()
