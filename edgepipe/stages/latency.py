"""Stage: simple host latency of every artifact."""

from __future__ import annotations

from edgepipe.artifacts import Artifact
from edgepipe.config import BuildConfig
from edgepipe.latency import LatencyResult, measure_latency
from edgepipe.load.synthetic import synthetic_sample
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs


def latency_stage(inputs: BuildInputs, artifacts: list[Artifact], config: BuildConfig,
                  stages: StageLog) -> dict[str, LatencyResult]:
    """Median host latency of every artifact on one real sample, else one synthetic sample (ms)."""
    data = inputs.evaluation or inputs.calibration
    # without data (e.g. a shipped full-int8 TFLite given alone) the model is still checked and timed
    sample = next(data.samples()) if data is not None else synthetic_sample(inputs.model.signature)
    on = "" if data is not None else " on synthetic inputs (no data given)"
    with stages.stage("latency", f"{config.latency.warmup} warm-up + {config.latency.runs} timed runs each{on}"):
        return {a.key: measure_latency(a.path, sample, warmup=config.latency.warmup, runs=config.latency.runs)
                for a in artifacts}
