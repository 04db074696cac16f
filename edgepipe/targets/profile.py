"""The target profile schema. A profile says what a device is; how we compile for it lives elsewhere."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class TargetProfile(BaseModel):
    """One device class, as declared in ``targets/<name>.toml`` (after ``inherit`` is resolved)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Target id, equal to the file's stem.")
    description: str = Field(description="One line for `edgepipe targets list`.")
    device_class: Literal["cpu", "gpu", "npu"] = Field(description="What kind of processor runs the model.")
    sources: list[str] = Field(default_factory=list, description="Public documents the facts come from.")
    deploy_formats: list[Literal["onnx", "tflite"]] = Field(
        default_factory=lambda: ["onnx", "tflite"], description="Artifact formats this target deploys.")
