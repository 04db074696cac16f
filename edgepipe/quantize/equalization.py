"""Cross-layer equalization (CLE) of a float ONNX with AIMET-ONNX's ``equalize_model``: the one adapter to AIMET.

CLE scales each output channel of a weight layer down and the matching input channel of the next weight layer up
by the same factor (across a ReLU, which commutes with a positive scale), so that the channels of both layers span
equal ranges. The float function stays the same, but one activation scale per tensor and the weight scales then
lose far less to int8 rounding: a network whose channels span very different ranges (no batch normalisation) is
where plain PTQ breaks and CLE repairs it. AIMET also folds batch normalisation into the weights first, replaces
ReLU6 with ReLU (a clip at 6 does not commute with the scales: the ladder scores the result against the original
float model, so a changed function is never kept unnoticed) and folds high biases forward.

AIMET-ONNX is the ``aimet`` extra (``pip install 'edgepipe[aimet]'``); it imports PyTorch, so it is imported
here only when equalization runs.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import logging.config
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.native_logs import native_stderr_to_log
from edgepipe.quantize.onnx_qdq import LAYER_OPS

log = logging.getLogger(__name__)

#: What installs the equalizer.
INSTALL = "pip install 'edgepipe[aimet]'"


def aimet_missing() -> bool:
    """True when AIMET-ONNX is not installed (found without importing it: the import takes seconds)."""
    return importlib.util.find_spec("aimet_onnx") is None


def _names_its_loggers(config: Any) -> None:
    """AIMET-ONNX's logging configuration, reduced to creating its loggers (at WARNING, no handlers of their own)."""
    for name in config.get("loggers", {}):
        logging.getLogger(name).setLevel(logging.WARNING)


@contextlib.contextmanager
def _logging_kept() -> Iterator[None]:
    """Keep the process's logging as it is across AIMET-ONNX's first import.

    On import AIMET configures logging with ``logging.config.dictConfig``, which closes every handler that exists;
    a handler such as absl's (TensorFlow's) closes its stream on close, which may be a test runner's capture file or
    a user's log file. It would also give AIMET's loggers handlers of their own, bound to whatever ``sys.stdout`` is
    at that moment. Here AIMET's loggers are only created, and their warnings reach the application's handlers."""
    configure = logging.config.dictConfig
    logging.config.dictConfig = _names_its_loggers
    try:
        yield
    finally:
        logging.config.dictConfig = configure


@dataclass(frozen=True)
class Equalization:
    """A float ONNX after CLE: ``path``, the weight layers whose weights changed (``rescaled``), of ``layers`` weight
    layers in the graph, and the seconds AIMET took (import included)."""

    path: Path
    rescaled: tuple[str, ...]
    layers: int
    seconds: float

    @property
    def summary(self) -> str:
        """One line for the ladder's trail."""
        return (f"AIMET-ONNX cross-layer equalization rescaled {len(self.rescaled)} of {self.layers} weight layers "
                f"({self.seconds:.1f} s)")


def _weights(model: Any) -> dict[str, np.ndarray]:
    """The weight initializer of every weight layer of ``model``, by node name."""
    from onnx import numpy_helper

    initializers = {init.name: init for init in model.graph.initializer}
    return {node.name: numpy_helper.to_array(initializers[node.input[1]]) for node in model.graph.node
            if node.op_type in LAYER_OPS and len(node.input) > 1 and node.input[1] in initializers}


def _explicit_groups(model: Any) -> int:
    """Write ``group=1`` on every convolution that leaves it to the ONNX default (1: the same function).

    AIMET-ONNX reads a convolution's ``group`` attribute and treats one without it as unsupported, so a graph whose
    exporter omits defaults (tf2onnx, a hand-built graph) would get no equalization at all. Returns how many."""
    from onnx import helper

    added = 0
    for node in model.graph.node:
        if node.op_type in ("Conv", "ConvTranspose") and not any(a.name == "group" for a in node.attribute):
            node.attribute.append(helper.make_attribute("group", 1))
            added += 1
    return added


def equalize_onnx(source: Path, out: Path) -> Equalization:
    """Write ``source`` (a float ONNX, prepared for the quantizer) equalized by AIMET-ONNX to ``out``.

    Run it inside ``contained(AIMET_ONNX)``: AIMET's own failures (an import it cannot make, a graph it cannot
    read) become :class:`~edgepipe.errors.ToolFailed`.
    """
    import onnx

    start = time.perf_counter()
    chatter = io.StringIO()  # AIMET prints its progress; keep it in the log
    with native_stderr_to_log(), contextlib.redirect_stdout(chatter):
        with _logging_kept():
            from aimet_onnx.cross_layer_equalization import equalize_model  # heavy optional dependency (AIMET, torch)

        model = onnx.load(str(source))
        _explicit_groups(model)
        before = _weights(model)
        equalize_model(model)  # in place
    log.debug("%s", chatter.getvalue().strip())
    after = _weights(model)
    rescaled = tuple(name for name, weight in before.items()
                     if name in after and not np.array_equal(after[name], weight))
    onnx.save(model, str(out))
    result = Equalization(out, rescaled, len(before), round(time.perf_counter() - start, 3))
    log.info("%s -> %s: %s", source.name, out.name, result.summary)
    return result
