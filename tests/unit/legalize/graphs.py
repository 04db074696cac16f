"""Tiny float ONNX graphs, one per legalization rewrite, and a target profile whose accelerator lacks each form.

Every graph has one float32 input ``x`` of a fixed shape and computes its op the way exporters write it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from edgepipe.targets.profile import OpTable, TargetProfile

#: Ops every test target's accelerator runs (without constraints), unless a test takes one out.
COMMON_OPS = ("Conv", "Mul", "Add", "Sub", "Div", "Clip", "Relu", "Concat", "Reshape", "Transpose", "Abs", "Exp",
              "Reciprocal", "Sign", "ReduceMean", "Sqrt", "Tanh", "Softmax", "MaxPool", "AveragePool",
              "GlobalAveragePool", "GlobalMaxPool", "SpaceToDepth", "Slice", "Erf")


def profile(without: tuple[str, ...] = (), **constraints: dict[str, Any]) -> TargetProfile:
    """An NPU that runs :data:`COMMON_OPS` but ``without`` (ops ``constraints`` names get those constraints)."""
    ops: dict[str, dict[str, Any]] = {op: {} for op in COMMON_OPS if op not in without}
    ops.update(constraints)
    return TargetProfile(name="test-npu", description="test", device_class="npu", deploy_formats=["onnx"],
                         checked_artifact={"format": "onnx", "precision": "int8"},  # type: ignore[arg-type]
                         onnx=OpTable.model_validate({"ops": ops, "generic": {"static_shapes": True}}))


def _model(nodes: list[Any], shape: list[int], inits: dict[str, np.ndarray],
           opset: int) -> Any:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)  # the output's shape
    onnx.checker.check_model(model, full_check=True)
    return model


def save(model: Any, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def hard_sigmoid(opset: int = 13) -> Any:
    """Conv → HardSigmoid → Mul with the Conv's output (a squeeze-excitation gate), as PaddleOCR writes it."""
    weights = np.random.default_rng(0).standard_normal((4, 4, 1, 1)).astype(np.float32)
    return _model([helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                   helper.make_node("HardSigmoid", ["c"], ["h"], name="gate", alpha=0.2, beta=0.5),
                   helper.make_node("Mul", ["c", "h"], ["y"], name="scale")], [1, 4, 6, 6], {"w": weights},
                  opset)


def hard_swish() -> Any:
    return _model([helper.make_node("HardSwish", ["x"], ["y"], name="act")], [1, 4, 6, 6], {}, 14)


def pool(op: str, kernel: int, stride: int, pad: int = 0, size: int = 32) -> Any:
    """One MaxPool or AveragePool over a [1, 3, size, size] map."""
    return _model([helper.make_node(op, ["x"], ["y"], name="pool", kernel_shape=[kernel, kernel],
                                    strides=[stride, stride], pads=[pad] * 4)], [1, 3, size, size], {}, 13)


def global_pool(op: str, size: int = 36) -> Any:
    return _model([helper.make_node(op, ["x"], ["y"], name="pool")], [1, 3, size, size], {}, 13)


def focus(order: tuple[tuple[int, int], ...] = ((0, 0), (1, 0), (0, 1), (1, 1)), chained: bool = True) -> Any:
    """YOLOv5's Focus: x[..., dh::2, dw::2] for four offsets, concatenated on channels, then a Conv."""
    big = np.array([2 ** 31 - 1], np.int64)
    inits: dict[str, np.ndarray] = {"end": big, "two": np.array([2], np.int64),
                                    "ax2": np.array([2], np.int64), "ax3": np.array([3], np.int64),
                                    "zero": np.array([0], np.int64), "one": np.array([1], np.int64),
                                    "w": np.random.default_rng(1).standard_normal((8, 12, 3, 3)).astype(np.float32)}
    nodes, parts = [], []
    for index, (dh, dw) in enumerate(order):
        start_h, start_w = ("zero", "one")[dh], ("zero", "one")[dw]
        if chained:
            nodes += [helper.make_node("Slice", ["x", start_h, "end", "ax2", "two"], [f"r{index}"],
                                       name=f"rows{index}"),
                      helper.make_node("Slice", [f"r{index}", start_w, "end", "ax3", "two"], [f"p{index}"],
                                       name=f"cols{index}")]
        else:
            inits[f"s{index}"] = np.array([dh, dw], np.int64)
            inits.setdefault("ends", np.array([2 ** 31 - 1] * 2, np.int64))
            inits.setdefault("axes", np.array([2, 3], np.int64))
            inits.setdefault("steps", np.array([2, 2], np.int64))
            nodes.append(helper.make_node("Slice", ["x", f"s{index}", "ends", "axes", "steps"], [f"p{index}"],
                                          name=f"slice{index}"))
        parts.append(f"p{index}")
    nodes += [helper.make_node("Concat", parts, ["cat"], name="focus", axis=1),
              helper.make_node("Conv", ["cat", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])]
    return _model(nodes, [1, 3, 8, 8], inits, 13)


