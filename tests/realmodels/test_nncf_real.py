"""NNCF's corrections on a real model (the zoo's pinned wheels; tests/realmodels/zoo.py): the PaddleOCR direction
classifier, whose depthwise convolutions are what bias correction is for. NNCF corrects their biases, its model
reads back to a float model of the same graph, and ONNX Runtime's quantizer takes that."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from edgepipe.config import load_config
from edgepipe.metrics.compare import run_outputs
from edgepipe.metrics.similarity import cosine
from edgepipe.quantize.nncf_ptq import nncf_rewrite
from edgepipe.quantize.onnx_qdq import preprocess, quantize_onnx
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import validate_inputs
from tests.realmodels import zoo

pytestmark = [pytest.mark.thirdparty, pytest.mark.slow]


def test_nncf_corrects_the_paddleocr_classifiers_biases(tmp_path: Path) -> None:
    pytest.importorskip("nncf")
    config = load_config(zoo.prepare(zoo.BY_NAME["ppocr_v4_cls"], tmp_path / "zoo", zoo.SMALL), {})
    inputs = validate_inputs(config, StageLog())
    assert inputs.calibration is not None
    source = tmp_path / "model.onnx"
    onnx.save(inputs.model.handle, str(source))
    prepared = preprocess(source, tmp_path / "prepared.onnx")
    made = nncf_rewrite(prepared, tmp_path / "corrected.onnx", inputs.calibration, transformer=False)
    assert len(made.corrected) >= 10 and made.smoothed == 0, made.label
    before, after = onnx.load(str(prepared)), onnx.load(str(made.path))
    assert [n.op_type for n in after.graph.node] == [n.op_type for n in before.graph.node]  # no QDQ left
    reference = run_outputs(prepared, inputs.calibration).arrays[0]
    assert cosine(reference, run_outputs(made.path, inputs.calibration).arrays[0]) > 0.999  # biases moved a little
    (tmp_path / "q").mkdir()
    quantized = quantize_onnx(made.path, tmp_path / "int8.onnx", inputs.calibration, QuantRecipe(), tmp_path / "q")
    assert cosine(reference, run_outputs(quantized, inputs.calibration).arrays[0]) > 0.99
