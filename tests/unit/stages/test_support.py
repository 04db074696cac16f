"""Which artifact a target's support check and vendor compile read: the quantized one, int8 or mixed precision."""

from __future__ import annotations

from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.stages.support import deployed_artifact
from edgepipe.targets import load_profile


def _artifacts(folder: Path, quantized: str) -> tuple[Artifact, ...]:
    float_path, quantized_path = folder / "model.tflite", folder / "model_int8.tflite"
    return (Artifact(float_path, "tflite", "fp32"), Artifact(quantized_path, "tflite", quantized))  # type: ignore[arg-type]


def test_an_int8_target_checks_the_mixed_precision_file_not_its_float_twin(tmp_path: Path) -> None:
    """The ladder's mixed step (and the TFLite a16w8 rung) write precision 'mixed': still the file deployed."""
    profile = load_profile("ethos-u55")
    assert profile.artifact.format == "tflite" and profile.artifact.precision == "int8"
    chosen = deployed_artifact(profile, _artifacts(tmp_path, "mixed"))
    assert chosen is not None and chosen.key == "model_int8.tflite"
    chosen = deployed_artifact(profile, _artifacts(tmp_path, "int8"))
    assert chosen is not None and chosen.key == "model_int8.tflite"


def test_without_a_quantized_file_the_float_one_of_the_format_is_checked(tmp_path: Path) -> None:
    profile = load_profile("ethos-u55")
    chosen = deployed_artifact(profile, _artifacts(tmp_path, "int8")[:1])
    assert chosen is not None and chosen.key == "model.tflite"
