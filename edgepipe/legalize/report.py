"""The typed result of legalizing one model for one target: each rewrite's outcome and the placement around them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edgepipe.support.report import SupportReport


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlacementSummary(_Record):
    """Where the nodes of one float ONNX graph run on the target, in totals."""

    nodes: int
    cpu_nodes: int = Field(description="Nodes placed on the CPU.")
    partitions: int = Field(description="Accelerator partitions (each a CPU/accelerator hand-over).")
    cpu_ops: dict[str, int] = Field(default_factory=dict, description="CPU nodes per op type.")
    compile_blockers: int = Field(0, description="Nodes the vendor compiler is known to reject the graph for.")

    @classmethod
    def of(cls, report: SupportReport) -> PlacementSummary:
        return cls(nodes=report.nodes, cpu_nodes=report.nodes - report.accelerator_nodes,
                   partitions=report.partitions, cpu_ops=dict(sorted(report.cpu_ops.items())),
                   compile_blockers=len(report.compile_blockers))

    def better_than(self, other: PlacementSummary) -> bool:
        """No more compile blockers nor partitions (a graph with none counts as one: moving all of it onto the
        accelerator makes one), and fewer CPU nodes or fewer partitions."""
        return (self.compile_blockers <= other.compile_blockers and self.partitions <= max(other.partitions, 1)
                and (self.cpu_nodes < other.cpu_nodes or self.partitions < other.partitions))


RewriteStatus = Literal["kept", "refused", "off"]


class RewriteOutcome(_Record):
    """One rewrite tried on the target: kept, refused (and why), or turned off in the config."""

    name: str
    rule: str = Field(description="What the rewrite does, in one sentence.")
    status: RewriteStatus
    nodes: int = Field(0, description="Nodes it rewrote (kept) or would have rewritten (refused).")
    reason: str = Field("", description="Why it was refused, or what it changed.")
    max_relative_error: float | None = Field(
        None, description="Largest |rewritten - original| / max|original| over the outputs on the check samples.")


class LegalizationReport(_Record):
    """Legalization of the float ONNX for one target: placement before and after, and each rewrite's outcome."""

    artifact: str = Field(description="The float artifact rewritten (the int8 one is quantized from it).")
    samples: int = Field(description="Samples the outputs were compared on.")
    sample_source: Literal["calibration", "random"] = Field(
        description="Calibration data, or standard-normal inputs when the build has none.")
    before: PlacementSummary
    after: PlacementSummary
    rewrites: list[RewriteOutcome] = Field(default_factory=list)

    @property
    def kept(self) -> list[RewriteOutcome]:
        return [r for r in self.rewrites if r.status == "kept"]
