"""The target profile schema. A profile says what a device is; how we compile for it lives elsewhere.

Facts only: which ops the accelerator runs and under which constraints, the
numeric formats it accepts, its memory, compute and bandwidth, and how its
compiler partitions a graph. Every number carries its unit in the field name.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from edgepipe.targets.performance import PerformanceSpec

Format = Literal["onnx", "tflite"]
NumericFormat = Literal["int8", "int16", "fp16", "fp32"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_rule_table(table: dict[str, Any], where: str) -> dict[str, Any]:
    """Every key names a registered constraint and its value fits that constraint's parameter type."""
    from edgepipe.rules import load_constraints

    known = load_constraints()
    checked: dict[str, Any] = {}
    for key, value in table.items():
        if key == "skip":
            unknown = [name for name in value if name not in known]
            if unknown:
                raise ValueError(f"{where}: 'skip' names unknown constraint '{unknown[0]}'")
            checked[key] = list(value)
            continue
        if key not in known:
            raise ValueError(f"{where}: unknown constraint '{key}'. Known: {', '.join(sorted(known))}")
        checked[key] = known[key].validate_param(value)
    return checked


class OpTable(_Strict):
    """The accelerator's ops in one graph format, with their constraints.

    ``generic`` constraints apply to every listed op (an op exempts itself with ``skip = [names]``);
    an op's own constraint of the same name replaces the generic one. Ops not listed run on the CPU,
    unless ``all_ops`` is true (a general-purpose processor runs every op).
    """

    all_ops: bool = Field(False, description="Every op runs on this device (CPU, GPU reference).")
    generic: dict[str, Any] = Field(default_factory=dict, description="Constraints every listed op must meet.")
    ops: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Op name -> its constraints.")
    ignore: list[str] = Field(default_factory=list,
                              description="Ops that vanish in the vendor compiler (folded, fused); not counted.")
    qdq_node_units: bool = Field(False, description="Weight DequantizeLinear nodes follow the ops reading them "
                                                    "(ONNX Runtime EPs place QDQ node units together).")
    qdq_unit_inputs_after: list[str] = Field(
        default_factory=list, description="Ops whose quantized output, dequantized for an op running on the CPU, "
                                          "is dequantized on the CPU too (the DequantizeLinear joins that op's "
                                          "node unit); after other ops it runs standalone.")
    qdq_unit_inputs_layout_ops: list[str] = Field(
        default_factory=list, description="With these ops listed, the DequantizeLinear of a feature map an op running "
                                          "on the CPU reads joins that op's node unit unless the tensor comes from "
                                          "one of these ops running on the accelerator through ops a layout "
                                          "transpose passes (ONNX Runtime's NHWC transpose then stands between).")
    fused_gelu_follows_input: bool = Field(False, description="A GELU written out (Div, Erf, Add, Mul, Mul), which the "
                                                              "compiler fuses into one layer, runs on the CPU when the "
                                                              "op writing its input does.")
    subgraph_reads_split_partitions: bool = Field(
        False, description="A control-flow op on the CPU whose subgraph reads a feature map the accelerator wrote, "
                           "and whose output the accelerator reads again, sends every node to the CPU (ONNX "
                           "Runtime rejects an EP's partition that an unsupported node splits through edges the "
                           "EP cannot see).")
    standalone_constant_dequantize: bool = Field(
        False, description="A DequantizeLinear of a constant that no reader takes into its QDQ node unit (the reader "
                           "also reads a float feature map) is an op of its own: per-tensor it runs on the "
                           "accelerator, per-channel on the CPU (ONNX Runtime's QNN EP).")
    input_less_groups: bool = Field(
        False, description="ONNX Runtime's grouping of the accelerator's nodes can leave a group that reads only "
                           "constants: one Q/DQ node alone is dropped to the CPU, a bigger group fails the session "
                           "(QNN: 'zero graph inputs').")
    float64_partition_io_fails: bool = Field(
        False, description="A float64 tensor between the accelerator and the CPU fails the compile (the QNN EP "
                           "claims a Cast to float64, then refuses its partition's float64 input or output).")
    fold_constants: bool = Field(False, description="The compiler folds nodes computed only from constants and "
                                                    "static shapes (Shape -> Cast -> Concat -> Reshape chains): "
                                                    "they run nowhere, so they are never CPU ops.")

    compile_blockers: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Op name (\"*\": every op) -> constraints whose failure on any node of "
                                          "that op makes the vendor compiler reject the whole graph (not a CPU "
                                          "fallback).")

    @field_validator("generic")
    @classmethod
    def _generic_known(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _check_rule_table(value, "generic")

    @field_validator("ops")
    @classmethod
    def _ops_known(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {op: _check_rule_table(rules, f"ops.{op}") for op, rules in value.items()}

    @field_validator("compile_blockers")
    @classmethod
    def _blockers_known(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {op: _check_rule_table(rules, f"compile_blockers.{op}") for op, rules in value.items()}


class CheckedArtifact(_Strict):
    """Which build artifact is deployed to this target, so the support check reads that one."""

    format: Format = Field(description="Graph format the vendor toolchain consumes.")
    precision: Literal["int8", "fp32"] = Field("int8", description="Precision of the deployed artifact.")
    unsigned_activations: bool = Field(
        False, description="The int8 ONNX deployed has unsigned activations: the build's QDQ model with every "
                           "activation zero point shifted by 128 (the same integers), for a runtime that runs some "
                           "node units only so (ONNX Runtime's QNN EP: HardSigmoid, LeakyRelu, Neg, CumSum).")


#: A layer's precision as the quantization ladder keeps it: int8, int16 activations × int8 weights, float.
LayerPrecision = Literal["int8", "a16w8", "float"]


class Quantization(_Strict):
    """Numeric formats the accelerator executes, and whether a layer it does not run may fall back to the CPU."""

    activations: list[NumericFormat] = Field(description="Feature-map formats it runs.")
    weights: list[NumericFormat] = Field(description="Weight formats it runs.")
    per_channel_weights: bool = Field(True, description="Per-channel weight scales are accepted.")
    symmetric_weights: bool = Field(False, description="Weights must be quantized symmetrically (zero point 0).")
    cpu_fallback: bool = Field(
        True, description="A layer the accelerator cannot run in its precision may run on the CPU beside it; "
                          "false: every layer must run on the accelerator (no float layer unless it runs fp16/fp32).")

    @property
    def layer_precisions(self) -> tuple[LayerPrecision, ...]:
        """What the quantization ladder may keep a layer in on this target: int8 where it runs int8 activations
        and weights, a16w8 where it runs int16 activations with int8 weights, float where it runs fp16 or fp32
        activations or a float layer may fall back to the CPU."""
        allowed: list[LayerPrecision] = []
        if "int8" in self.activations and "int8" in self.weights:
            allowed.append("int8")
        if "int16" in self.activations and "int8" in self.weights:
            allowed.append("a16w8")
        if self.cpu_fallback or {"fp16", "fp32"} & set(self.activations):
            allowed.append("float")
        return tuple(allowed)


class Memory(_Strict):
    """On-chip and external memory, in bytes, and external bandwidth."""

    sram_bytes: int | None = Field(None, ge=0, description="On-chip SRAM for feature maps (bytes).")
    dram_bytes: int | None = Field(None, ge=0, description="External memory available (bytes).")
    bandwidth_gb_s: float | None = Field(None, ge=0, description="External memory bandwidth (GB/s).")


class Compute(_Strict):
    """Peak throughput and clock."""

    int8_tops: float | None = Field(None, ge=0, description="Peak int8 tera-operations per second.")
    fp16_tflops: float | None = Field(None, ge=0, description="Peak fp16 tera-FLOPS.")
    clock_mhz: float | None = Field(None, ge=0, description="Accelerator clock (MHz).")
    macs_per_cycle: int | None = Field(None, ge=0, description="Int8 MACs per clock cycle.")


class Requirements(_Strict):
    """What a build must show, beyond accuracy, for this target's verdict to be a pass.

    Unset values take the device class's default (:meth:`TargetProfile.required`): an NPU must run
    at least half of the model's MACs on its accelerator; a profile naming a ``vendor_tool`` must
    compile with it where the tool is installed.
    """

    min_accelerator_mac_share: float | None = Field(
        None, ge=0.0, le=1.0, description="Smallest share of the model's MACs on the accelerator (0..1); "
                                          "unset: 0.5 for an NPU, none otherwise.")
    max_cpu_ops: int | None = Field(None, ge=0, description="Most nodes left on the CPU (fallback ops); unset: any.")
    max_partitions: int | None = Field(
        None, ge=1, description="Most accelerator subgraphs (each adds a CPU/accelerator hand-over); unset: any.")
    must_compile: bool | None = Field(
        None, description="The vendor compiler must compile the graph where it is installed; unset: true when "
                          "the profile names a vendor_tool.")
    must_fit_sram: bool = Field(False, description="Peak activations must fit the on-chip SRAM (memory.sram_bytes).")


#: Share of MACs an NPU must run on its accelerator when its profile does not say (0..1).
NPU_MIN_MAC_SHARE = 0.5


class TargetProfile(_Strict):
    """One device class, as declared in ``targets/<name>.toml`` (after ``inherit`` is resolved)."""

    name: str = Field(description="Target id, equal to the file's stem.")
    description: str = Field(description="One line for `edgepipe targets list`.")
    device_class: Literal["cpu", "gpu", "npu"] = Field(description="What kind of processor runs the model.")
    sources: list[str] = Field(default_factory=list, description="Public documents the facts come from.")
    deploy_formats: list[Format] = Field(
        default_factory=lambda: list[Format](["onnx", "tflite"]), description="Artifact formats this target deploys.")
    abstract: bool = Field(False, description="A family base for `inherit`, not a target to build for.")
    checked_artifact: CheckedArtifact | None = Field(
        None, description="The artifact the support check reads; None: the first deploy format, int8.")
    partition: Literal["any", "prefix"] = Field(
        "any", description="'any': every supported subgraph runs on the accelerator; 'prefix': only the ops "
                           "before the first unsupported one do (Edge TPU compiler).")
    vendor_tool: str | None = Field(None, description="Vendor toolchain `edgepipe check --verify` compares with.")
    quantization: Quantization | None = None
    memory: Memory = Memory()
    compute: Compute = Compute()
    onnx: OpTable | None = Field(None, description="Accelerator ops for ONNX graphs.")
    tflite: OpTable | None = Field(None, description="Accelerator ops for TFLite graphs.")
    performance: PerformanceSpec | None = None
    requirements: Requirements = Field(Requirements(), description="What a pass needs beyond accuracy.")

    def required(self) -> Requirements:
        """:attr:`requirements` with the device class's defaults filled in."""
        share = self.requirements.min_accelerator_mac_share
        if share is None and self.device_class == "npu":
            share = NPU_MIN_MAC_SHARE
        must_compile = self.requirements.must_compile
        if must_compile is None:
            must_compile = self.vendor_tool is not None
        return self.requirements.model_copy(update={"min_accelerator_mac_share": share,
                                                    "must_compile": must_compile})

    def op_table(self, fmt: Format) -> OpTable | None:
        """The op table for graphs of format ``fmt``, or None when this target does not take that format."""
        return self.onnx if fmt == "onnx" else self.tflite

    @property
    def artifact(self) -> CheckedArtifact:
        """The deployed artifact the support check reads."""
        return self.checked_artifact or CheckedArtifact(format=self.deploy_formats[0], precision="int8")
