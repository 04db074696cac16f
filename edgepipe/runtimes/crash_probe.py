"""Whether LiteRT survives opening a TFLite file, asked of a child process.

LiteRT's C++ code can abort the whole process on a file a third-party tool wrote: a double free in
``allocate_tensors`` on ai-edge-quantizer's int8 TFLite of a name transliterator's GRU encoder killed edgepipe with
SIGABRT, leaving a half-built output folder. No Python handler sees that, so every TFLite a converter or quantizer
writes (and every TFLite a user gives) is first opened, allocated and run once on zeros in a child; a child killed
by a signal is a result that names the signal, and the file never reaches the in-process runtime.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

#: Open, allocate and run once on zeros: what edgepipe's own runner does first with a file.
_PROBE = """
import sys
import numpy as np
from ai_edge_litert.interpreter import Interpreter
interpreter = Interpreter(model_path=sys.argv[1])
interpreter.allocate_tensors()
for detail in interpreter.get_input_details():
    interpreter.set_tensor(detail["index"], np.zeros(detail["shape"], detail["dtype"]))
interpreter.invoke()
"""
#: Log lines of TensorFlow/LiteRT that say nothing about a crash.
_NOISE = ("WARNING", "INFO", "I0000", "W0000", "E0000")


def litert_crash(path: Path, timeout_s: float = 600.0) -> str | None:
    """None unless LiteRT kills its process (a signal) or hangs on ``path``; then what happened, in one line.

    A Python exception in the child (a model LiteRT refuses politely) is not a crash: the in-process load that
    follows reports it in LiteRT's own words.
    """
    try:
        child = subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True,
                               timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return f"LiteRT did not finish opening and running {path.name} once within {timeout_s:.0f} s"
    if child.returncode >= 0:
        return None
    try:
        name = signal.Signals(-child.returncode).name
    except ValueError:
        name = f"signal {-child.returncode}"
    said = [line.strip() for line in child.stderr.splitlines()
            if line.strip() and not line.startswith(_NOISE) and not line.startswith((" ", "File", "Fatal", "Current",
                                                                                     "Extension", "Thread"))]
    reason = f": {said[0][:200]}" if said else ""
    return f"LiteRT crashed ({name}) opening and running {path.name} once{reason}"
