"""3-D MaxPools and AveragePools written as 2-D pools, so that onnx2tf converts them into TFLite builtins.

TFLite has ``CONV_3D`` but no 3-D pooling: onnx2tf writes ``tf.nn.max_pool3d``/``avg_pool3d``, which only the
Flex delegate runs (``FlexMaxPool3D``), so a volumetric or video network (a brain-MRI segmenter, a remote-pulse
estimator) gets no TFLite an NPU or LiteRT's builtin resolver takes. Pooling is separable: over a box window
the max is the max over depth of the max over height and width, and the mean is the mean over depth of the
mean over height and width, padding, ``ceil_mode`` and ``count_include_pad`` included, because the valid part
of a window is a box as well. Each 3-D pool of a static-shaped input becomes::

    Reshape [N, C*D, H, W] -> 2-D pool (kh, kw) -> Reshape [N, C, D, H'*W'] -> 2-D pool (kd, 1)
    -> Reshape [N, C, D', H', W']

with a step left out where its window, stride and padding are 1, 1 and 0.
"""

from __future__ import annotations

from typing import Any

from edgepipe.graph.onnx_edit import attributes
from edgepipe.graph.onnx_types import static_types

_POOLS = ("MaxPool", "AveragePool")


def _separable(node: Any, attrs: dict[str, Any]) -> bool:
    """A 3-D pool whose attributes carry over to 2-D pools: explicit padding, unit dilation, only the pooled
    output read (no MaxPool indices)."""
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    return (node.op_type in _POOLS and len(attrs.get("kernel_shape", [])) == 3
            and auto_pad in (b"NOTSET", b"VALID", "NOTSET", "VALID")
            and all(d == 1 for d in attrs.get("dilations", [1, 1, 1]))
            and attrs.get("storage_order", 0) == 0 and (len(node.output) == 1 or not node.output[1]))


def _pool(node: Any, attrs: dict[str, Any], source: str, out: str, kernel: list[int], strides: list[int],
          pads: list[int]) -> Any:
    """A 2-D pool of ``node``'s kind with its ``ceil_mode`` and ``count_include_pad``."""
    from onnx import helper

    kept = {k: attrs[k] for k in ("ceil_mode", "count_include_pad") if k in attrs}
    return helper.make_node(node.op_type, [source], [out], name=out, kernel_shape=kernel, strides=strides,
                            pads=pads, **kept)


def _reshape(model: Any, source: str, out: str, shape: list[int]) -> Any:
    import numpy as np
    from onnx import helper, numpy_helper

    model.graph.initializer.append(numpy_helper.from_array(np.array(shape, np.int64), f"{out}_shape"))
    return helper.make_node("Reshape", [source, f"{out}_shape"], [out], name=out)


def _as_2d(model: Any, node: Any, attrs: dict[str, Any], shape: tuple[int, ...],
           out_shape: tuple[int, ...]) -> list[Any]:
    """The nodes computing the 3-D pool ``node`` (input ``shape``, output ``out_shape``) with 2-D pools."""
    (n, c, d, h, w), (_, _, d_out, h_out, w_out) = shape, out_shape
    kd, kh, kw = attrs["kernel_shape"]
    sd, sh, sw = attrs.get("strides", [1, 1, 1])
    pads = [0] * 6 if attrs.get("auto_pad", b"NOTSET") in (b"VALID", "VALID") else list(attrs.get("pads", [0] * 6))
    base = f"{node.name or node.output[0]}/as2d"
    nodes, current = [], node.input[0]
    if (kh, kw, sh, sw) != (1, 1, 1, 1) or any(pads[k] for k in (1, 2, 4, 5)):
        nodes += [_reshape(model, current, f"{base}/planes", [n, c * d, h, w]),
                  _pool(node, attrs, f"{base}/planes", f"{base}/plane_pool", [kh, kw], [sh, sw],
                        [pads[1], pads[2], pads[4], pads[5]])]
        current = f"{base}/plane_pool"
    if (kd, sd) != (1, 1) or pads[0] or pads[3]:
        nodes += [_reshape(model, current, f"{base}/depth", [n, c, d, h_out * w_out]),
                  _pool(node, attrs, f"{base}/depth", f"{base}/depth_pool", [kd, 1], [sd, 1],
                        [pads[0], 0, pads[3], 0])]
        current = f"{base}/depth_pool"
    return [*nodes, _reshape(model, current, node.output[0], [n, c, d_out, h_out, w_out])]


def pools_3d_as_2d(model: Any) -> int:
    """Rewrite, in place, every separable 3-D MaxPool and AveragePool of ``model``'s main graph whose input and
    output shapes are static; returns how many."""
    candidates = [node for node in model.graph.node if node.op_type in _POOLS
                  and len(attributes(node).get("kernel_shape", [])) == 3]
    if not candidates:
        return 0
    types = static_types(model)
    rewritten: dict[int, list[Any]] = {}
    for node in candidates:
        attrs = attributes(node)
        shape, out_shape = types.get(node.input[0], (0, ()))[1], types.get(node.output[0], (0, ()))[1]
        if _separable(node, attrs) and len(shape) == 5 and len(out_shape) == 5:
            rewritten[id(node)] = _as_2d(model, node, attrs, shape, out_shape)
    if rewritten:
        nodes = [made for node in model.graph.node for made in rewritten.get(id(node), [node])]
        del model.graph.node[:]
        model.graph.node.extend(nodes)
    return len(rewritten)
