"""A target's verdict, from evidence: a pass needs every requirement met, nothing is assumed.

Each requirement is a named predicate over what the build found; its docstring is the rule.
It returns an :class:`~edgepipe.report.verdict.Evidence` (``met``, ``failed``, ``not proven``,
``not gated`` or ``not checked``). The verdict is ``fail`` when any evidence failed,
``not proven`` when any is missing, else ``pass``. Both non-pass verdicts exit 2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from edgepipe.report.schema import AccuracyInfo, ArtifactInfo
from edgepipe.report.verdict import Evidence, ToolFailure, Verdict
from edgepipe.support.report import SupportReport, Verification
from edgepipe.targets import TargetProfile

INT8_PRECISIONS = ("int8", "mixed")
#: Stages that make artifacts: a tool failing there can leave a target without its int8 artifact.
ARTIFACT_STAGES = ("export", "quantize", "quantize-tflite")


@dataclass(frozen=True)
class VerdictInputs:
    """What one target's verdict is decided on."""

    target: TargetProfile
    artifacts: list[ArtifactInfo]
    accuracy: AccuracyInfo | None
    support: SupportReport | None = None
    failures: list[ToolFailure] = field(default_factory=list)
    accuracy_gate: bool = True
    source_is_int8: bool = False
    #: The format of the model the user gave (``onnx``, ``tflite``, ``keras``, ...); '' when unknown.
    source_format: str = ""

    def deployed_int8(self) -> list[ArtifactInfo]:
        """The int8 artifacts this target deploys: its checked format first, then its other deploy formats."""
        formats = list(dict.fromkeys([self.target.artifact.format, *self.target.deploy_formats]))
        return [a for fmt in formats for a in self.artifacts if a.format == fmt and a.precision in INT8_PRECISIONS]

    def failures_of(self, formats: Sequence[str]) -> str:
        """The tool failures that cost this target an artifact of ``formats``, as one clause for a reason."""
        chosen = [f for f in self.failures if f.stage in ARTIFACT_STAGES
                  and (f.artifact is None or f.artifact.rsplit(".", 1)[-1] in formats)]
        shown = dict.fromkeys(f"{f.tool} failed in {f.stage}: {f.message} (next step: {f.next_step})"
                              for f in chosen)
        return "; ".join(list(shown)[:2])


Requirement = Callable[[VerdictInputs], Evidence | None]
#: How a met vendor compile names what it needed beyond the tool's defaults; such a detail is in a pass's reason.
WORKAROUND = " only with "

#: How to prove a model that came quantized, with no float model to compare it with.
PROVE_SHIPPED_INT8 = ("give labelled evaluation data and accuracy.min_top1 (the top-1 it must reach), or build the "
                      "float model it was quantized from, or set accuracy.gate = false to deploy it unchecked")
#: What a user can do when quantization loses too much fidelity (the report's ladder trail says what was tried).
FIDELITY_NEXT_STEP = ("next step: see the quantization ladder in the report; allow a16w8 or float in "
                      "quantization.precisions, raise quantization.mixed_budget, or give data.train for QAT")


def int8_artifact(inputs: VerdictInputs) -> Evidence:
    """The target's deployable int8 artifact exists (int8 in one of the formats the target deploys)."""
    found = inputs.deployed_int8()
    if found:
        return Evidence(requirement="int8 artifact", outcome="met", detail=", ".join(a.path for a in found))
    formats = list(dict.fromkeys([inputs.target.artifact.format, *inputs.target.deploy_formats]))
    why = inputs.failures_of(formats) or _nothing_made(inputs, formats)
    return Evidence(requirement="int8 artifact", outcome="not proven",
                    detail=f"no int8 {'/'.join(formats)} artifact ({why})")


def _nothing_made(inputs: VerdictInputs, formats: Sequence[str]) -> str:
    """Why no int8 artifact exists when no tool failed: no data, or a source format that converts to none of them."""
    if any(a.format in formats for a in inputs.artifacts) or not inputs.source_format:
        return "nothing made one: the stages table says why, e.g. no --calib data"
    return (f"edgepipe makes no {'/'.join(formats)} model from a {inputs.source_format} file: give the model it was "
            "exported from (.onnx, .keras or SavedModel) to build this target")


