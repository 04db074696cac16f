"""Fake quantization of a ``torch.fx.GraphModule`` the way ONNX Runtime's QDQ PTQ quantizes it.

Used by QAT of ONNX inputs (:mod:`edgepipe.quantize.qat_onnx`) on the onnx2torch form of the
graph ORT quantizes. It mirrors the int8 model the recipe gives:

- weights of Conv / ConvTranspose / Linear layers: symmetric int8 in [-127, 127], one scale
  per output channel (per-channel recipes) or per tensor, recomputed from the current weights
  at every step (ORT computes them the same way from the written-back weights);
- activations: with the quantization parameters read from ORT's QDQ model of the same graph
  (:mod:`.qdq_params`), exactly the tensors it quantizes, at its scale and zero point. Without
  them (a graph ORT has not quantized), every node output an int8 runtime keeps as a tensor
  (not one consumed only by a BatchNormalization or a ReLU/Clip, which the runtimes fuse into
  the layer before) and the graph inputs, asymmetric 8-bit with the min/max range seen on the
  calibration data, frozen after :func:`calibrate_ranges`.

Gradients pass through rounding unchanged (the straight-through estimator of
``torch.fake_quantize_*``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edgepipe.quantize.onnx_to_torch import conv_layer, conv_layers, run_module
from edgepipe.quantize.qdq_params import QdqModel, QParams

#: Modules whose input is fused into the layer that produces it by int8 runtimes (no QDQ in between).
FUSED_CONSUMERS = ("BatchNorm", "ReLU", "OnnxClip", "Clip", "ReLU6", "Hardtanh")


def _torch() -> Any:
    import torch  # heavy optional dependency

    return torch


def _weight_axis(layer: Any) -> int:
    """The output-channel axis of a layer's weight: 1 for transposed convolutions, else 0."""
    nn = _torch().nn
    return 1 if isinstance(layer, (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)) else 0


def make_weight_quantizer(axis: int, per_channel: bool, floor: Any = None) -> Any:
    """A parametrization module: ``weight -> fake_quant(weight)`` (symmetric int8, narrow range).

    ``floor``: the smallest scale per channel (ORT raises the weight scale of a channel whose int32
    bias would overflow at max|w| / 127); ``scale(weight)`` is the scale ``forward`` rounds at.
    """
    torch = _torch()

    class WeightFakeQuant(torch.nn.Module):  # type: ignore[name-defined,misc]
        def scale(self, weight: Any) -> Any:
            if per_channel:
                dims = [d for d in range(weight.dim()) if d != axis]
                bound = weight.detach().abs().amax(dim=dims) if dims else weight.detach().abs()
            else:
                bound = weight.detach().abs().max()
            scale = torch.clamp(bound, min=1e-8) / 127.0
            return scale if floor is None else torch.maximum(scale, floor)

        def forward(self, weight: Any) -> Any:
            scale = self.scale(weight)
            if per_channel:
                zero = torch.zeros_like(scale, dtype=torch.int32)
                return torch.fake_quantize_per_channel_affine(weight, scale, zero, axis, -127, 127)
            return torch.fake_quantize_per_tensor_affine(weight, scale, torch.tensor(0, dtype=torch.int32),
                                                         -127, 127)

    return WeightFakeQuant()


def make_bias_quantizer(weight_quantizer: Any, layer: Any, input_scale: float) -> Any:
    """A parametrization module rounding a layer's bias to int32 at input scale × weight scale, as ORT does."""
    torch = _torch()

    def latent_weight() -> Any:  # read through a closure: the layer is not a child of its own parametrization
        return layer.parametrizations.weight.original

    class BiasFakeQuant(torch.nn.Module):  # type: ignore[name-defined,misc]
        def forward(self, bias: Any) -> Any:
            step = (input_scale * weight_quantizer.scale(latent_weight())).reshape(-1)
            return bias + (torch.round(bias / step) * step - bias).detach()  # straight-through

    return BiasFakeQuant()


