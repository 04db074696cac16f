"""The build driver: (cache lookup) → load → export → legalize → quantize → evaluate → latency → per target: report.

Each stage (one module in ``edgepipe.stages``) hands a typed result to the next;
invariants are checked between them (every artifact loads and keeps the
model's shape). Work the targets share runs once: export once per build,
quantization (with evaluation and host latency) once per group of targets with
the same quantization requirements and the same legalized float model; then each target gets its own folder,
per-target sections and report. Targets whose
content-addressed cache entry exists are restored instead (without importing
TensorFlow). Inputs are validated before anything is written; outputs are
staged and renamed into place per target, so a failed build never leaves a
folder that looks complete. Last, a summary across targets
(``summary.json``, ``summary.md``, ``report.html``) goes beside the target folders.
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from edgepipe.artifacts import Artifact
from edgepipe.cache import BuildCache, CacheKey, digest_of, target_keys
from edgepipe.config import BuildConfig
from edgepipe.gate import GateResult, apply_baseline, load_baseline
from edgepipe.health import check_artifact
from edgepipe.legalize import legalizable
from edgepipe.output import StagingFolder
from edgepipe.quantize.report import QuantizationReport
from edgepipe.report import BuildReport
from edgepipe.report.summary import BuildSummary, summarise, write_summary
from edgepipe.report.writer import REPORT_JSON, write_report
from edgepipe.stage_log import StageLog
from edgepipe.stages.evaluate import accuracy_for, evaluate_stage
from edgepipe.stages.export import export_stage
from edgepipe.stages.host_forms import host_forms_stage, host_measurement, needs_host_forms
from edgepipe.stages.inputs import BuildInputs, validate_inputs
from edgepipe.stages.latency import latency_stage
from edgepipe.stages.legalize import QuantizationGroup, legalize_stage
from edgepipe.stages.per_target import TARGET_STAGES, TargetContext, run_target_stages
from edgepipe.stages.quantize import quantize_stage
from edgepipe.stages.report import make_report
from edgepipe.stages.unsigned_form import needs_unsigned_form, target_artifacts, unsigned_form_stage
from edgepipe.targets import TargetProfile, load_profiles

Listener = Callable[[str, str], None]
REPORT_HTML = "report.html"
SEED = 0


@dataclass
class BuildResult:
    """Where each target's outputs went, its report, whether it came from the cache, and the summary."""

    root: Path
    reports: dict[str, BuildReport] = field(default_factory=dict)
    folders: dict[str, Path] = field(default_factory=dict)
    cached: dict[str, bool] = field(default_factory=dict)
    summary: BuildSummary | None = None
    #: The baseline gate's findings, when ``config.gate.baseline`` is set.
    gate: GateResult | None = None

    @property
    def passed(self) -> bool:
        """Every target passed and, with a baseline, nothing regressed."""
        return all(r.verdict == "pass" for r in self.reports.values()) and (self.gate is None or self.gate.passed)


def seed_everything(seed: int = SEED) -> None:
    """Seed every random source a build may touch, so the same inputs give byte-identical artifacts."""
    os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    random.seed(seed)
    np.random.seed(seed)


def resolve_targets(config: BuildConfig) -> tuple[TargetProfile, ...]:
    """The target profiles of ``config``, each once, in the order given (a user error for an unknown one)."""
    return load_profiles(config.targets, config.targets_dir)


def model_folder(config: BuildConfig) -> Path:
    """``<output>/<model name>``: where the target folders and the summary go."""
    name = config.model.name if config.model.is_dir() else config.model.stem
    if str(config.model).startswith("python:"):  # a PyTorch factory: named after the function
        name = config.model_name
    return config.output / name


def planned_stage_count(targets: int, groups: int = 1, host_groups: int = 0, legalized: int = 0,
                        unsigned_groups: int = 0) -> int:
    """How many stages a build of ``targets`` targets in ``groups`` quantization groups reports to its listener
    (``host_groups`` of them with a host-cpu target add the host int8 forms, ``unsigned_groups`` the uint8 form
    without one, ``legalized`` targets a legalization; a group whose targets get different rewrites quantizes once
    more per extra model, not counted here)."""
    return 2 + 3 * groups + host_groups + unsigned_groups + legalized + targets * (1 + len(TARGET_STAGES))


