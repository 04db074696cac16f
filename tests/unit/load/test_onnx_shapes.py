"""Dynamic ONNX input dimensions: batch fixed to 1 automatically, the rest from ``input_shapes``."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.errors import ModelLoadError
from edgepipe.load import load_model
from edgepipe.load.onnx_shapes import dynamic_inputs
from tests.models import formats


def test_dynamic_batch_becomes_one(tmp_path: Path) -> None:
    model = load_model(formats.nchw_cnn(tmp_path / "cnn.onnx"))
    assert model.signature.inputs[0].shape == (1, 3, 64, 64)
    assert model.signature.outputs[0].shape == (1, 10)
    assert dynamic_inputs(model.handle) == []


def test_named_batch_is_fixed_everywhere_and_sequence_stays_dynamic(tmp_path: Path) -> None:
    model = load_model(formats.two_in_two_out(tmp_path / "two.onnx"))
    shapes = {s.name: s.shape for s in model.signature.inputs}
    assert shapes == {"frames": (1, None), "state": (1, 8)}
    assert dynamic_inputs(model.handle) == ["frames"]


def test_input_shapes_fix_the_rest(tmp_path: Path) -> None:
    model = load_model(formats.two_in_two_out(tmp_path / "two.onnx"), input_shapes={"frames": [1, 160]})
    assert {s.name: s.shape for s in model.signature.inputs} == {"frames": (1, 160), "state": (1, 8)}
    assert {s.name: s.shape for s in model.signature.outputs} == {"score": (1, 1), "next_state": (1, 8)}
    assert dynamic_inputs(model.handle) == []


@pytest.mark.parametrize(("shapes", "message"), [({"audio": [1, 160]}, "does not take"),
                                                 ({"frames": [1, 160, 2]}, "rank 2"),
                                                 ({"frames": [1, 0]}, "rank 2")])
def test_bad_input_shapes_are_user_errors(tmp_path: Path, shapes: dict[str, list[int]], message: str) -> None:
    with pytest.raises(ModelLoadError, match=message):
        load_model(formats.two_in_two_out(tmp_path / "two.onnx"), input_shapes=shapes)
