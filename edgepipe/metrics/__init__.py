"""Label-free accuracy: how closely a quantized or converted model's outputs follow the float model's."""

from edgepipe.metrics.label_free import OutputAgreement, Thresholds, compare_outputs, match_outputs

__all__ = ["OutputAgreement", "Thresholds", "compare_outputs", "match_outputs"]
