"""The typed support-check result: per node, per partition, totals, and vendor agreement (report.json)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Placement = Literal["accelerator", "cpu"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FailedConstraint(_Record):
    constraint: str = Field(description="Predicate name, e.g. 'stride_max'.")
    rule: str = Field(description="The rule's text with the profile's value.")
    detail: str = Field(description="The values that failed it, e.g. 'CONV_2D stride 5 > 3'.")


class NodeVerdict(_Record):
    index: int
    name: str = Field(description="Node name (ONNX) or first output tensor (TFLite), as vendor tools name it.")
    op: str
    placement: Placement
    failed: list[FailedConstraint] = Field(default_factory=list)
    macs: int = Field(0, description="Multiply-accumulates of this node.")


class CompileBlocker(_Record):
    """A node the vendor compiler is known to reject, failing the whole compile (not falling back to the CPU)."""

    node: str
    op: str
    constraint: str
    rule: str
    detail: str

    def named(self) -> str:
        """The detail, led by the op and node it is about unless it names the node itself."""
        return self.detail if f"'{self.node}'" in self.detail else f"{self.op} '{self.node}': {self.detail}"


class Partition(_Record):
    device: Placement
    nodes: list[int] = Field(description="Node indices, in execution order.")


class OpAgreement(_Record):
    name: str
    op: str
    edgepipe: Placement
    vendor: Placement


class Verification(_Record):
    """How edgepipe's placement compares with a vendor toolchain's, op by op."""

    tool: str = Field(description="e.g. 'vela ethos-u55-128', 'qnn-htp-emulator'.")
    status: Literal["ran", "not installed", "failed", "compile_failed"]
    detail: str = ""
    compared: int = Field(0, description="Ops placed by both.")
    agree: int = 0
    edgepipe_only: int = Field(0, description="Ops edgepipe puts on the accelerator and the vendor does not.")
    vendor_only: int = Field(0, description="Ops the vendor puts on the accelerator and edgepipe does not.")
    disagreements: list[OpAgreement] = Field(default_factory=list)
    extra: dict[str, float | str] = Field(default_factory=dict,
                                          description="Tool-specific figures (cycles, output error).")

    @property
    def agreement(self) -> float:
        """Share of compared ops with the same placement (0..1)."""
        return self.agree / self.compared if self.compared else 1.0


class SupportReport(_Record):
    """Where each node of one artifact runs on one target, and what that costs."""

    target: str
    artifact: str = Field(description="The model file checked.")
    format: Literal["onnx", "tflite"]
    partition_semantics: Literal["any", "prefix"]
    nodes: int
    accelerator_nodes: int
    node_share: float = Field(description="Share of nodes on the accelerator (0..1).")
    macs: int = Field(description="Total multiply-accumulates of the model.")
    accelerator_macs: int
    mac_share: float = Field(description="Share of MACs on the accelerator (0..1; 1 when the model has none).")
    partitions: int = Field(description="Accelerator subgraphs.")
    transitions: int = Field(description="Switches between accelerator and CPU along execution order.")
    peak_activation_bytes: int = Field(description="Largest sum of live feature maps along execution order.")
    weights_bytes: int = Field(description="Constant tensors (bytes).")
    sram_bytes: int | None = Field(description="The target's on-chip SRAM (bytes); None if it has none.")
    fits_sram: bool | None = Field(description="Peak activations fit in SRAM; None when the target has none.")
    cpu_ops: dict[str, int] = Field(description="Op type -> nodes of that type left on the CPU.")
    node_verdicts: list[NodeVerdict]
    partition_list: list[Partition]
    verification: list[Verification] = Field(default_factory=list)
    compile_blockers: list[CompileBlocker] = Field(
        default_factory=list, description="Nodes that make the target's compiler reject the whole graph "
                                          "(profile compile_blockers): empty when none is known.")
