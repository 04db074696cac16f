"""Second opinion for mobile: ONNX Runtime's ``check_onnx_model_mobile_usability`` (NNAPI / CoreML rule tables).

It judges a different accelerator API than the QNN EP, so it is reported
beside the QNN agreement, never counted in it: per API, how many nodes it would
take and whether ONNX Runtime recommends it for the model as is.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from edgepipe.support.report import Verification

_NODES = re.compile(r"(\d+) partitions with a total of (\d+)/(\d+) nodes can be handled by the (.+?) EP")
_VERDICT = re.compile(r"Model should perform well with (.+?) as is: (YES|NO)")


def parse(output: str) -> dict[str, float | str]:
    """Per accelerator API: nodes it takes, partitions, and ORT's recommendation."""
    figures: dict[str, float | str] = {}
    for partitions, taken, total, api in _NODES.findall(output):
        figures[f"{api} nodes"] = f"{taken}/{total} in {partitions} partitions"
    for api, verdict in _VERDICT.findall(output):
        figures[f"{api} recommended"] = verdict
    return figures


def second_opinion(model: Path) -> Verification:
    """Run the checker on ``model``; its figures go into ``extra``."""
    tool = "onnxruntime check_onnx_model_mobile_usability"
    try:
        proc = subprocess.run([sys.executable, "-m", "onnxruntime.tools.check_onnx_model_mobile_usability",
                               str(model)], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return Verification(tool=tool, status="failed", detail="timed out after 300 s")
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        return Verification(tool=tool, status="failed", detail=(output.strip().splitlines() or ["failed"])[-1])
    return Verification(tool=tool, status="ran", detail="second opinion (NNAPI/CoreML), not compared op by op",
                        extra=parse(output))