def _label_free(inputs: VerdictInputs, accuracy: AccuracyInfo, found: list[ArtifactInfo]) -> Evidence:
    assert accuracy.label_free is not None
    by_artifact = {c.artifact: c for c in accuracy.label_free.comparisons}
    failed: dict[str, list[str]] = {}
    passed: dict[str, float] = {}
    unproven, shipped_int8 = [], []
    for artifact in found:
        comparison = by_artifact.get(artifact.path)
        if comparison is None:
            evaluated = not any(f.artifact == artifact.path and f.stage == "evaluate" for f in inputs.failures)
            if inputs.source_is_int8 and evaluated:
                shipped_int8.append(artifact.path)  # the user's own int8 model: it ran; no float twin to compare
            else:
                unproven.append(f"{artifact.path} was not compared with a float reference")
            continue
        if comparison.failures:
            failed[artifact.path] = list(comparison.failures)
        else:
            passed[artifact.path] = min((o.cosine for o in comparison.outputs), default=1.0)
    others = "".join(f"; {path} is not deployable ({lines[0]})" for path, lines in failed.items())
    if passed and not failed:
        return Evidence(requirement="accuracy", outcome="met",
                        detail=f"label-free on {accuracy.label_free.samples} samples: every threshold met "
                               f"(lowest output cosine {min(passed.values()):.4f})")
    if passed:
        best = max(passed, key=lambda path: passed[path])
        return Evidence(requirement="accuracy", outcome="met",
                        detail=f"label-free on {accuracy.label_free.samples} samples: {', '.join(passed)} met every "
                               f"threshold (lowest output cosine {passed[best]:.4f} for {best}){others}")
    if failed:
        lines = [f"{path}: {line}" for path, found_lines in failed.items() for line in found_lines]
        return Evidence(requirement="accuracy", outcome="failed",
                        detail="label-free check failed (" + "; ".join(lines[:3]) + f"; {FIDELITY_NEXT_STEP})")
    if unproven:
        return Evidence(requirement="accuracy", outcome="not proven", detail="; ".join(unproven))
    return Evidence(requirement="accuracy", outcome="not proven",
                    detail=f"the model came quantized and there is no float model to compare it with (it ran on "
                           f"{accuracy.label_free.samples} {accuracy.label_free.data} samples, which proves nothing "
                           f"about its fidelity): {PROVE_SHIPPED_INT8}")


def accuracy_met(inputs: VerdictInputs) -> Evidence:
    """A deployable int8 artifact met the accuracy threshold on evaluation data: the top-1 drop with labels,
    the label-free thresholds (cosine, SQNR, ...) without; unless the user set ``accuracy.gate = false``.

    One artifact the target can run that meets it is what a deployment needs: the evidence names the
    artifacts that met it, and every other int8 artifact of the target's formats as not deployable, with why
    (host-cpu offers ONNX and TFLite forms; only one is shipped).
    """
    accuracy, found = inputs.accuracy, inputs.deployed_int8()
    if not inputs.accuracy_gate:
        return Evidence(requirement="accuracy", outcome="not gated",
                        detail="accuracy gating turned off (accuracy.gate = false): measured, not gated")
    if not found:
        return Evidence(requirement="accuracy", outcome="not proven", detail="no int8 artifact to evaluate")
    if accuracy is None:
        return Evidence(requirement="accuracy", outcome="not proven",
                        detail="no evaluation data: give --eval (labels optional) or --calib")
    if accuracy.label_free is not None and accuracy.label_free.gated:
        return _label_free(inputs, accuracy, found)
    drops = {a.format: accuracy.drop_points.get(a.format) for a in found}
    limit = accuracy.threshold_points + 1e-9
    within = {fmt: drop for fmt, drop in drops.items() if drop is not None and drop <= limit}
    failing = {fmt: drop for fmt, drop in drops.items() if drop is not None and drop > limit}
    if within:
        others = "".join(f"; int8 {fmt} is not deployable (drop {drop:.2f} points)" for fmt, drop in failing.items())
        formats = f" ({', '.join(within)})" if failing else ""
        return Evidence(requirement="accuracy", outcome="met",
                        detail=f"largest int8 drop {max(within.values()):.2f} points ≤ {accuracy.threshold_points:g}"
                               f"{formats}{others}")
    if failing:
        worst = ", ".join(f"{fmt} {drop:.2f}" for fmt, drop in failing.items())
        return Evidence(requirement="accuracy", outcome="failed",
                        detail=f"int8 accuracy drop above {accuracy.threshold_points:g} points ({worst}; "
                               f"{FIDELITY_NEXT_STEP})")
    missing = [fmt for fmt, drop in drops.items() if drop is None]
    if inputs.source_is_int8 and accuracy.float is None:
        return _shipped_int8_top1(accuracy, found)
    return Evidence(requirement="accuracy", outcome="not proven", detail=f"int8 {', '.join(missing)} was not evaluated")


