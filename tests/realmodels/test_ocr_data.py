"""Held-out models that read text in images: document orientation, text recognisers and detectors, tables,
(tests/realmodels/models/ocr.py): their data made as each package feeds its model, deterministic and shaped as the
model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME


@pytest.mark.parametrize("name", ["captcha_crnn"])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(spec.name for spec in session.get_inputs()) == sorted(shapes)
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:] and np.array_equal(value, again[key])
    outputs = session.run(None, {key: value[:1] for key, value in first.items()})
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")
