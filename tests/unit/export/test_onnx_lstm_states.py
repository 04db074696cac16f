"""LSTMs exported without initial states convert to TFLite (edgepipe.export.onnx_lstm_states): onnx2tf fails on an
LSTM whose states its own onnxsim pass dropped, so edgepipe simplifies first and gives them explicit zeros."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset

HIDDEN, FEATURES, STEPS = 6, 5, 7


def _lstm_onnx(path: Path, direction: str, layout: int, batch: int | str = 1) -> Path:
    """x -> LSTM (no sequence_lens, no initial states) -> Y: one LSTM node as a hand-written graph."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    directions = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(directions + 2 * layout)
    weights = [numpy_helper.from_array(rng.normal(0, 0.5, shape).astype(np.float32), name) for name, shape in (
        ("W", (directions, 4 * HIDDEN, FEATURES)), ("R", (directions, 4 * HIDDEN, HIDDEN)),
        ("B", (directions, 8 * HIDDEN)))]
    x_shape = [batch, STEPS, FEATURES] if layout else [STEPS, batch, FEATURES]
    node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y", "y_h"], name="lstm", hidden_size=HIDDEN,
                            direction=direction, layout=layout)
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("y_h", TensorProto.FLOAT, None)], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def _run(model: object, x: np.ndarray) -> list[np.ndarray]:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    return session.run(None, {"x": x})


@pytest.mark.parametrize(("direction", "layout"), [("forward", 0), ("reverse", 0), ("bidirectional", 0),
                                                   ("bidirectional", 1)])
def test_zero_states_change_nothing(tmp_path: Path, direction: str, layout: int) -> None:
    import onnx

    from edgepipe.export.onnx_lstm_states import add_zero_states, stateless_lstms

    model = onnx.load(str(_lstm_onnx(tmp_path / "l.onnx", direction, layout)))
    shape = (1, STEPS, FEATURES) if layout else (STEPS, 1, FEATURES)
    x = np.random.default_rng(1).normal(0, 1, shape).astype(np.float32)
    want = None if layout else _run(model, x)  # ONNX Runtime has no batch-first (layout 1) LSTM
    assert add_zero_states(model) == 1 and not stateless_lstms(model)
    states = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    directions = 2 if direction == "bidirectional" else 1
    for name in model.graph.node[0].input[5:7]:
        assert states[name].shape == ((1, directions, HIDDEN) if layout else (directions, 1, HIDDEN))
        assert not states[name].any()
    for got, expected in zip(_run(model, x) if want else [], want or []):
        np.testing.assert_array_equal(got, expected)


def test_lstm_with_a_dynamic_batch_is_left_alone(tmp_path: Path) -> None:
    import onnx

    from edgepipe.export.onnx_lstm_states import add_zero_states

    model = onnx.load(str(_lstm_onnx(tmp_path / "l.onnx", "bidirectional", 0, batch="n")))
    assert add_zero_states(model) == 0 and len(model.graph.node[0].input) == 4


@pytest.mark.parametrize("bidirectional", [False, True])
def test_pytorch_lstm_without_states_converts_exactly(tmp_path: Path, bidirectional: bool) -> None:
    """PyTorch's export of an ``nn.LSTM`` called without states (metapredict's disorder BiLSTM, held out): onnx2tf
    failed on both directions ('NoneType' object is not subscriptable) and on one (an empty Keras initial state)."""
    import torch

    from edgepipe.export.float_match import float_mismatch
    from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite

    class Tagger(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lstm = torch.nn.LSTM(FEATURES, HIDDEN, num_layers=2, batch_first=True, bidirectional=bidirectional)
            self.head = torch.nn.Linear(HIDDEN * (2 if bidirectional else 1), 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.sigmoid(self.head(self.lstm(x)[0]))

    torch.manual_seed(0)
    source = tmp_path / "tagger.onnx"
    torch.onnx.export(Tagger().eval(), (torch.zeros(1, STEPS, FEATURES),), str(source), input_names=["x"],
                      output_names=["y"], opset_version=17, dynamo=False)
    x = np.random.default_rng(0).normal(0, 1, (8, STEPS, FEATURES)).astype(np.float32)
    data = Dataset(path=tmp_path / "calib.npz", inputs=(x,), labels=None, sha256="")
    before = source.read_bytes()
    converted = convert_onnx_to_tflite(source, tmp_path / "tagger.tflite", data, ["x"], tmp_path / "scratch")
    assert float_mismatch(source, converted, data) is None
    assert source.read_bytes() == before  # the artifact itself is not rewritten