def gelu(approximate: str = "none") -> Any:
    return _model([helper.make_node("Gelu", ["x"], ["y"], name="gelu", approximate=approximate)], [1, 16, 32],
                  {}, 20)


def erf_gelu() -> Any:
    """GELU written out as exporters do: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    inits = {"k": np.array(np.sqrt(2.0), np.float32), "one": np.array(1.0, np.float32),
             "half": np.array(0.5, np.float32)}
    return _model([helper.make_node("Div", ["x", "k"], ["d"], name="div"),
                   helper.make_node("Erf", ["d"], ["e"], name="erf"),
                   helper.make_node("Add", ["e", "one"], ["a"], name="add"),
                   helper.make_node("Mul", ["x", "a"], ["m"], name="mul"),
                   helper.make_node("Mul", ["m", "half"], ["y"], name="half")], [1, 16, 32], inits, 13)


def layer_norm(bias: bool = True) -> Any:
    rng = np.random.default_rng(2)
    inits = {"scale": rng.standard_normal(32).astype(np.float32)}
    if bias:
        inits["bias"] = rng.standard_normal(32).astype(np.float32)
    return _model([helper.make_node("LayerNormalization", ["x", "scale", *(["bias"] if bias else [])], ["y"],
                                    name="norm", axis=-1, epsilon=1e-5)], [1, 16, 32], inits, 17)


def softmax(axis: int = 1) -> Any:
    return _model([helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=axis)], [1, 5, 7, 3], {}, 13)


def channel_shuffle(groups: int = 2) -> Any:
    """ShuffleNet's channel shuffle: Reshape to [N, g, C/g, H, W], swap the group axes, Reshape back."""
    inits = {"split": np.array([1, groups, 8 // groups, 4, 4], np.int64), "merge": np.array([1, 8, 4, 4], np.int64)}
    return _model([helper.make_node("Reshape", ["x", "split"], ["r"], name="split"),
                   helper.make_node("Transpose", ["r"], ["t"], name="shuffle", perm=[0, 2, 1, 3, 4]),
                   helper.make_node("Reshape", ["t", "merge"], ["y"], name="merge")], [1, 8, 4, 4], inits, 13)


def div_by_constant() -> Any:
    divisor = np.linspace(0.5, 3.0, 6).astype(np.float32).reshape(1, 6, 1, 1)
    return _model([helper.make_node("Div", ["x", "c"], ["y"], name="div")], [1, 6, 4, 4], {"c": divisor}, 13)


def samples(model: Any, count: int = 4, seed: int = 0) -> list[list[np.ndarray]]:
    """Standard-normal inputs of the model's input shape (values around the ranges activations take)."""
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(seed)
    return [[(3.0 * rng.standard_normal(shape)).astype(np.float32)] for _ in range(count)]


def gated_classifier(path: Path, count: int = 24) -> tuple[Path, Path, Path]:
    """A small classifier with a HardSigmoid gate (PaddleOCR's squeeze-excitation), its calibration data and its
    evaluation data labelled by the float model's own top-1: (model, calibration, evaluation)."""
    import onnxruntime as ort

    rng = np.random.default_rng(4)
    inits = {"w": rng.normal(0, 0.5, (8, 3, 3, 3)).astype(np.float32), "b": np.zeros(8, np.float32),
             "fc": rng.normal(0, 0.5, (8, 4)).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("HardSigmoid", ["c"], ["h"], name="gate", alpha=0.2, beta=0.5),
             helper.make_node("Mul", ["c", "h"], ["g"], name="gated"),
             helper.make_node("GlobalAveragePool", ["g"], ["p"], name="pool"),
             helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
             helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc")]
    model = _model(nodes, [1, 3, 8, 8], inits, 13)
    save(model, path)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    calib, evaluation = rng.random((count, 3, 8, 8), dtype=np.float32), rng.random((count, 3, 8, 8), dtype=np.float32)
    labels = [int(np.argmax(session.run(None, {"x": sample[None]})[0])) for sample in evaluation]
    np.savez(path.parent / "calib.npz", x=calib)
    np.savez(path.parent / "eval.npz", x=evaluation, labels=np.array(labels))
    return path, path.parent / "calib.npz", path.parent / "eval.npz"
