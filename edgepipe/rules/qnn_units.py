"""Constraints on node units the Qualcomm HTP places (found with the onnxruntime-qnn HTP emulator on probe graphs).

The recurrent ops: ONNX Runtime's QNN EP (onnxruntime-qnn 2.7.0) runs LSTM and GRU on the HTP, but its
op builders reject some of their attributes and inputs, and a rejected op runs on the CPU EP
(probe graphs in tests/verify/test_qnn.py).
"""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint


def _names(node: OpNode) -> list[str]:
    """The node's ``activations`` attribute as text (ONNX stores strings as bytes)."""
    return [a.decode() if isinstance(a, bytes) else str(a) for a in node.attrs.get("activations") or []]


@constraint
def recurrent_activations_spelled(node: OpNode, graph: OpGraph, defaults: list[str]) -> Verdict:
    """Its activations are not given, or each direction's are exactly {param}, in lower case (the QNN EP
    compares the names case-sensitively, so ONNX's own spellings Sigmoid and Tanh send the op to the CPU;
    of a bidirectional LSTM's second direction it compares the first and the last name only)."""
    names = _names(node)
    if not names:
        return True, "default activations"
    checked = list(range(len(defaults)))
    if len(names) == 2 * len(defaults):
        second = [len(defaults), 2 * len(defaults) - 1] if node.op == "LSTM" else \
            list(range(len(defaults), 2 * len(defaults)))
        checked += second
    wrong = [names[i] for i in checked if i < len(names) and names[i] != defaults[i % len(defaults)]]
    if wrong or len(names) < len(defaults):
        return False, f"{node.op} activations {', '.join(names)} are not spelled {', '.join(defaults)}"
    return True, f"activations {', '.join(names)}"


@constraint
def no_clip(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Its cell clip is not set (absent or 0): the QNN EP rejects a clipped LSTM or GRU (ONNX clips the input of
    every gate's activation, QNN only the cell state)."""
    clip = float(node.attrs.get("clip") or 0.0)
    bad = required and clip != 0.0
    return not bad, f"{node.op} clips at {clip:g}" if bad else "no clip"


@constraint
def constant_sequence_lens(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Its sequence_lens input is absent or a constant: the QNN EP rejects lengths computed at run time (and
    constant lengths that differ between the batch entries, whose values edgepipe's graph does not hold)."""
    # the reader drops absent (empty) inputs, so positions shift: sequence_lens is the recurrent op's one int32 input
    lengths = next((t for t in node.inputs if t.dtype == "int32"), None)
    if not required or lengths is None:
        return True, "no sequence_lens"
    if not lengths.constant:
        return False, f"{node.op} sequence_lens '{lengths.name}' is computed at run time"
    return True, "constant sequence_lens"