def _shipped_int8_top1(accuracy: AccuracyInfo, found: list[ArtifactInfo]) -> Evidence:
    """A model that came quantized, with labels and no float model: its top-1 against ``accuracy.min_top1``."""
    scores = {a.format: accuracy.int8[a.format] for a in found if a.format in accuracy.int8}
    if not scores or accuracy.min_top1 is None:
        return Evidence(requirement="accuracy", outcome="not proven",
                        detail=f"the model came quantized: its top-1 was measured but there is no float model to "
                               f"measure a drop against: {PROVE_SHIPPED_INT8}")
    best = max(scores, key=lambda fmt: scores[fmt])
    outcome = "met" if scores[best] >= accuracy.min_top1 else "failed"
    return Evidence(requirement="accuracy", outcome=outcome,
                    detail=f"the model came quantized: int8 {best} top-1 {100 * scores[best]:.2f}% "
                           f"{'>=' if outcome == 'met' else '<'} accuracy.min_top1 {100 * accuracy.min_top1:g}% "
                           f"on {accuracy.samples} labelled samples")


def compatibility(inputs: VerdictInputs) -> Evidence:
    """The placement of the deployed artifact meets the profile's ``requirements``: accelerator MAC share,
    CPU fallback ops, accelerator partitions, and (when required) peak activations within SRAM."""
    required, support = inputs.target.required(), inputs.support
    if support is None:
        if inputs.target.device_class in ("cpu", "gpu"):
            return Evidence(requirement="compatibility", outcome="met",
                            detail=f"{inputs.target.device_class} target: every op runs on it")
        return Evidence(requirement="compatibility", outcome="not proven",
                        detail="no support check ran (no deployed artifact to place)")
    placed = next((a for a in inputs.artifacts if a.path == PurePath(support.artifact).name), None)
    if (inputs.target.artifact.precision == "int8" and not inputs.deployed_int8() and placed is not None
            and placed.precision not in INT8_PRECISIONS):  # the int8 artifact failed: the float twin was placed
        return Evidence(requirement="compatibility", outcome="not proven",
                        detail=f"only the float {placed.path} could be placed, not what the target runs (see the int8 "
                               f"artifact evidence for why there is none); its placement is in the support table")
    cpu_ops = sum(support.cpu_ops.values())
    if support.compile_blockers:
        first = support.compile_blockers[0]
        return Evidence(requirement="compatibility", outcome="failed",
                        detail=f"the target's compiler cannot compile this graph ({len(support.compile_blockers)} "
                               f"node(s) it rejects; {first.named()}; the rule: "
                               f"{first.rule} next step: change those nodes in the model)")
    broken = []
    if required.min_accelerator_mac_share is not None and support.mac_share < required.min_accelerator_mac_share:
        broken.append(f"{100 * support.mac_share:.1f}% of MACs on the accelerator "
                      f"< {100 * required.min_accelerator_mac_share:g}% required")
    if required.max_cpu_ops is not None and cpu_ops > required.max_cpu_ops:
        broken.append(f"{cpu_ops} ops on the CPU > {required.max_cpu_ops} allowed")
    if required.max_partitions is not None and support.partitions > required.max_partitions:
        broken.append(f"{support.partitions} accelerator partitions > {required.max_partitions} allowed")
    if required.must_fit_sram and support.fits_sram is False:
        broken.append(f"peak activations {support.peak_activation_bytes:,} B do not fit the SRAM")
    if broken:
        return Evidence(requirement="compatibility", outcome="failed",
                        detail="; ".join(broken) + _placement_fix(support))
    return Evidence(requirement="compatibility", outcome="met",
                    detail=f"{100 * support.mac_share:.1f}% of MACs on the accelerator, {cpu_ops} CPU op(s), "
                           f"{support.partitions} partition(s) ({support.artifact})")