def produce_artifacts(inputs: BuildInputs, scratch: Path, stages: StageLog, *, quantize: bool = True,
                      config: BuildConfig | None = None) -> tuple[list[Artifact], QuantizationReport | None]:
    """Export (and quantize) into ``scratch/artifacts``, checking every artifact loads and keeps its shape.

    With ``config`` and labelled evaluation data, quantization is the fallback ladder; its trail comes back too.
    """
    folder = scratch / "artifacts"
    folder.mkdir()
    floats, graph = export_stage(inputs, folder, scratch, stages)
    for artifact in floats:
        check_artifact(artifact, inputs.model.signature)
    if not quantize:
        return floats, None
    quantized, ladder = quantize_stage(inputs, floats, graph, folder, scratch, stages, config)
    for artifact in quantized:
        check_artifact(artifact, inputs.model.signature)
    return floats + quantized, ladder


def run_artifacts_only(config: BuildConfig, out: Path, *, quantize: bool,
                       listener: Listener | None = None, stages: StageLog | None = None) -> list[Path]:
    """``edgepipe export`` / ``edgepipe quantize``: only the artifacts, staged into ``out`` atomically; ``stages``
    (when given) keeps what each stage did, so the caller can say why an artifact is missing."""
    seed_everything()
    stages = stages if stages is not None else StageLog(listener)
    inputs = validate_inputs(config, stages)
    with StagingFolder(out) as staged:
        assert staged.path is not None
        with StagingFolder(out.parent / f".{out.name}.scratch") as scratch:
            assert scratch.path is not None
            artifacts, _ = produce_artifacts(inputs, scratch.path, stages, quantize=quantize)
            for artifact in artifacts:
                shutil.copyfile(artifact.path, staged.path / artifact.key)
        staged.commit()
    return [out / a.key for a in artifacts]


def quantization_requirements(config: BuildConfig, target: TargetProfile) -> object:
    """What quantization must respect for ``target`` (precisions, granularities it runs): a hashable value.

    Targets with equal requirements share one quantization run and get the same
    artifacts; a target's outputs never depend on which other targets the build has.
    """
    from edgepipe.quantize.settings import ladder_settings

    return ladder_settings(config, (target,))


def quantization_groups(config: BuildConfig, targets: tuple[TargetProfile, ...]) -> list[tuple[TargetProfile, ...]]:
    groups: dict[object, list[TargetProfile]] = {}
    for target in targets:
        groups.setdefault(quantization_requirements(config, target), []).append(target)
    return [tuple(group) for group in groups.values()]


def _build_group(config: BuildConfig, inputs: BuildInputs, group: QuantizationGroup, scratch: Path, root: Path,
                 stages: StageLog, result: BuildResult) -> None:
    """Quantize, evaluate and time once for ``group.targets`` (equal requirements, the same float artifacts), then
    each target's folder."""
    inputs = replace(inputs, targets=group.targets)
    folder = scratch / "artifacts"
    folder.mkdir()
    quantized, ladder = quantize_stage(inputs, group.floats, group.graph, folder, scratch, stages, config)
    for artifact in quantized:
        check_artifact(artifact, inputs.model.signature)
    artifacts = group.floats + quantized
    forms, cosine = host_forms_stage(inputs, artifacts, folder, scratch, stages,
                                     config.accuracy.min_cosine if config.accuracy.gate else None)
    unsigned = unsigned_form_stage(group.targets, artifacts, forms, folder, stages)
    extra = forms + [f for f in unsigned if f not in forms]
    accuracy = evaluate_stage(inputs, artifacts, config.accuracy, stages, extra=extra)
    latency = latency_stage(inputs, artifacts + extra, config, stages)
    on_host = {a.key for a in artifacts + forms}  # host-cpu's files: not a uint8 form its host check left out
    measured = host_measurement(inputs, cosine, {k: v for k, v in latency.items() if k in on_host},
                                config.latency.threads, accuracy, artifacts + forms)
    for target in inputs.targets:
        with stages.stage(f"report:{target.name}"), StagingFolder(root / target.name) as staged:
            assert staged.path is not None
            mine = target_artifacts(target, artifacts, forms, unsigned)
            for artifact in mine:
                shutil.copyfile(artifact.path, staged.path / artifact.key)
            sections = run_target_stages(TargetContext(inputs, target, tuple(mine), staged.path, stages, measured))
            sections["quantization"] = ladder
            sections["legalization"] = group.legalization.get(target.name)
            timed = {a.key: latency[a.key] for a in mine if a.key in latency}
            report = make_report(inputs, target, mine, accuracy_for(accuracy, mine, target), timed, stages, sections)
            write_report(report, staged.path)
            result.folders[target.name] = staged.commit()
            result.reports[target.name] = report
            result.cached[target.name] = False


