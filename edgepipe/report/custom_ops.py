"""Report records of the custom-op check (``custom_ops`` in ``report.json``), and their Markdown section."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CustomOpInfo(_Record):
    name: str = Field(description="The op: a TFLite custom code, or an ONNX node type outside the standard domains.")
    format: Literal["onnx", "tflite"]
    domain: str = Field("", description="ONNX domain of the op ('' for TFLite custom ops).")
    count: int = Field(description="How many nodes use it.")
    runs_on_host: bool = Field(description="The host runtime (ONNX Runtime, LiteRT) ran the model with it.")
    on_accelerator: bool = Field(description="The target's op table lists it (else it falls back or fails).")


class CustomOpsReport(_Record):
    """Ops outside the standard op sets in the model this target would get, and where they can run."""

    source: str = Field(description="The file the ops were read from.")
    ops: list[CustomOpInfo]
    detail: str


def render_custom_ops(report: CustomOpsReport | None) -> list[str]:
    """The ``report.md`` section (nothing when the model has no custom ops)."""
    if report is None or not report.ops:
        return []
    lines = [f"## Custom ops ({report.source})", "", report.detail, "",
             "| op | format | nodes | runs on host | on this target's accelerator |", "|---|---|---|---|---|"]
    for op in report.ops:
        name = f"{op.domain}::{op.name}" if op.domain else op.name
        lines.append(f"| {name} | {op.format} | {op.count} | {'yes' if op.runs_on_host else 'no'} | "
                     f"{'yes' if op.on_accelerator else 'no'} |")
    return [*lines, ""]
