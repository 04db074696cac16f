"""The record of which stages ran, how long they took (s), and which were skipped and why."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edgepipe.errors import ToolFailed


class ToolFailure(BaseModel):
    """A third-party tool that failed during the build; the build went on without what it would have made."""

    model_config = ConfigDict(extra="forbid")

    stage: str = Field(description="Build stage the tool ran in, e.g. 'quantize', 'export'.")
    tool: str = Field(description="The tool, e.g. 'onnxruntime.quantization', 'ai-edge-quantizer', 'onnx2tf'.")
    artifact: str | None = Field(None, description="The artifact it was making or loading, if any.")
    message: str = Field(description="The tool's own message (first line).")
    next_step: str = Field(description="The config key or option that avoids the failure.")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StageRecord:
    """One stage's outcome: ``ran`` (with its wall time in seconds) or ``skipped`` (with the reason)."""

    name: str
    status: Literal["ran", "skipped", "failed"]
    seconds: float = 0.0
    detail: str = ""


class StageLog:
    """Times stages and tells a progress listener (the CLI) when each one starts and ends."""

    def __init__(self, listener: Callable[[str, str], None] | None = None):
        self.records: list[StageRecord] = []
        self.failures: list[ToolFailure] = []
        self._listener = listener or (lambda event, name: None)

    @contextmanager
    def stage(self, name: str, detail: str = "") -> Iterator[None]:
        """Run the body as stage ``name``; recorded only when it finishes."""
        log.info("stage %s: start", name)
        self._listener("start", name)
        start = time.perf_counter()
        from edgepipe.limits import active, stage_deadline

        with stage_deadline(name, active().stage_timeout_s):  # limits.stage_timeout_s of the build
            yield
        seconds = time.perf_counter() - start
        self.records.append(StageRecord(name, "ran", seconds, detail))
        log.info("stage %s: done in %.2f s", name, seconds)
        self._listener("done", name)

    def ran(self, name: str, seconds: float, detail: str) -> None:
        """Record a stage that was timed by its caller (one whose detail is known only at its end)."""
        log.info("stage %s: done in %.2f s (%s)", name, seconds, detail)
        self.records.append(StageRecord(name, "ran", seconds, detail))

    def annotate(self, name: str, note: str) -> None:
        """Add ``note`` (what the stage learned while it ran, e.g. a fallback it took) to its latest record."""
        for index in reversed(range(len(self.records))):
            if note and self.records[index].name == name:
                record = self.records[index]
                self.records[index] = StageRecord(record.name, record.status, record.seconds,
                                                  f"{record.detail}; {note}" if record.detail else note)
                return

    def skip(self, name: str, reason: str) -> None:
        """Record that ``name`` does not apply to this input, and why."""
        log.info("stage %s: skipped (%s)", name, reason)
        self.records.append(StageRecord(name, "skipped", 0.0, reason))

    def fail(self, name: str, failure: ToolFailed, artifact: str | None = None) -> None:
        """Record that a third-party tool failed in stage ``name``; the build goes on without its output."""
        log.warning("stage %s: %s failed: %s (%s)", name, failure.tool, failure.message, failure.next_step)
        self.records.append(StageRecord(name, "failed", 0.0, f"{failure.tool} failed: {failure.message}. "
                                                           f"Next step: {failure.next_step}"))
        record = ToolFailure(stage=name, tool=failure.tool, artifact=artifact, message=failure.message,
                             next_step=failure.next_step)
        same = [f for f in self.failures if (f.stage, f.tool, f.message) == (name, failure.tool, failure.message)]
        if same and same[0].artifact is None and artifact is not None:  # the same failure, now with its artifact
            self.failures[self.failures.index(same[0])] = record
        elif not same:  # targets quantized in separate groups meet the same failure again
            self.failures.append(record)
