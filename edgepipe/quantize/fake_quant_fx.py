"""Fake quantization of a ``torch.fx.GraphModule`` the way ONNX Runtime's QDQ PTQ will quantize it.

Used by QAT of ONNX inputs (:mod:`edgepipe.quantize.qat_onnx`) on the onnx2torch form of the
graph. It mirrors the recipe the ONNX artifact is finally quantized with:

- weights of Conv / ConvTranspose / Linear layers: symmetric int8 in [-127, 127], one scale
  per output channel (per-channel recipes) or per tensor, recomputed from the current weights
  at every step (ORT computes them the same way from the written-back weights);
- activations: every node output that an int8 runtime keeps as a tensor (not one consumed only
  by a BatchNormalization or a ReLU/Clip, which the runtimes fuse into the layer before) and
  the graph inputs, asymmetric 8-bit with the min/max range seen on the calibration data
  (minmax calibration), frozen after :func:`calibrate_ranges`.

Gradients pass through rounding unchanged (the straight-through estimator of
``torch.fake_quantize_*``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edgepipe.quantize.onnx_to_torch import run_module

#: Modules whose input is fused into the layer that produces it by int8 runtimes (no QDQ in between).
FUSED_CONSUMERS = ("BatchNorm", "ReLU", "OnnxClip", "Clip", "ReLU6", "Hardtanh")


def _torch() -> Any:
    import torch  # heavy optional dependency

    return torch


def _weight_axis(layer: Any) -> int:
    """The output-channel axis of a layer's weight: 1 for transposed convolutions, else 0."""
    nn = _torch().nn
    return 1 if isinstance(layer, (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)) else 0


def make_weight_quantizer(axis: int, per_channel: bool) -> Any:
    """A parametrization module: ``weight -> fake_quant(weight)`` (symmetric int8, narrow range)."""
    torch = _torch()

    class WeightFakeQuant(torch.nn.Module):  # type: ignore[name-defined,misc]
        def forward(self, weight: Any) -> Any:
            if per_channel:
                dims = [d for d in range(weight.dim()) if d != axis]
                bound = weight.detach().abs().amax(dim=dims) if dims else weight.detach().abs()
                scale = torch.clamp(bound, min=1e-8) / 127.0
                zero = torch.zeros_like(scale, dtype=torch.int32)
                return torch.fake_quantize_per_channel_affine(weight, scale, zero, axis, -127, 127)
            scale = torch.clamp(weight.detach().abs().max(), min=1e-8) / 127.0
            return torch.fake_quantize_per_tensor_affine(weight, scale, torch.tensor(0, dtype=torch.int32),
                                                         -127, 127)

    return WeightFakeQuant()


def make_activation_quantizer() -> Any:
    """A module that records its input's min/max while ``observing`` and fake-quantizes (8-bit) when ``active``."""
    torch = _torch()

    class ActivationFakeQuant(torch.nn.Module):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__()
            self.low, self.high = 0.0, 0.0
            self.observing, self.active = False, False

        def forward(self, x: Any) -> Any:
            if not isinstance(x, torch.Tensor) or not x.is_floating_point():
                return x
            if self.observing:
                self.low = min(self.low, float(x.detach().min()))
                self.high = max(self.high, float(x.detach().max()))
            if not self.active or self.high - self.low <= 0:
                return x
            scale = (self.high - self.low) / 255.0
            zero = int(np.clip(round(-self.low / scale), 0, 255))
            return torch.fake_quantize_per_tensor_affine(x, scale, zero, 0, 255)

    return ActivationFakeQuant()


def _fused_only(node: Any, modules: dict[str, Any]) -> bool:
    """True when every user of ``node`` is a module the runtimes fuse into its producer."""
    users = list(node.users)
    return bool(users) and all(u.op == "call_module" and any(f in type(modules[u.target]).__name__
                                                                 for f in FUSED_CONSUMERS) for u in users)


def insert_fake_quant(module: Any, per_channel: bool) -> list[Any]:
    """Fake-quantize ``module``'s layer weights and activations in place; returns the activation quantizers."""
    torch = _torch()
    parametrize = torch.nn.utils.parametrize
    nn = torch.nn
    layers = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d, nn.Linear)
    for layer in module.modules():
        if isinstance(layer, layers):
            axis = _weight_axis(layer)
            parametrize.register_parametrization(layer, "weight", make_weight_quantizer(axis, per_channel))
    modules = dict(module.named_modules())
    graph = module.graph
    quantizers: list[Any] = []
    for node in list(graph.nodes):
        if node.op not in ("placeholder", "call_module", "call_function", "call_method") or _fused_only(node, modules):
            continue
        name = f"edgepipe_fq_{len(quantizers)}"
        quantizer = make_activation_quantizer()
        module.add_module(name, quantizer)
        quantizers.append(quantizer)
        with graph.inserting_after(node):
            wrapped = graph.call_module(name, (node,))
        node.replace_all_uses_with(wrapped, delete_user_cb=lambda user, w=wrapped: user is not w)
    graph.lint()
    module.recompile()
    return quantizers


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