def _placement_fix(support: SupportReport) -> str:
    """What to do about a placement that misses the profile's requirements: the ops the CPU runs, and where to act."""
    ops = ", ".join(f"{op} x{count}" for op, count in sorted(support.cpu_ops.items(), key=lambda kv: -kv[1])[:4])
    return (f" (the support check of {support.artifact} puts {ops or 'no op'} on the CPU; next step: see the "
            "report's support table, replace those ops in the model or relax [requirements] in the target "
            "profile config)")


def _install_hint(checks: list[Verification]) -> str:
    details = [c.detail for c in checks if c.detail]
    return details[0] if details else "install the target's vendor toolchain (see `edgepipe targets show`)"


def vendor_compile(inputs: VerdictInputs) -> Evidence | None:
    """Where the profile requires it (``must_compile``) and the vendor tool is installed, it compiled the graph;
    a tool that broke leaves the verdict not proven; a missing tool is noted, not required."""
    if not inputs.target.required().must_compile:
        return None
    checks = inputs.support.verification if inputs.support is not None else []
    tool = inputs.target.vendor_tool or "the vendor compiler"
    rejected = [c for c in checks if c.status == "compile_failed"]
    if rejected:
        return Evidence(requirement="vendor compile", outcome="failed",
                        detail=f"{rejected[0].tool} could not compile the graph: {rejected[0].detail}")
    broken = [c for c in checks if c.status == "failed"]
    if broken:
        return Evidence(requirement="vendor compile", outcome="not proven",
                        detail=f"{broken[0].tool} failed: {broken[0].detail}")
    ran = [c for c in checks if c.status == "ran"]
    if ran:
        needed = ran[0].extra.get("compiled_with")  # e.g. a toolkit rule disabled on the toolkit's own advice
        return Evidence(requirement="vendor compile", outcome="met",
                        detail=f"{tool} compiled the graph" + (f"{WORKAROUND}{needed}" if needed else ""))
    return Evidence(requirement="vendor compile", outcome="not checked",
                    detail=f"vendor compile not checked ({tool} did not run here): {_install_hint(checks)}")


#: Every requirement, in the order reports show them.
REQUIREMENTS: list[tuple[str, Requirement]] = [
    ("int8 artifact", int8_artifact),
    ("accuracy", accuracy_met),
    ("compatibility", compatibility),
    ("vendor compile", vendor_compile),
]


def decide(inputs: VerdictInputs) -> tuple[Verdict, str, list[Evidence]]:
    """The verdict, its one-line reason, and the evidence it rests on."""
    evidence = [e for _, requirement in REQUIREMENTS if (e := requirement(inputs)) is not None]
    failed = [e for e in evidence if e.outcome == "failed"]
    unproven = [e for e in evidence if e.outcome == "not proven"]
    notes = [e.detail for e in evidence if e.outcome in ("not gated", "not checked")]
    if failed:
        return "fail", "; ".join(f"{e.requirement}: {e.detail}" for e in failed), evidence
    if unproven:
        return "not proven", "; ".join(f"{e.requirement}: {e.detail}" for e in unproven), evidence
    shown = [e.detail for e in evidence
             if e.outcome == "met" and (e.requirement == "accuracy" or WORKAROUND in e.detail)]
    return "pass", "; ".join(shown + notes) or "every requirement met", evidence
