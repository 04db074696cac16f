"""Second opinion for TFLite: ``tf.lite.experimental.Analyzer`` with ``gpu_compatibility=True``.

The analyzer prints its findings; they are captured from stdout and summarised
(the ops it flags for the GPU delegate, and its overall verdict). Reported
beside the vendor comparisons, not counted in them.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

from edgepipe.support.report import Verification

_FLAGGED = re.compile(r"GPU COMPATIBILITY WARNING: (.+)")


def analyze(model: Path) -> str:
    """The analyzer's printed report for ``model``."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        tf.lite.experimental.Analyzer.analyze(model_content=Path(model).read_bytes(), gpu_compatibility=True)
    return buffer.getvalue()


def second_opinion(model: Path) -> Verification:
    """GPU-delegate compatibility of ``model`` as the TFLite analyzer sees it."""
    tool = "tflite analyzer (gpu_compatibility)"
    try:
        text = analyze(model)
    except ImportError:
        return Verification(tool=tool, status="not installed", detail="needs tensorflow")
    except Exception as exc:  # noqa: BLE001 - the analyzer raises untyped errors on models it cannot read
        return Verification(tool=tool, status="failed", detail=str(exc).splitlines()[0])
    flagged = sorted(set(_FLAGGED.findall(text)))
    compatible = "looks compatible with GPU delegate" in text
    return Verification(tool=tool, status="ran", detail="second opinion (GPU delegate), not compared op by op",
                        extra={"gpu_compatible": "yes" if compatible else "no",
                               "flagged": "; ".join(flagged)[:500]})
