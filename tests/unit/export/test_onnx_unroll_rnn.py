"""Recurrent ops unrolled into their defining ops (edgepipe.export.onnx_unroll_rnn): the export stage's second try when
onnx2tf's own conversion of a recurrent model fails or computes something else. The unrolled graph must compute
exactly what ONNX Runtime computes for the LSTM, GRU or RNN node, in every form the operators allow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

HIDDEN, FEATURES, STEPS, BATCH = 5, 3, 6, 2
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _recurrent(kind: str, direction: str, peepholes: bool = False, states: bool = False, reset: int = 0,
               clip: float | None = None, activations: list[str] | None = None, squeezed: bool = False) -> Any:
    """One recurrent node over x [STEPS, BATCH, FEATURES]; with ``squeezed`` its outputs are read by Squeezes of the
    direction axis (as madmom's and PyTorch's exports read them), else they are graph outputs."""
    from onnx import TensorProto, helper, numpy_helper

    gates, directions = GATES[kind], 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(len(kind) + 7 * directions + peepholes + 2 * states + 3 * reset)
    constants = [numpy_helper.from_array(rng.normal(0, 0.5, (directions, gates * HIDDEN, FEATURES)).astype(np.float32),
                                         "W"),
                 numpy_helper.from_array(rng.normal(0, 0.5, (directions, gates * HIDDEN, HIDDEN)).astype(np.float32),
                                         "R"),
                 numpy_helper.from_array(rng.normal(0, 0.5, (directions, 2 * gates * HIDDEN)).astype(np.float32),
                                         "B")]
    names = ["x", "W", "R", "B", ""]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [STEPS, BATCH, FEATURES])]
    for state in (["h0", "c0"] if kind == "LSTM" else ["h0"]) if states else []:
        names.append(state)
        inputs.append(helper.make_tensor_value_info(state, TensorProto.FLOAT, [directions, BATCH, HIDDEN]))
    if peepholes:
        names += [""] * (7 - len(names)) + ["P"]
        constants.append(numpy_helper.from_array(rng.normal(0, 0.5, (directions, 3 * HIDDEN)).astype(np.float32), "P"))
    attrs: dict[str, Any] = {"hidden_size": HIDDEN, "direction": direction}
    if kind == "GRU":
        attrs["linear_before_reset"] = reset
    if clip:
        attrs["clip"] = clip
    if activations:
        attrs["activations"] = activations * directions
    produced = ["y", "y_h", *(["y_c"] if kind == "LSTM" else [])]
    nodes = [helper.make_node(kind, names, produced, name="recurrent", **attrs)]
    outputs = produced
    if squeezed:
        constants += [numpy_helper.from_array(np.array([1], np.int64), "axis1"),
                      numpy_helper.from_array(np.array([0], np.int64), "axis0")]
        nodes += [helper.make_node("Squeeze", [out, "axis1" if out == "y" else "axis0"], [f"{out}_s"], name=f"sq_{out}")
                  for out in produced]
        outputs = [f"{out}_s" for out in produced]
    graph = helper.make_graph(nodes, "recurrent", inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _run(model: Any, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feed)


CASES = [("LSTM", direction, peepholes, states, 0, None, None, False)
         for direction in ("forward", "reverse", "bidirectional") for peepholes in (False, True)
         for states in (False, True)]
CASES += [("LSTM", "forward", False, False, 0, 0.5, None, False),
          ("LSTM", "bidirectional", True, True, 0, None, ["Sigmoid", "Relu", "Tanh"], False),
          ("LSTM", "forward", True, True, 0, None, None, True)]
CASES += [("GRU", direction, False, states, reset, None, None, False)
          for direction in ("forward", "reverse", "bidirectional") for states in (False, True) for reset in (0, 1)]
CASES += [("GRU", "forward", False, False, 1, None, None, True)]
CASES += [("RNN", direction, False, states, 0, None, activations, False)
          for direction in ("forward", "bidirectional") for states in (False, True) for activations in (None, ["Relu"])]


@pytest.mark.parametrize(("kind", "direction", "peepholes", "states", "reset", "clip", "activations", "squeezed"),
                         CASES)
def test_unrolled_node_computes_what_the_recurrent_op_does(kind: str, direction: str, peepholes: bool, states: bool,
                                                           reset: int, clip: float | None,
                                                           activations: list[str] | None, squeezed: bool) -> None:
    import onnx

    from edgepipe.export.onnx_unroll_rnn import has_recurrent, unroll_recurrent

    model = _recurrent(kind, direction, peepholes, states, reset, clip, activations, squeezed)
    rng = np.random.default_rng(1)
    directions = 2 if direction == "bidirectional" else 1
    feed = {"x": rng.normal(0, 1, (STEPS, BATCH, FEATURES)).astype(np.float32)}
    for state in (["h0", "c0"] if kind == "LSTM" else ["h0"]) if states else []:
        feed[state] = rng.normal(0, 0.5, (directions, BATCH, HIDDEN)).astype(np.float32)
    want = _run(model, feed)
    assert unroll_recurrent(model) == 1 and not has_recurrent(model)
    for got, expected in zip(_run(model, feed), want):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    if squeezed:  # the readers take the 3-D steps and 2-D states: no tensor of rank 3 or more is left to them
        inferred = onnx.shape_inference.infer_shapes(model)
        ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in inferred.graph.value_info}
        assert all(ranks.get(n.input[0], 0) < 4 for n in model.graph.node if n.op_type in ("Squeeze", "Identity"))


def test_lengths_that_are_not_known_to_be_full_keep_the_node() -> None:
    from onnx import TensorProto, helper

    from edgepipe.export.onnx_unroll_rnn import unroll_recurrent

    model = _recurrent("GRU", "forward")
    node = model.graph.node[0]
    node.input[4] = "lengths"
    model.graph.input.append(helper.make_tensor_value_info("lengths", TensorProto.INT32, [BATCH]))
    assert unroll_recurrent(model) == 0 and model.graph.node[0].op_type == "GRU"


def test_export_unrolls_a_peephole_lstm_that_onnx2tf_cannot_convert(tmp_path: Path) -> None:
    """madmom's peephole LSTMs: onnx2tf stops with "Dimensions must be equal"; the export stage tries again with the
    LSTM unrolled, and the float TFLite computes the ONNX model's function."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from edgepipe.data.dataset import Dataset
    from edgepipe.export.float_match import float_mismatch
    from tests.conftest import run_cli

    rng = np.random.default_rng(0)
    shapes = {"W": (1, 4 * HIDDEN, FEATURES), "R": (1, 4 * HIDDEN, HIDDEN), "B": (1, 8 * HIDDEN), "P": (1, 3 * HIDDEN)}
    constants = [numpy_helper.from_array(rng.normal(0, 0.5, shape).astype(np.float32), name)
                 for name, shape in shapes.items()]
    constants.append(numpy_helper.from_array(np.array([1], np.int64), "axis"))
    nodes = [helper.make_node("LSTM", ["x", "W", "R", "B", "", "", "", "P"], ["y"], hidden_size=HIDDEN, name="lstm"),
             helper.make_node("Squeeze", ["y", "axis"], ["s"], name="squeeze"),
             helper.make_node("Sigmoid", ["s"], ["out"], name="sigmoid")]
    graph = helper.make_graph(nodes, "peephole",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [STEPS, 1, FEATURES])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [STEPS, 1, HIDDEN])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "peephole.onnx"))
    x = rng.normal(0, 1, (8, STEPS, 1, FEATURES)).astype(np.float32)
    np.savez(tmp_path / "calib.npz", x=x)
    proc = run_cli("quantize", "-m", str(tmp_path / "peephole.onnx"), "--calib", str(tmp_path / "calib.npz"),
                   "-o", str(tmp_path / "out"), "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "out" / "model.tflite").is_file(), proc.stdout + proc.stderr[-2000:]
    data = Dataset(path=tmp_path / "calib.npz", inputs=(x,), labels=None, sha256="", whole=(True,))
    assert float_mismatch(tmp_path / "out" / "model.onnx", tmp_path / "out" / "model.tflite", data) is None


def test_when_the_unrolled_retry_fails_too_the_report_leads_with_onnx2tfs_own_reason(tmp_path: Path) -> None:
    """A recurrent model with an op onnx2tf cannot convert at all (ScatterElements with reduction=add): both tries
    fail, and the reported failure gives onnx2tf's reason for its own conversion first, then the retry's."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from tests.conftest import run_cli

    rng = np.random.default_rng(0)
    shapes = {"W": (1, 4 * HIDDEN, FEATURES), "R": (1, 4 * HIDDEN, HIDDEN), "B": (1, 8 * HIDDEN)}
    constants = [numpy_helper.from_array(rng.normal(0, 0.5, shape).astype(np.float32), name)
                 for name, shape in shapes.items()]
    constants += [numpy_helper.from_array(np.array([1], np.int64), "axis"),
                  numpy_helper.from_array(np.zeros((STEPS, 1, 4), np.float32), "bins_zero"),
                  numpy_helper.from_array(np.tile(np.array([0, 1, 1, 3, 2], np.int64), (STEPS, 1, 1)), "bins")]
    nodes = [helper.make_node("LSTM", ["x", "W", "R", "B"], ["y"], hidden_size=HIDDEN, name="lstm"),
             helper.make_node("Squeeze", ["y", "axis"], ["s"], name="squeeze"),
             helper.make_node("ScatterElements", ["bins_zero", "bins", "s"], ["out"], axis=2, reduction="add",
                              name="count")]
    graph = helper.make_graph(nodes, "counted",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [STEPS, 1, FEATURES])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [STEPS, 1, 4])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "counted.onnx"))
    np.savez(tmp_path / "calib.npz", x=rng.normal(0, 1, (8, STEPS, 1, FEATURES)).astype(np.float32))
    proc = run_cli("-v", "quantize", "-m", str(tmp_path / "counted.onnx"), "--calib", str(tmp_path / "calib.npz"),
                   "-o", str(tmp_path / "out"), "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not (tmp_path / "out" / "model.tflite").exists()
    reported = next(line for line in proc.stderr.splitlines() if "stage export: onnx2tf failed" in line)
    first, _, retry = reported.partition("; the last: ")
    assert "routes tried after it: onnx2tf with its recurrent ops unrolled by edgepipe" in first, reported
    assert "ScatterElements" in first and "ScatterElements" in retry, reported
