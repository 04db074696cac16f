"""What a number in a report is: measured here, a vendor tool's estimate, or edgepipe's model estimate.

Every figure a report prints carries one of these labels (a typed field of the
record that holds it, shown beside it in report.md and report.html), so a reader
never takes an estimate for a measurement.
"""

from __future__ import annotations

from typing import Literal

#: measured: timed or scored on this machine with a real runtime; vendor estimate: a vendor tool's own
#: figure (e.g. Vela's cycle count); model estimate: edgepipe's cost or power model.
FigureKind = Literal["measured", "vendor estimate", "model estimate"]

MEASURED: FigureKind = "measured"
VENDOR_ESTIMATE: FigureKind = "vendor estimate"
MODEL_ESTIMATE: FigureKind = "model estimate"

#: The error text of a model estimate without a held-out measurement on a calibrated host.
UNVALIDATED = "unvalidated"


#: What a report shows for a figure it does not have.
MISSING = "–"


def pct(value: float | None) -> str:
    """A share in [0, 1] as a percentage with two decimals (``0.9512`` → ``95.12%``), or ``–``."""
    return MISSING if value is None else f"{100 * value:.2f}%"


def num(value: float | None, fmt: str = ".2f") -> str:
    """``value`` in the format ``fmt`` (``format()`` spec), or ``–`` when there is none."""
    return MISSING if value is None else format(value, fmt)
