"""Constraints on convolution, pooling and resize geometry: kernel, stride, dilation, padding, feature-map size."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint


def _pair(node: OpNode, key: str) -> tuple[int, int]:
    value = node.attrs.get(key) or (1, 1)
    return (int(value[0]), int(value[-1])) if len(value) else (1, 1)


@constraint
def kernel_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Kernel height and width are each at most {param}."""
    kh, kw = _pair(node, "kernel")
    worst = max(kh, kw)
    return worst <= limit, f"{node.op} kernel {kh}x{kw} > {limit}" if worst > limit else f"kernel {kh}x{kw}"


@constraint
def kernel_height_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Kernel height is at most {param}."""
    kh, _ = _pair(node, "kernel")
    return kh <= limit, f"{node.op} kernel height {kh} > {limit}" if kh > limit else f"kernel height {kh}"


@constraint
def kernel_product_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Kernel height times width is at most {param}."""
    kh, kw = _pair(node, "kernel")
    return kh * kw <= limit, f"{node.op} kernel {kh}x{kw} = {kh * kw} > {limit}" if kh * kw > limit else "kernel ok"


@constraint
def same_padding_kernel_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """With padding other than VALID, kernel height and width are each at most {param}."""
    if node.attrs.get("padding") == "valid":
        return True, "valid padding"
    kh, kw = _pair(node, "kernel")
    worst = max(kh, kw)
    return worst <= limit, f"{node.op} {node.attrs.get('padding')} padding kernel {kh}x{kw} > {limit}" \
        if worst > limit else "kernel ok"


@constraint
def stride_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Stride in height and width is each at most {param}."""
    sh, sw = _pair(node, "strides")
    worst = max(sh, sw)
    return worst <= limit, f"{node.op} stride {worst} > {limit}" if worst > limit else f"stride {sh}x{sw}"


@constraint
def strides_powers_of_two(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Every stride is a power of two."""
    strides = [int(s) for s in node.attrs.get("strides") or (1, 1)]
    odd = [s for s in strides if s & (s - 1)]
    if odd and required:
        return False, f"{node.op} stride {odd[0]} is not a power of two"
    return True, f"strides {'x'.join(str(s) for s in strides)}"


