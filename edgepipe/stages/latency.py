"""Stage: simple host latency of every artifact."""

from __future__ import annotations

from edgepipe.artifacts import Artifact
from edgepipe.config import BuildConfig
from edgepipe.latency import LatencyResult, measure_latency
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs


def latency_stage(inputs: BuildInputs, artifacts: list[Artifact], config: BuildConfig,
                  stages: StageLog) -> dict[str, LatencyResult]:
    """Median host latency of every artifact on one real sample (ms)."""
    data = inputs.evaluation or inputs.calibration
    if data is None:
        stages.skip("latency", "no data to time the model on")
        return {}
    sample = next(data.samples())
    with stages.stage("latency", f"{config.latency.warmup} warm-up + {config.latency.runs} timed runs each"):
        return {a.key: measure_latency(a.path, sample, warmup=config.latency.warmup, runs=config.latency.runs)
                for a in artifacts}
