"""Typed records of why a target's verdict is what it is: the evidence checked and the tools that failed.

A verdict is ``pass`` only when every piece of evidence is ``met`` (or accuracy gating was
turned off by the user, ``not gated``); it is ``fail`` when some evidence contradicts the
build, and ``not proven`` when some evidence is missing (no int8 artifact, no evaluation,
a vendor tool that broke). The rules live in :mod:`edgepipe.gate.verdict`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Verdict = Literal["pass", "fail", "not proven"]
Requirement = Literal["int8 artifact", "accuracy", "compatibility", "vendor compile"]
Outcome = Literal["met", "failed", "not proven", "not gated", "not checked"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolFailure(_Record):
    """A third-party tool that failed during the build; the build went on without what it would have made."""

    stage: str = Field(description="Build stage the tool ran in, e.g. 'quantize', 'export'.")
    tool: str = Field(description="The tool, e.g. 'onnxruntime.quantization', 'ai-edge-quantizer', 'onnx2tf'.")
    artifact: str | None = Field(None, description="The artifact it was making or loading, if any.")
    message: str = Field(description="The tool's own message (first line).")
    next_step: str = Field(description="The config key or option that avoids the failure.")


class Evidence(_Record):
    """One requirement of a pass verdict and whether this build met it."""

    requirement: Requirement
    outcome: Outcome = Field(description="'met'; 'failed' (fails the verdict); 'not proven' (no pass without it); "
                                         "'not gated' (turned off by the user); 'not checked' (does not block).")
    detail: str = Field(description="What was measured against what, or why it could not be.")
