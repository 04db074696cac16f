"""What must hold for any build of any zoo model, read from its reports through the typed report model.

Shared by the zoo tests (tests/realmodels/test_realzoo.py) and the benchmark (benchmarks/realzoo.py):

- ``evaluated_int8``: the int8 artifacts of a target's deploy formats that were evaluated
  (a top-1 drop, or a label-free comparison with the float model); a model shipped already int8
  with no float model to compare with has none (running is not fidelity);
- ``unbacked_pass``: a target whose verdict is pass with no such artifact;
- ``names_tool_and_fix``: a failure message that says which tool failed and what to do next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from edgepipe.report.schema import BuildReport
from edgepipe.targets import load_profile

#: Words that name the third-party tool (or the edgepipe step: data, config) behind a failure.
TOOLS = ("onnxruntime", "onnx runtime", "onnx2tf", "ai-edge-quantizer", "ai_edge_quantizer", "litert", "tflite",
         "tensorflow", "vela", "qnn", "rknn", "onnx", "quantiz", "converter", "calibration", "data",
         "config", "input_shapes", "preprocess")
#: Words that announce a next step the user can take.
NEXT_STEP = re.compile(r"\b(set|give|use|add|remove|fix|check|try|save|put|pass|install|run|drop|lower|raise|"
                       r"rename|replace|convert|export|re-?export|quantize|keep|see)\b", re.IGNORECASE)


@dataclass(frozen=True)
class TargetResult:
    """One target of one build: its typed report (None when the build wrote none)."""

    target: str
    report: BuildReport | None


def read_reports(root: Path, model: str, targets: list[str]) -> list[TargetResult]:
    """``root/<model>/<target>/report.json`` of each target, parsed into :class:`BuildReport`."""
    out = []
    for target in targets:
        path = root / model / target / "report.json"
        out.append(TargetResult(target, BuildReport.model_validate_json(path.read_text()) if path.is_file() else None))
    return out


def _label_free_artifacts(report: BuildReport) -> set[str]:
    label_free = report.accuracy.label_free if report.accuracy else None
    return {c.artifact for c in label_free.comparisons if c.outputs} if label_free else set()


def evaluated_int8(report: BuildReport) -> list[str]:
    """The int8 (or mixed) artifacts of the target's deploy formats whose fidelity was measured (see module doc)."""
    formats = set(load_profile(report.target).deploy_formats)
    int8 = [a for a in report.artifacts if a.precision in ("int8", "mixed") and a.format in formats]
    dropped = set(report.accuracy.drop_points) if report.accuracy else set()
    compared = _label_free_artifacts(report)
    out = []
    for artifact in int8:
        stem = artifact.path
        if stem in compared or stem in dropped or artifact.format in dropped:
            out.append(stem)
    return out


def unbacked_pass(result: TargetResult) -> bool:
    """True when the target passed without an evaluated int8 artifact for it."""
    return result.report is not None and result.report.verdict == "pass" and not evaluated_int8(result.report)


def names_tool_and_fix(message: str) -> bool:
    """True when ``message`` names a tool (or edgepipe step) and suggests a next step.

    File paths are left out first: ``model.onnx`` in a path does not name ONNX Runtime.
    """
    message = message.removeprefix("edgepipe: error: ")
    lower = " ".join(word for word in message.lower().split() if "/" not in word and "." not in word.strip(".,:;()"))
    return any(tool in lower for tool in TOOLS) and bool(NEXT_STEP.search(message))


def fidelity(report: BuildReport) -> dict[str, str]:
    """Per int8 artifact: the top-1 drop (labelled) or the worst output cosine / SQNR (label-free)."""
    out: dict[str, str] = {}
    accuracy = report.accuracy
    if accuracy is not None:
        for name, drop in accuracy.drop_points.items():
            out[name] = f"top-1 drop {drop:+.2f} pt"
        if accuracy.label_free is not None:
            for comp in accuracy.label_free.comparisons:
                if comp.outputs and comp.artifact not in out and "int8" in comp.artifact:
                    cos = min(o.cosine for o in comp.outputs)
                    sqnr = min(o.sqnr_db for o in comp.outputs)
                    out[comp.artifact] = f"cos {cos:.4f} / {sqnr:.1f} dB"
    return out


def ladder(report: BuildReport) -> str:
    """The ladder's steps and outcomes, e.g. ``ptq:missed → calibration:met (final calibration)``."""
    quant = report.quantization
    if quant is None:
        return "–"
    steps = " → ".join(f"{s.step}:{s.status}" for s in quant.steps) or "none"
    return f"{steps} (final {quant.final_step or '–'})"


def ladder_cost(report: BuildReport) -> list[str]:
    """The price of what the ladder kept, one cell each: final step, layers kept above int8 per format, their
    cost, int8 sizes (KiB), the ladder's wall time (s), and a16w8 TFLite when that rung ran."""
    quant = report.quantization
    final = next((s for s in quant.steps if s.step == quant.final_step), None) if quant else None
    kept = ", ".join(f"{fmt} {len(layers)}" for fmt, layers in final.kept_layers.items()) if final else ""
    sizes = ", ".join(f"{a.path} {a.size_bytes / 1024:.0f}" for a in report.artifacts if a.precision != "fp32")
    rung = next((s.detail for s in report.stages if s.name == "quantize-tflite-a16w8"), "")
    seconds = sum(s.seconds for s in quant.steps) if quant else 0.0
    return [final.step if final else "–", kept or "–", (final.cost if final else "") or "–", sizes or "–",
            f"{seconds:.0f}" if quant else "–", rung or "–"]
