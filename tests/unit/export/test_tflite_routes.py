"""Conversion routes from ONNX to float TFLite (edgepipe.export.tflite_routes, edgepipe.stages.export_tflite): what
a failure at a node leads to, the names the report gives, onnx2tf's parameter replacement file, and the export
stage keeping the first route whose TFLite computes the model's function."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset

CHANNELS = 5


def _softmax_head(path: Path | None = None) -> Any:
    """x [1, 8, 4, 4] -> Conv 1x1 (CHANNELS) -> ReduceMean over H, W -> Softmax over the channels (axis 1): a
    classifier head whose Softmax reads a (1, C, 1, 1) map."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.normal(0, 0.5, (CHANNELS, 8, 1, 1)).astype(np.float32), "w"),
               numpy_helper.from_array(np.array([2, 3], np.int64), "axes")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="/head/conv"),
             helper.make_node("ReduceMean", ["c", "axes"], ["m"], name="/head/pool", keepdims=1),
             helper.make_node("Softmax", ["m"], ["y"], name="/head/Softmax", axis=1)]
    graph = helper.make_graph(nodes, "head", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, CHANNELS, 1, 1])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    if path is not None:
        onnx.save(model, str(path))
    return model


def _calibration(count: int = 6) -> Dataset:
    x = np.random.default_rng(1).normal(0, 1, (count, 8, 4, 4)).astype(np.float32)
    return Dataset(path=Path("calib.npz"), inputs=(x,), labels=None, sha256="")


def test_a_failure_at_a_softmax_leads_to_its_rewrite_then_to_onnx2tfs_own_suggestion(tmp_path: Path) -> None:
    from edgepipe.export.tflite_routes import Failure, Route, after_failure

    model = _softmax_head()
    suggested = tmp_path / "onnx2tf_suggested_0.json"
    routes = after_failure(Route(), model, Failure("/head/Softmax", suggested=suggested), [Route()])
    assert [r.name for r in routes] == [
        "onnx2tf with its Softmax over the last axis (transposes around it)",
        "onnx2tf with its own parameter replacement for /head/Softmax"]
    assert routes[1].replacements == suggested
    assert after_failure(Route(), model, Failure("/head/conv"), [Route()]) == []  # a Conv, no suggestion: nothing
    assert after_failure(Route(), model, Failure("/head/Softmax", suggested=suggested), [Route(), *routes]) == []


def test_a_route_that_computed_something_else_is_refined_with_the_unnamed_failure_rewrites() -> None:
    """A YOLOv8 head: the Concat route converted but its boxes were wrong (no failing node); the next route keeps
    that rewrite and adds the subtraction one."""
    from edgepipe.export.tflite_routes import Failure, Route, after_failure
    from tests.models.graphs import anchor_decode

    concat = Route(rewrites=("concat-last-axis",))
    (route,) = after_failure(concat, anchor_decode(), Failure(None), [Route(), concat])
    assert route.rewrites == ("concat-last-axis", "constant-minus-as-add")
    assert after_failure(Route(), anchor_decode(), Failure("/head/Sub"), [Route()]) == []


def test_select_ops_with_an_approximation_lead_to_the_approximated_route_first() -> None:
    from edgepipe.export.tflite_routes import Failure, Route, after_failure

    (route,) = after_failure(Route(unroll=True), _softmax_head(), Failure(None, ("FlexErf",), ("Erf",)), [])
    assert route == Route(unroll=True, approximate=("Erf",))
    assert route.name == ("onnx2tf with its recurrent ops unrolled by edgepipe and Erf approximated in builtin ops "
                          "by edgepipe")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["rewrite", "parameter replacement"])
def test_each_route_converts_a_small_graph_to_the_same_function(tmp_path: Path, kind: str) -> None:
    """onnx2tf along the rewrite route and along a parameter replacement route (the Softmax's own axis given as the
    replacement) gives ONNX Runtime's outputs."""
    from edgepipe.export.float_match import float_agreement
    from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite
    from edgepipe.export.tflite_routes import Route

    source = tmp_path / "head.onnx"
    _softmax_head(source)
    data = _calibration()
    replacements = tmp_path / "replace.json"
    replacements.write_text(json.dumps({"format_version": 1, "operations": [
        {"op_name": "/head/Softmax", "param_target": "attributes", "param_name": "axis", "values": 1}]}))
    route = Route(rewrites=("softmax-last-axis",)) if kind == "rewrite" else Route(
        replacements=replacements, replaced="/head/Softmax")
    out = convert_onnx_to_tflite(source, tmp_path / "head.tflite", data, ["x"], tmp_path / "scratch", route)
    agreement = float_agreement(source, out, data)
    assert agreement.problem is None and agreement.cosine > 0.9999, agreement


def test_the_export_stage_keeps_the_first_route_that_computes_the_function(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """onnx2tf's own conversion fails at the Softmax; the rewrite route's TFLite is the model's function: it is
    kept, the artifact and the stage record name the route, the record says why it was needed."""
    from onnx import numpy_helper

    from edgepipe.export import onnx_to_tflite
    from edgepipe.frameworks import import_tensorflow
    from edgepipe.stage_log import StageLog
    from edgepipe.stages import export_tflite

    tf = import_tensorflow()
    model = _softmax_head(tmp_path / "model.onnx")
    w = numpy_helper.to_array(model.graph.initializer[0])[:, :, 0, 0].T  # [8, CHANNELS]

    @tf.function(input_signature=[tf.TensorSpec([1, 8, 4, 4], tf.float32)])
    def same(x):  # noqa: ANN001, ANN202 - the ONNX model's function, in TF
        pooled = tf.reduce_mean(tf.transpose(x, [0, 2, 3, 1]), axis=[1, 2]) @ w
        return tf.reshape(tf.nn.softmax(pooled, axis=-1), [1, CHANNELS, 1, 1])

    seen: list[str] = []

    def fake_onnx2tf(onnx_path: Path, out_path: Path, calibration: Dataset, names: list[str], scratch: Path,
                     route: Any) -> Path:
        seen.append(route.name)
        if not route.rewrites:
            raise onnx_to_tflite.ConversionError("onnx2tf failed (exit 1): ValueError: tf.nn.softmax", "/head/Softmax")
        converter = tf.lite.TFLiteConverter.from_concrete_functions([same.get_concrete_function()])
        out_path.write_bytes(converter.convert())
        return out_path

    monkeypatch.setattr(onnx_to_tflite, "convert_onnx_to_tflite", fake_onnx2tf)
    inputs = _inputs(tmp_path / "model.onnx")
    stages = StageLog()
    made = export_tflite.tflite_of_onnx(inputs, tmp_path / "model.onnx", model, tmp_path, tmp_path, stages)
    rewrite = "onnx2tf with its Softmax over the last axis (transposes around it)"
    assert seen == ["onnx2tf", rewrite]
    assert made is not None and made.route == rewrite and not stages.failures
    (record,) = [r for r in stages.records if r.status == "ran"]
    assert record.detail.startswith(f"float TFLite through {rewrite} (input shapes kept after the previous route "
                                    "failed: TFLite conversion failed: onnx2tf failed (exit 1): ValueError")
    assert f"route: {rewrite}; float check: worst output cosine 1.0" in record.detail


def _inputs(path: Path) -> Any:
    from edgepipe.load import load_model
    from edgepipe.stages.inputs import BuildInputs

    return BuildInputs(model=load_model(path), calibration=_calibration(), evaluation=None, targets=())
