"""Constraints on integer tensors the Arm Ethos-U NPUs take (found with Vela on probe graphs)."""

from __future__ import annotations

from edgepipe.support.constraints import Verdict, constraint  # noqa: F401
from edgepipe.support.graph import OpGraph, OpNode  # noqa: F401