@constraint
def stride_max_unless_valid(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Stride above {param} is only supported with VALID padding and dilation 1."""
    sh, sw = _pair(node, "strides")
    worst = max(sh, sw)
    if worst <= limit:
        return True, f"stride {sh}x{sw}"
    valid = node.attrs.get("padding") == "valid" and _pair(node, "dilations") == (1, 1)
    return valid, f"{node.op} stride {worst} > {limit} with {node.attrs.get('padding')} padding"


@constraint
def dilation_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Dilation in height and width is each at most {param}."""
    dh, dw = _pair(node, "dilations")
    worst = max(dh, dw)
    return worst <= limit, f"{node.op} dilation {worst} > {limit}" if worst > limit else f"dilation {dh}x{dw}"


@constraint
def padding_in(node: OpNode, graph: OpGraph, allowed: list[str]) -> Verdict:
    """Padding is one of {param}."""
    padding = str(node.attrs.get("padding", "valid"))
    return padding in allowed, f"{node.op} padding {padding} not in {', '.join(allowed)}"


@constraint
def ifm_hw_product_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """The input's height times width (as a 4-D NHWC tensor) is below {param}."""
    shape = node.inputs[0].shape if node.inputs else None
    if not shape:
        return True, "no shape"
    padded = (1,) * (4 - len(shape)) + tuple(shape) if len(shape) < 4 else tuple(shape)
    h, w = padded[-3], padded[-2]
    if not isinstance(h, int) or not isinstance(w, int):
        return True, "dynamic"
    return h * w < limit, f"{node.op} input height x width {h * w} >= {limit}" if h * w >= limit else "fits"


@constraint
def depthwise_multiplier_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Depthwise convolutions have a depth multiplier of at most {param}."""
    multiplier = int(node.attrs.get("DepthMultiplier", 1) or 1)
    return multiplier <= limit, f"{node.op} depth multiplier {multiplier} > {limit}" if multiplier > limit \
        else f"depth multiplier {multiplier}"


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


@constraint
def dilated_reach_channels_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """On no axis does the dilated kernel's reach ((kernel - 1) x dilation + 1, at most the input's length on that
    axis) times the input channels (rounded up to 32) reach {param}.

    The compiler cannot allocate such a convolution (``QNN_COMMON_ERROR_MEM_ALLOC``).
    """
    data = node.inputs[0].shape if node.inputs else None
    weights = node.inputs[1].shape if len(node.inputs) > 1 else None
    if not data or not weights or len(data) < 3 or len(weights) != len(data):
        return True, "no shape"
    kernel = [v for v in weights[2:] if isinstance(v, int)]
    lengths = [v for v in data[2:] if isinstance(v, int)]
    dilations = list(node.attrs.get("dilations") or ()) or [1] * len(kernel)
    if not isinstance(data[1], int) or len(kernel) != len(weights) - 2 or len(lengths) != len(data) - 2 \
            or len(dilations) != len(kernel):
        return True, "dynamic"
    channels = _round_up(data[1], 32)
    reach = max(min((k - 1) * d + 1, n) for k, d, n in zip(kernel, dilations, lengths, strict=True))
    worst = channels * reach
    return worst < limit, (f"{node.op} dilated reach {reach} x {channels} channels = {worst} >= {limit}"
                           if worst >= limit else f"reach {reach} x {channels} channels")


def _text(value: object) -> str:
    """An ONNX string attribute as text (the reader keeps it as bytes)."""
    return value.decode() if isinstance(value, bytes) else str(value)


@constraint
def align_corners_whole_steps(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A linear or cubic Resize that aligns corners steps a whole number of input pixels per output pixel on every
    resized axis: (out - 1) / (in - 1) is an integer."""
    mode = _text(node.attrs.get("mode", "nearest"))
    if not required or mode == "nearest" or \
            _text(node.attrs.get("coordinate_transformation_mode", "half_pixel")) != "align_corners":
        return True, "does not align corners" if mode != "nearest" else "nearest"
    shape_in = node.inputs[0].shape if node.inputs else None
    shape_out = node.outputs[0].shape if node.outputs else None
    sizes_in = [int(d) for d in shape_in if d is not None] if shape_in else []
    sizes_out = [int(d) for d in shape_out if d is not None] if shape_out else []
    if not sizes_in or len(sizes_in) != len(shape_in or ()) or len(sizes_out) != len(sizes_in):
        return True, "no static shapes"
    for before, after in zip(sizes_in, sizes_out, strict=True):
        if before != after and (before in (0, 1) or (after - 1) % (before - 1)):
            return False, (f"Resize aligns corners from {sizes_in} to {sizes_out}: {before} -> {after} "
                           f"is not a whole number of steps")
    return True, "whole steps"


@constraint
def padding_counted(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """An average pooling that pads counts the padding in its divisor (``count_include_pad``) or pads nothing
    (ONNX's default and tf2onnx's SAME pooling leave it out)."""
    pads = [int(p) for p in node.attrs.get("pads") or ()]
    if not required or not any(pads) or int(node.attrs.get("count_include_pad", 0)):
        return True, "counts its padding" if any(pads) else "no padding"
    return False, f"{node.op} pads {pads} without counting the padding (count_include_pad = 0)"


@constraint
def conv1d_explicit_pads(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A 1-D convolution (a rank-3 input) spells its padding as ``pads``, not ``auto_pad`` SAME: the compiler
    refuses the model otherwise.

    Fix: export the model with explicit padding.
    """
    data = node.inputs[0] if node.inputs else None
    one_d = data is not None and data.shape is not None and len(data.shape) == 3
    if not required or not one_d or node.attrs.get("padding") != "same":
        return True, "explicit or no padding" if one_d else "not a 1-D convolution"
    return False, f"{node.op} '{node.name}' is a 1-D convolution padded by auto_pad SAME"
