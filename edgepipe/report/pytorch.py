"""Report record of the PyTorch comparison (``pytorch`` in ``report.json``; :mod:`edgepipe.stages.torch_compare`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edgepipe.report.label_free import ComparisonInfo


class TorchComparisonInfo(BaseModel):
    """Each artifact compared with the PyTorch program's outputs (no thresholds: information for the user)."""

    model_config = ConfigDict(extra="forbid")

    samples: int = Field(description="Inputs the program and the artifacts ran on.")
    data: Literal["evaluation", "calibration"] = Field(description="Which split the inputs came from.")
    comparisons: list[ComparisonInfo] = Field(description="One per artifact; its reference is 'pytorch'.")
