"""Generated ONNX nets of several sizes for the host prediction benchmark (fixed seeds, batch 1, NCHW).

``python benchmarks/nets.py OUT`` writes them all. Each is a plain stack of the
layers real CNNs and MLPs use, at a size between 1 MMAC and 2 GMAC.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


class _Builder:
    def __init__(self, name: str, shape: list[int]):
        self.name, self.shape = name, shape
        self.nodes: list = []
        self.inits: list = []
        self.last = "x"
        self.count = 0
        self.rng = np.random.default_rng(len(name))

    def _new(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def _const(self, array: np.ndarray) -> str:
        from onnx import numpy_helper

        name = self._new("w")
        self.inits.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv(self, cin: int, cout: int, k: int = 3, stride: int = 1, group: int = 1, relu: bool = True) -> _Builder:
        from onnx import helper

        w = self._const(self.rng.normal(0, 0.1, (cout, cin // group, k, k)))
        b = self._const(np.zeros(cout))
        out = self._new("c")
        self.nodes.append(helper.make_node("Conv", [self.last, w, b], [out], pads=[k // 2] * 4,
                                           strides=[stride, stride], group=group))
        self.last = out
        return self.relu() if relu else self

    def relu(self) -> _Builder:
        from onnx import helper

        out = self._new("r")
        self.nodes.append(helper.make_node("Relu", [self.last], [out]))
        self.last = out
        return self

    def residual(self, channels: int) -> _Builder:
        from onnx import helper

        skip = self.last
        self.conv(channels, channels).conv(channels, channels, relu=False)
        out = self._new("a")
        self.nodes.append(helper.make_node("Add", [self.last, skip], [out]))
        self.last = out
        return self.relu()

    def add(self, skip: str) -> _Builder:
        """The elementwise sum of the last output and ``skip`` (a residual connection without the ReLU)."""
        from onnx import helper

        out = self._new("a")
        self.nodes.append(helper.make_node("Add", [self.last, skip], [out]))
        self.last = out
        return self

    def pool(self, kind: str = "MaxPool") -> _Builder:
        from onnx import helper

        out = self._new("p")
        self.nodes.append(helper.make_node(kind, [self.last], [out], kernel_shape=[2, 2], strides=[2, 2]))
        self.last = out
        return self

    def head(self, channels: int, classes: int = 10) -> _Builder:
        from onnx import helper

        gap, flat = self._new("g"), self._new("f")
        self.nodes += [helper.make_node("GlobalAveragePool", [self.last], [gap]),
                       helper.make_node("Flatten", [gap], [flat])]
        self.last = flat
        return self.gemm(channels, classes, relu=False)

    def gemm(self, k: int, n: int, relu: bool = True) -> _Builder:
        from onnx import helper

        w, b = self._const(self.rng.normal(0, 0.05, (k, n))), self._const(np.zeros(n))
        out = self._new("m")
        self.nodes.append(helper.make_node("Gemm", [self.last, w, b], [out]))
        self.last = out
        return self.relu() if relu else self

    def save(self, path: Path) -> Path:
        import onnx
        from onnx import TensorProto, helper

        graph = helper.make_graph(self.nodes, self.name, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                         self.shape)],
                                  [helper.make_tensor_value_info(self.last, TensorProto.FLOAT, [1, "n"])], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.checker.check_model(model)
        onnx.save(model, str(path))
        return path


def make_nets(out: Path) -> list[Path]:
    """Write the generated nets into ``out``; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    nets = []
    b = _Builder("gen_cnn_small", [1, 3, 32, 32])
    nets.append(b.conv(3, 16).conv(16, 16).pool().conv(16, 32).head(32).save(out / "gen_cnn_small.onnx"))
    b = _Builder("gen_cnn_medium", [1, 3, 64, 64])
    b.conv(3, 32).conv(32, 32).pool().conv(32, 64).conv(64, 64).pool().conv(64, 128)
    nets.append(b.head(128).save(out / "gen_cnn_medium.onnx"))
    b = _Builder("gen_cnn_large", [1, 3, 112, 112])
    b.conv(3, 64, stride=2).conv(64, 64).conv(64, 64).pool().conv(64, 128).conv(128, 128).pool().conv(128, 256)
    nets.append(b.head(256).save(out / "gen_cnn_large.onnx"))
    b = _Builder("gen_mobilenet_like", [1, 3, 112, 112])
    b.conv(3, 32, stride=2)
    for cin, cout, stride in [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1)]:
        b.conv(cin, cin, stride=stride, group=cin).conv(cin, cout, k=1)
    nets.append(b.head(256).save(out / "gen_mobilenet_like.onnx"))
    b = _Builder("gen_resnet_like", [1, 3, 56, 56])
    b.conv(3, 64).residual(64).residual(64).pool().conv(64, 128).residual(128)
    nets.append(b.head(128).save(out / "gen_resnet_like.onnx"))
    b = _Builder("gen_mlp", [1, 1024])
    nets.append(b.gemm(1024, 2048).gemm(2048, 2048).gemm(2048, 1000, relu=False).save(out / "gen_mlp.onnx"))
    return nets


def make_held_out_nets(out: Path) -> list[Path]:
    """The held-out nets of benchmarks/models.toml: shapes and op mixes none of the tuning models has
    (5×5 and 1×1 kernels, 96/160/192 channels, non-square and odd inputs, strided convs instead of pooling,
    bottlenecks, a tall MLP). Nothing may be tuned on them."""
    out.mkdir(parents=True, exist_ok=True)
    nets = []
    b = _Builder("held_wide_cnn", [1, 3, 96, 96])
    b.conv(3, 96, k=5, stride=2).conv(96, 96).pool().conv(96, 192, k=1).conv(192, 192)
    nets.append(b.head(192).save(out / "held_wide_cnn.onnx"))
    b = _Builder("held_deep_narrow", [1, 1, 80, 80])
    b.conv(1, 8)
    for _ in range(10):
        b.conv(8, 8)
    nets.append(b.pool().conv(8, 24).head(24).save(out / "held_deep_narrow.onnx"))
    b = _Builder("held_dw_separable", [1, 3, 160, 160])
    b.conv(3, 24, stride=2)
    for cin, cout, stride in [(24, 48, 2), (48, 48, 1), (48, 96, 2), (96, 160, 2)]:
        b.conv(cin, cin, k=5, stride=stride, group=cin).conv(cin, cout, k=1)
    nets.append(b.head(160).save(out / "held_dw_separable.onnx"))
    b = _Builder("held_bottleneck_res", [1, 3, 72, 72])
    b.conv(3, 96, stride=2)
    for _ in range(2):
        skip = b.last
        b.conv(96, 24, k=1).conv(24, 24).conv(24, 96, k=1, relu=False).add(skip).relu()
    nets.append(b.head(96).save(out / "held_bottleneck_res.onnx"))
    b = _Builder("held_mlp_tall", [1, 256])
    for k, n in [(256, 768), (768, 768), (768, 768), (768, 768)]:
        b.gemm(k, n)
    nets.append(b.gemm(768, 100, relu=False).save(out / "held_mlp_tall.onnx"))
    b = _Builder("held_strided_cnn", [1, 3, 128, 96])
    b.conv(3, 32, stride=2).conv(32, 64, stride=2).conv(64, 128, stride=2).conv(128, 128)
    nets.append(b.head(128).save(out / "held_strided_cnn.onnx"))
    return nets


if __name__ == "__main__":
    for net in [*make_nets(Path(sys.argv[1])), *make_held_out_nets(Path(sys.argv[1]))]:
        print(net)