def make_activation_quantizer(fixed: QParams | None = None, symmetric: bool = False) -> Any:
    """A module that fake-quantizes its input (when ``active``) the way ORT's QDQ model does.

    ``fixed``: the scale and zero point of the tensor's QuantizeLinear in ORT's model; without it the
    8-bit range is the min/max recorded while ``observing``, always holding zero as in ORT;
    ``symmetric`` gives int8 in [-127, 127] around zero, else the 256 steps of the range.
    """
    torch = _torch()

    class ActivationFakeQuant(torch.nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.low, self.high = 0.0, 0.0
            self.observing, self.active = False, fixed is not None

        def forward(self, x: Any) -> Any:
            if not isinstance(x, torch.Tensor) or not x.is_floating_point():
                return x
            if fixed is not None:
                return torch.fake_quantize_per_tensor_affine(x, fixed.scale, fixed.zero_point, fixed.low, fixed.high)
            if self.observing:
                self.low = min(self.low, float(x.detach().min()))
                self.high = max(self.high, float(x.detach().max()))
            low, high = min(self.low, 0.0), max(self.high, 0.0)
            if not self.active or high - low <= 0:
                return x
            if symmetric:
                return torch.fake_quantize_per_tensor_affine(x, max(-low, high) / 127.0, 0, -127, 127)
            scale = (high - low) / 255.0
            zero = int(np.clip(round(-low / scale), 0, 255))
            return torch.fake_quantize_per_tensor_affine(x, scale, zero, 0, 255)

    return ActivationFakeQuant()


def _onnx_tensor(node: Any, tensors: dict[str, str]) -> str | None:
    """The ONNX tensor an fx node computes (graph inputs and single-output layers), else None."""
    if node.op == "placeholder":
        return tensors.get(node.name)
    if node.op == "call_module":
        return tensors.get(str(node.target))
    return None


def _fused_only(node: Any, modules: dict[str, Any]) -> bool:
    """True when every user of ``node`` is a module the runtimes fuse into its producer."""
    users = list(node.users)
    return bool(users) and all(u.op == "call_module" and any(f in type(modules[u.target]).__name__
                                                                 for f in FUSED_CONSUMERS) for u in users)


def insert_fake_quant(module: Any, per_channel: bool, reference: QdqModel | None = None,
                      tensors: dict[str, str] | None = None, sources: dict[str, tuple[str, str]] | None = None,
                      symmetric: bool = False) -> list[Any]:
    """Fake-quantize ``module``'s layer weights and activations in place; returns the activation quantizers.

    ``reference`` (ORT's QDQ model of the same graph, :func:`~edgepipe.quantize.qdq_params.read_qdq`) with
    ``tensors`` (fx node → ONNX tensor) and ``sources`` (parameter → ONNX initializer), both from
    :class:`~edgepipe.quantize.onnx_to_torch.TrainableOnnx`: exactly what ORT quantizes is quantized, as
    it does it — activations at its scale and zero point, weights with its raised scales, biases in
    int32, the constants nothing trains at its dequantized values — so training sees the int8 model's
    rounding. Without it every layer weight and kept activation is quantized and
    :func:`calibrate_ranges` sets min/max ranges.
    """
    modules = dict(module.named_modules())
    _quantize_layers(module, per_channel, reference, tensors or {}, sources or {})
    if reference is not None:
        _use_dequantized_constants(module, reference, {onnx for onnx, _ in (sources or {}).values()})
    graph = module.graph
    quantizers: list[Any] = []
    for node in list(graph.nodes):
        if node.op not in ("placeholder", "call_module", "call_function", "call_method") or _fused_only(node, modules):
            continue
        fixed = None
        if reference is not None:
            tensor = _onnx_tensor(node, tensors or {})
            if tensor is None or tensor not in reference.activations:
                continue  # ORT leaves this tensor float (or it has no single ONNX tensor to look up)
            fixed = reference.activations[tensor]
        name = f"edgepipe_fq_{len(quantizers)}"
        quantizer = make_activation_quantizer(fixed, symmetric)
        module.add_module(name, quantizer)
        quantizers.append(quantizer)
        with graph.inserting_after(node):
            wrapped = graph.call_module(name, (node,))
        node.replace_all_uses_with(wrapped, delete_user_cb=lambda user, w=wrapped: user is not w)
    graph.lint()
    module.recompile()
    return quantizers


def _layer_inputs(module: Any, tensors: dict[str, str]) -> dict[str, str]:
    """Layer (module name, and that of the convolution inside a padded Conv) → the ONNX tensor it reads."""
    modules = dict(module.named_modules())
    found = {}
    for node in module.graph.nodes:
        if node.op == "call_module" and node.args and hasattr(node.args[0], "op"):
            tensor = _onnx_tensor(node.args[0], tensors)
            if tensor is not None:
                found[str(node.target)] = tensor
                inner = conv_layer(str(node.target), modules[str(node.target)])
                if inner is not None:
                    found[inner[0]] = tensor
    return found


def _quantize_layers(module: Any, per_channel: bool, reference: QdqModel | None, tensors: dict[str, str],
                     sources: dict[str, tuple[str, str]]) -> None:
    """Weight (and, with a reference, int32 bias) fake quantization of every Conv / Linear layer."""
    torch = _torch()
    parametrize = torch.nn.utils.parametrize
    layers = (*conv_layers(), torch.nn.Linear)
    inputs = _layer_inputs(module, tensors) if reference is not None else {}
    for name, layer in list(module.named_modules()):
        if not isinstance(layer, layers):
            continue
        axis, floor = _weight_axis(layer), None
        if reference is not None:
            weight = sources.get(f"{name}.weight", ("", ""))[0]
            if weight not in reference.scales:
                continue  # ORT keeps this layer float
            floor = _raised_scales(layer.weight.detach(), axis, per_channel, reference.scales[weight])
        quantizer = make_weight_quantizer(axis, per_channel, floor)
        parametrize.register_parametrization(layer, "weight", quantizer)
        source = inputs.get(name)
        if reference is not None and layer.bias is not None and source in reference.activations:
            parametrize.register_parametrization(
                layer, "bias", make_bias_quantizer(quantizer, layer, reference.activations[source].scale))


def _raised_scales(weight: Any, axis: int, per_channel: bool, orts: np.ndarray) -> Any:
    """ORT's scale where it raised it above max|w| / 127 (bias overflow), else 0: the floor to keep."""
    torch = _torch()
    plain = make_weight_quantizer(axis, per_channel).scale(weight)
    theirs = torch.from_numpy(np.ascontiguousarray(orts, dtype=np.float32)).reshape(plain.shape)
    return torch.where(theirs > plain * (1 + 1e-4), theirs, torch.zeros_like(theirs))


def _use_dequantized_constants(module: Any, reference: QdqModel, trained: set[str]) -> None:
    """Give each untrained constant buffer the value ORT's model dequantizes it to.

    onnx2torch names buffers by position, not by ONNX name: a buffer is matched by its exact float
    value (two initializers with the same values quantize to the same values).
    """
    torch = _torch()
    by_value = {}
    for name, value in reference.constants.items():
        if name not in trained and name in reference.originals:
            original = reference.originals[name]
            by_value[(original.shape, original.tobytes())] = value
    container = getattr(module, "initializers", None)
    if container is None:
        return
    for buffer_name, buffer in list(container.named_buffers(recurse=False)):
        if not buffer.is_floating_point():
            continue
        key = (tuple(buffer.shape), buffer.detach().numpy().astype(np.float32).tobytes())
        if key in by_value:
            value = by_value[key].reshape(buffer.shape)
            setattr(container, buffer_name, torch.from_numpy(np.ascontiguousarray(value)).to(buffer.dtype))


def calibrate_ranges(module: Any, quantizers: list[Any], samples: list[list[np.ndarray]]) -> None:
    """Record every activation range on ``samples`` (float weights), then switch fake quantization on."""
    torch = _torch()
    for quantizer in quantizers:
        quantizer.observing, quantizer.active = True, False
    with torch.no_grad(), torch.nn.utils.parametrize.cached():
        for sample in samples:
            run_module(module, tuple(sample))
    for quantizer in quantizers:
        quantizer.observing, quantizer.active = False, True


def trained_values(module: Any, names: list[str]) -> dict[str, np.ndarray]:
    """The latent (not fake-quantized) values of the named parameters, e.g. ``conv.weight``."""
    values = {}
    for name in names:
        owner, _, attr = name.rpartition(".")
        layer = module.get_submodule(owner)
        parametrized = getattr(layer, "parametrizations", None)
        if parametrized is not None and attr in parametrized:
            tensor = parametrized[attr].original
        else:
            tensor = getattr(layer, attr)
        values[name] = tensor.detach().numpy().copy()
    return values
