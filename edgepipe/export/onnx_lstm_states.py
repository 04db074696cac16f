"""ONNX LSTMs given explicit zero initial states so that onnx2tf converts them.

onnx2tf 1.28.8 converts an LSTM only when it has ``initial_h`` and ``initial_c``: without them it hands Keras an
empty initial state (``An `initial_state` was passed that is not compatible with `cell.state_size```) or, for a
bidirectional LSTM, reads ``initial_h[1]`` of nothing (``TypeError: 'NoneType' object is not subscriptable``).
PyTorch exports an ``nn.LSTM`` called without states with zero states computed from the input's shape, and the
onnxsim pass onnx2tf runs first folds them to constants and drops them, since zero is the default: every such
export failed (a protein-disorder BiLSTM). edgepipe therefore runs onnxsim itself as onnx2tf
would, gives each LSTM still missing a state an explicit zero initializer (what ONNX defines the missing state to
be, so the model is unchanged) and tells onnx2tf not to simplify again (``-nuo``), which would drop them once more.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

from edgepipe.graph.onnx_edit import attributes

log = logging.getLogger(__name__)

#: Positions of ``initial_h`` and ``initial_c`` among an LSTM's inputs.
_STATES = (5, 6)
#: onnx2tf runs onnxsim this many times in a row; edgepipe does the same for the models it simplifies itself.
SIMPLIFY_ROUNDS = 3
SIMPLIFY_TIMEOUT_S = 600


def _lstms(model: Any) -> list[Any]:
    return [node for node in model.graph.node if node.op_type == "LSTM" and node.domain in ("", "ai.onnx")]


def has_lstm(model: Any) -> bool:
    """Whether ``model``'s main graph has an LSTM of the default domain (its states may be computed: onnxsim
    folds and drops zero ones)."""
    return bool(_lstms(model))


def stateless_lstms(model: Any) -> list[Any]:
    """The LSTM nodes of ``model`` (default domain) that lack ``initial_h`` or ``initial_c``."""
    return [node for node in _lstms(model) if any(len(node.input) <= k or not node.input[k] for k in _STATES)]


def _batch(model: Any, node: Any, layout: int) -> int | None:
    """The static batch size of the LSTM's input ``X`` (axis 1, or 0 with ``layout`` 1), or None if unknown."""
    import onnx

    values = {v.name: v for v in (*model.graph.input, *onnx.shape_inference.infer_shapes(model).graph.value_info)}
    value = values.get(node.input[0])
    dims = value.type.tensor_type.shape.dim if value is not None else []
    if len(dims) != 3 or not dims[0 if layout else 1].HasField("dim_value"):
        return None
    return int(dims[0 if layout else 1].dim_value)


def add_zero_states(model: Any) -> int:
    """Give every LSTM of ``model`` (an ``onnx.ModelProto``, changed in place) that lacks ``initial_h`` or
    ``initial_c`` a zero initializer for it; returns how many LSTMs changed. An LSTM whose batch size is not
    static stays as it is."""
    import numpy as np
    from onnx import numpy_helper

    changed = 0
    for node in stateless_lstms(model):
        attrs = attributes(node)
        layout = int(attrs.get("layout", 0))
        batch = _batch(model, node, layout)
        if batch is None:
            continue
        directions = 2 if attrs.get("direction", b"forward") in (b"bidirectional", "bidirectional") else 1
        hidden = int(attrs["hidden_size"])
        shape = (batch, directions, hidden) if layout else (directions, batch, hidden)
        inputs = list(node.input) + [""] * (max(_STATES) + 1 - len(node.input))
        for k, label in zip(_STATES, ("h", "c")):
            if not inputs[k]:
                inputs[k] = f"{node.name or node.output[0]}_zero_initial_{label}"
                model.graph.initializer.append(numpy_helper.from_array(np.zeros(shape, np.float32), inputs[k]))
        del node.input[:]
        node.input.extend(inputs)
        changed += 1
    return changed


def simplify(path: Path, env: dict[str, str]) -> bool:
    """Run onnxsim on the ONNX file at ``path`` in place, as onnx2tf does; False (file unchanged) if it fails."""
    for _ in range(SIMPLIFY_ROUNDS):
        try:
            done = subprocess.run([sys.executable, "-m", "onnxsim", str(path), str(path)], capture_output=True,
                                  text=True, env=env, timeout=SIMPLIFY_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            log.warning("onnxsim did not finish within %d s on %s", SIMPLIFY_TIMEOUT_S, path.name)
            return False
        if done.returncode != 0:
            log.warning("onnxsim failed on %s: %s", path.name, (done.stderr or done.stdout).strip()[-300:])
            return False
    return True
