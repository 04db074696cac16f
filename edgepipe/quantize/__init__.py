"""Stage 3, quantize: post-training int8 quantization of the exported float artifacts."""

from edgepipe.quantize.recipe import QuantRecipe

__all__ = ["QuantRecipe"]
