"""Stage: host latency of every artifact (host int8 forms included) in one measurement session."""

from __future__ import annotations

from edgepipe.artifacts import Artifact
from edgepipe.config import BuildConfig
from edgepipe.latency import LatencyResult, measure_session
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs


def latency_stage(inputs: BuildInputs, artifacts: list[Artifact], config: BuildConfig,
                  stages: StageLog) -> dict[str, LatencyResult]:
    """Median host latency of every artifact on one real sample (ms), all timed in one interleaved run."""
    data = inputs.evaluation or inputs.calibration
    if data is None:
        stages.skip("latency", "no data to time the model on")
        return {}
    sample = next(data.samples())
    settings = config.latency
    threads = settings.threads
    detail = (f"{settings.warmup} warm-up + {settings.runs} timed runs each, interleaved, "
              f"threads={threads if threads else 'runtime default'}")
    with stages.stage("latency", detail):
        return measure_session({a.key: a.path for a in artifacts}, sample, warmup=settings.warmup,
                               runs=settings.runs, threads=threads)
