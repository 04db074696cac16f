"""What several ladder steps do: quantize every format with its recipe into the step's folder."""

from __future__ import annotations

from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.quantize.ladder_context import SUFFIX, LadderContext
from edgepipe.quantize.recipe import QuantRecipe


def artifact_of(fmt: str, path: Path, recipe: QuantRecipe) -> Artifact:
    """The artifact record of a quantized file: ``mixed`` when some layers (or all activations) stay above int8."""
    wide = recipe.is_mixed or recipe.activation_bits != 8
    return Artifact(path, fmt, "mixed" if wide else "int8")  # type: ignore[arg-type]


def quantize_all(context: LadderContext, step: str, recipes: dict[str, QuantRecipe]) -> dict[str, Artifact]:
    """One quantized artifact per format, each with its recipe, in ``<work>/<step>/``."""
    folder = context.folder(step)
    return {fmt: artifact_of(fmt, context.quantize(fmt, recipe, folder / f"model_int8{SUFFIX[fmt]}"), recipe)
            for fmt, recipe in recipes.items()}