def _build_targets(config: BuildConfig, targets: tuple[TargetProfile, ...], root: Path, stages: StageLog,
                   result: BuildResult) -> None:
    """The full pipeline for ``targets``: export once, legalize per target, quantize once per group of equal
    requirements and equal legalized models."""
    names = [t.name for t in targets]
    inputs = validate_inputs(config.model_copy(update={"targets": names}), stages)
    with StagingFolder(root / ".scratch") as scratch:
        assert scratch.path is not None
        export_folder = scratch.path / "float"
        export_folder.mkdir()
        floats, graph = export_stage(inputs, export_folder, scratch.path, stages)
        for artifact in floats:
            check_artifact(artifact, inputs.model.signature)
        for index, targets_alike in enumerate(quantization_groups(config, inputs.targets)):
            groups = legalize_stage(replace(inputs, targets=targets_alike), floats, graph,
                                    scratch.path / f"legalize-{index}", stages, config.legalize)
            for number, group in enumerate(groups):
                for artifact in group.floats:
                    if artifact not in floats:  # a legalized float model: still the model's inputs and outputs
                        check_artifact(artifact, inputs.model.signature)
                work = scratch.path / f"group-{index}-{number}"
                work.mkdir()
                _build_group(config, inputs, group, work, root, stages, result)


def _restore_targets(cache: BuildCache, entries: dict[str, Path], root: Path, stages: StageLog,
                     result: BuildResult) -> None:
    for name, entry in entries.items():
        with stages.stage(f"cache:{name}", "restored from the build cache"):
            folder = cache.restore(entry, root / name)
        result.folders[name] = folder
        result.reports[name] = BuildReport.model_validate_json((folder / REPORT_JSON).read_text(encoding="utf-8"))
        result.cached[name] = True


def _write_overview(result: BuildResult, cache: BuildCache | None, keys: dict[str, CacheKey]) -> None:
    """``summary.json``/``summary.md`` always; ``report.html`` rendered, or restored when every target was."""
    result.summary = summarise(result.reports, result.cached,
                               {n: k.digest for n, k in keys.items() if result.cached.get(n)})
    write_summary(result.summary, result.root)
    html_key = None
    if cache is not None and len(keys) == len(result.reports):
        html_key = CacheKey("report.html", digest_of({"html": [keys[n].digest for n in result.reports]}), {})
        entry = cache.lookup(html_key)
        if entry is not None and (entry / REPORT_HTML).is_file():
            shutil.copyfile(entry / REPORT_HTML, result.root / REPORT_HTML)
            return
    from edgepipe.report.html import write_html

    path = write_html(list(result.reports.values()), result.root / REPORT_HTML)
    if cache is not None and html_key is not None:
        cache.store(html_key, [path])


def run_build(config: BuildConfig, listener: Listener | None = None, *,
              cache: BuildCache | None = None) -> BuildResult:
    """Build every target in ``config`` into ``<output>/<model>/<target>/`` and summarise them.

    With ``cache``, targets whose inputs are unchanged are restored from it and
    the others are built and stored in it. With ``config.gate.baseline``, the
    reports are compared with it (read first: a bad baseline fails before a long
    build) and ``result.gate`` holds the findings.
    """
    baseline = load_baseline(config.gate.baseline) if config.gate.baseline is not None else None
    seed_everything()
    stages = StageLog(listener)
    profiles = resolve_targets(config)
    root = model_folder(config)
    keys = target_keys(config, profiles) if cache is not None else {}
    entries = {name: entry for name, key in keys.items()
               if cache is not None and (entry := cache.lookup(key)) is not None}
    missing = tuple(p for p in profiles if p.name not in entries)
    if listener is not None and missing:
        groups = quantization_groups(config, missing)
        legalized = sum(legalizable(p, config.legalize) for p in missing)
        unsigned = sum(needs_unsigned_form(g) and not needs_host_forms(g) for g in groups)
        listener("plan", str(planned_stage_count(len(missing), len(groups), sum(map(needs_host_forms, groups)),
                                                 legalized, unsigned)))
    elif listener is not None:
        listener("plan", str(len(entries)))
    built = BuildResult(root=root)
    if missing:
        _build_targets(config, missing, root, stages, built)
        for profile in missing:
            if cache is not None and profile.name in keys:
                cache.store(keys[profile.name], sorted(built.folders[profile.name].iterdir()))
    if cache is not None:
        _restore_targets(cache, entries, root, stages, built)
    result = BuildResult(root=root)
    for profile in profiles:  # the order the user gave
        result.reports[profile.name] = built.reports[profile.name]
        result.folders[profile.name] = built.folders[profile.name]
        result.cached[profile.name] = built.cached[profile.name]
    _write_overview(result, cache, keys)
    if baseline is not None:
        result.gate = apply_baseline(result.reports, baseline, config.gate, result.root)
    return result
