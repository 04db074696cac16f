"""Ladder step (b) when one calibrator fails in ONNX Runtime: that setting is left out, the others still run.

A masked-attention pattern (a tensor filled with -3.4e38, float32's lowest, as transformer
exports write ``(1 - mask) * finfo.min``) makes the histogram calibrators (percentile,
entropy) fail: "Too many bins for data range". Before, that one failure ended the whole
ladder and the build fell back to plain PTQ.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from edgepipe.data.dataset import Dataset
from edgepipe.load import load_model
from edgepipe.metrics.label_free import Thresholds
from edgepipe.quantize.ladder import LadderContext, LadderSettings, run_ladder


def _masked_model(path: Path) -> Path:
    weight = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 3, 1, 1)).astype(np.float32), "w")
    lowest = numpy_helper.from_array(np.array(np.finfo(np.float32).min, np.float32), "lowest")
    zero = numpy_helper.from_array(np.array(0.0, np.float32), "zero")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Mul", ["c", "zero"], ["z"]),
             helper.make_node("Add", ["z", "lowest"], ["masked"]),
             helper.make_node("Softmax", ["masked"], ["p"], axis=1), helper.make_node("Add", ["c", "p"], ["y"])]
    graph = helper.make_graph(nodes, "masked", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])],
                              [weight, lowest, zero])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_a_failing_calibrator_costs_its_setting_not_the_ladder(tmp_path: Path) -> None:
    source = _masked_model(tmp_path / "model.onnx")
    rng = np.random.default_rng(1)
    data = Dataset(tmp_path / "data.npz", (rng.standard_normal((8, 3, 4, 4)).astype(np.float32),), None, "4" * 64)
    work = tmp_path / "ladder"
    work.mkdir()
    settings = LadderSettings(steps=("ptq", "calibration"), methods=("minmax", "percentile"))
    context = LadderContext(model=load_model(source), graph=None, floats={"onnx": source}, calibration=data,
                            selection=None, evaluation=None, train=None, threshold=1.0, settings=settings, work=work,
                            thresholds=Thresholds(min_cosine=1.0, min_sqnr_db=150.0))
    kept, report = run_ladder(context)
    calibration = {s.step: s for s in report.steps}["calibration"]
    assert "left out, the quantizer failed: onnx percentile/per-channel/int8" in calibration.note, calibration.note
    assert "Too many bins" in calibration.note
    assert calibration.candidates and all(c.recipe.startswith("minmax/") for c in calibration.candidates)
    assert len(calibration.candidates) == 4  # minmax, then its 3 other granularity x symmetry settings
    assert kept and kept[0].format == "onnx"
