"""Stage: simple host latency of every artifact (one its runtime cannot run is recorded and left out)."""

from __future__ import annotations

from edgepipe.artifacts import Artifact
from edgepipe.config import BuildConfig
from edgepipe.errors import ToolFailed
from edgepipe.latency import LatencyResult, measure_latency
from edgepipe.load.synthetic import synthetic_sample
from edgepipe.stage_log import StageLog
from edgepipe.stages.boundaries import contained, runtime_of
from edgepipe.stages.inputs import BuildInputs


def latency_stage(inputs: BuildInputs, artifacts: list[Artifact], config: BuildConfig,
                  stages: StageLog) -> dict[str, LatencyResult]:
    """Median host latency of every artifact on one real sample, else one synthetic sample (ms)."""
    data = inputs.evaluation or inputs.calibration
    # without data (e.g. a shipped full-int8 TFLite given alone) the model is still checked and timed
    sample = next(data.samples()) if data is not None else synthetic_sample(inputs.model.signature)
    on = "" if data is not None else " on synthetic inputs (no data given)"
    timed: dict[str, LatencyResult] = {}
    with stages.stage("latency", f"{config.latency.warmup} warm-up + {config.latency.runs} timed runs each{on}"):
        for artifact in artifacts:
            try:
                with contained(runtime_of(artifact.format)):
                    timed[artifact.key] = measure_latency(artifact.path, sample, warmup=config.latency.warmup,
                                                          runs=config.latency.runs)
            except ToolFailed as failure:
                stages.fail("latency", failure, artifact=artifact.key)
    return timed
