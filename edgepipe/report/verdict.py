"""Typed records of why a target's verdict is what it is: the evidence checked and the tools that failed.

A verdict is ``pass`` only when every piece of evidence is ``met`` (or accuracy gating was
turned off by the user, ``not gated``); it is ``fail`` when some evidence contradicts the
build, and ``not proven`` when some evidence is missing (no int8 artifact, no evaluation,
a vendor tool that broke). The rules live in :mod:`edgepipe.gate.verdict`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edgepipe.stage_log import ToolFailure

__all__ = ["Evidence", "Outcome", "Requirement", "ToolFailure", "Verdict"]

Verdict = Literal["pass", "fail", "not proven"]
Requirement = Literal["int8 artifact", "accuracy", "compatibility", "vendor compile"]
Outcome = Literal["met", "failed", "not proven", "not gated", "not checked"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Evidence(_Record):
    """One requirement of a pass verdict and whether this build met it."""

    requirement: Requirement
    outcome: Outcome = Field(description="'met'; 'failed' (fails the verdict); 'not proven' (no pass without it); "
                                         "'not gated' (turned off by the user); 'not checked' (does not block).")
    detail: str = Field(description="What was measured against what, or why it could not be.")
