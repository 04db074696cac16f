"""Stage: host latency of every artifact (host int8 forms included) in one measurement session."""

from __future__ import annotations

import numpy as np

from edgepipe.artifacts import Artifact
from edgepipe.config import BuildConfig
from edgepipe.containment import LITERT, ONNXRUNTIME, contained, runtime_of
from edgepipe.errors import ToolFailed
from edgepipe.latency.interleaved import LatencyResult, measure_session
from edgepipe.load.synthetic import synthetic_sample
from edgepipe.runtimes import open_runner
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs


def latency_stage(inputs: BuildInputs, artifacts: list[Artifact], config: BuildConfig,
                  stages: StageLog) -> dict[str, LatencyResult]:
    """Median host latency of every artifact on one real sample (ms), all timed in one interleaved run.

    Without data (e.g. a shipped full-int8 TFLite given alone) the model is still timed, on a synthetic sample.
    """
    data = inputs.evaluation or inputs.calibration
    sample = next(data.samples()) if data is not None else synthetic_sample(inputs.model.signature)
    on = "" if data is not None else ", on synthetic inputs (no data given)"
    settings = config.latency
    threads = settings.threads
    detail = (f"{settings.warmup} warm-up + {settings.runs} timed runs each, interleaved, "
              f"threads={threads if threads else 'runtime default'}{on}")
    try:
        with stages.stage("latency", detail), contained(ONNXRUNTIME), contained(LITERT):
            return measure_session({a.key: a.path for a in artifacts}, sample, warmup=settings.warmup,
                                   runs=settings.runs, threads=threads)
    except ToolFailed as failure:
        runnable = _runnable(artifacts, sample, stages)
        if len(runnable) == len(artifacts) or not runnable:
            stages.fail("latency", failure)
            return {}
    # an artifact its runtime refuses on this sample loses its timing only; the others are timed without it
    with stages.stage("latency", f"{detail}; without {len(artifacts) - len(runnable)} artifact(s) their runtime "
                                 "refused"), contained(ONNXRUNTIME), contained(LITERT):
        return measure_session({a.key: a.path for a in runnable}, sample, warmup=settings.warmup, runs=settings.runs,
                               threads=threads)


def _runnable(artifacts: list[Artifact], sample: list[np.ndarray], stages: StageLog) -> list[Artifact]:
    """The artifacts whose runtime runs ``sample``; each refusal recorded with its artifact."""
    kept = []
    for artifact in artifacts:
        try:
            with contained(runtime_of(artifact.format)), open_runner(artifact.path) as runner:
                runner.infer(sample)
        except ToolFailed as failure:
            stages.fail("latency", failure, artifact=artifact.key)
            continue
        kept.append(artifact)
    return kept
