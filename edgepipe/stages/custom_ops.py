"""Per-target stage ``custom-ops``: the custom or unknown ops of the model, and whether this target can run them.

Third-party files carry ops outside the standard op sets: MediaPipe's TFLite models use
``Convolution2DTransposeBias``; ONNX exports may use ``com.microsoft`` contrib ops. A host
runtime may still run them (LiteRT registers some MediaPipe ops), but an NPU compiler only
takes what its op table lists. The stage reads the model without running it, so a file
with ops nobody can run is reported, never crashed on.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from edgepipe.report.custom_ops import CustomOpInfo, CustomOpsReport
from edgepipe.stages.context import TargetContext
from edgepipe.targets.profile import Format

STANDARD_ONNX_DOMAINS = ("", "ai.onnx", "ai.onnx.ml")


def tflite_custom_ops(path: Path) -> Counter[tuple[str, str]]:
    """``(domain '', custom code) → node count`` of a TFLite file."""
    from ai_edge_litert import schema_py_generated as schema  # heavy optional dependency (LiteRT)
    from ai_edge_litert.tools import flatbuffer_utils  # heavy optional dependency (LiteRT)

    model = flatbuffer_utils.read_model(str(path))
    names = {}
    for index, code in enumerate(model.operatorCodes):
        if max(code.builtinCode, code.deprecatedBuiltinCode) == schema.BuiltinOperator.CUSTOM:
            raw = code.customCode
            names[index] = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
    return Counter(("", names[op.opcodeIndex]) for sg in model.subgraphs for op in sg.operators
                   if op.opcodeIndex in names)


def onnx_custom_ops(model: object) -> Counter[tuple[str, str]]:
    """``(domain, op type) → node count`` of the nodes outside the standard ONNX domains (subgraphs included)."""
    found: Counter[tuple[str, str]] = Counter()

    def walk(graph: object) -> None:
        for node in graph.node:  # type: ignore[attr-defined]
            if node.domain not in STANDARD_ONNX_DOMAINS:
                found[(node.domain, node.op_type)] += 1
            for attribute in node.attribute:
                if attribute.HasField("g"):
                    walk(attribute.g)
                for sub in attribute.graphs:
                    walk(sub)

    walk(model.graph)  # type: ignore[attr-defined]
    return found


def custom_ops_stage(context: TargetContext) -> tuple[str, CustomOpsReport]:
    """``custom_ops``: the source model's custom ops, whether the host ran them and whether this target lists them."""
    model = context.inputs.model
    fmt: Format = "onnx" if model.format == "onnx" else "tflite"
    if model.format == "tflite":
        counts = tflite_custom_ops(model.path)
    elif model.format == "onnx":
        counts = onnx_custom_ops(model.handle)
    else:
        return "custom_ops", CustomOpsReport(source=model.path.name, ops=[], detail="Keras/SavedModel: none")
    ran = any(a.format == fmt for a in context.artifacts)
    table = context.target.op_table(fmt)
    ops = [CustomOpInfo(name=name, format=fmt, domain=domain, count=count, runs_on_host=ran,
                        on_accelerator=table is not None and (table.all_ops or name in table.ops))
           for (domain, name), count in sorted(counts.items())]
    missing = [op.name for op in ops if not op.on_accelerator]
    detail = ("no custom ops" if not ops else
              f"{context.target.name} cannot run {', '.join(missing)} on its accelerator" if missing else
              f"{context.target.name} lists every custom op")
    return "custom_ops", CustomOpsReport(source=model.path.name, ops=ops, detail=detail)
