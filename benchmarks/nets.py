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


if __name__ == "__main__":
    for net in make_nets(Path(sys.argv[1])):
        print(net)
