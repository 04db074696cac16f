"""Report records of the accuracy statistics (:mod:`edgepipe.metrics.paired`): the drop's interval, rendered."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from edgepipe.metrics.paired import CONFIDENCE, RESAMPLES, SEED, PairedDrop


class DropInterval(BaseModel):
    """The 95% confidence interval of one format's int8 drop, paired over the same evaluation samples."""

    model_config = ConfigDict(extra="forbid")

    low_points: float = Field(description="Lower bound of the drop, percentage points.")
    high_points: float = Field(description="Upper bound of the drop, percentage points.")
    float_only: int = Field(description="Samples the float model classified right and the int8 model wrong.")
    int8_only: int = Field(description="Samples the int8 model classified right and the float model wrong.")
    method: str = Field(description="How the interval was computed.")

    @classmethod
    def of(cls, drop: PairedDrop) -> DropInterval:
        return cls(low_points=round(drop.low_points, 4), high_points=round(drop.high_points, 4),
                   float_only=drop.float_only, int8_only=drop.int8_only,
                   method=f"paired percentile bootstrap, {RESAMPLES} resamples, seed {SEED}, "
                          f"{CONFIDENCE:.0%} confidence")


def render_interval(interval: DropInterval | None) -> str:
    """``[low, high]`` in points, or '–' when there is none."""
    return "–" if interval is None else f"[{interval.low_points:+.2f}, {interval.high_points:+.2f}]"
