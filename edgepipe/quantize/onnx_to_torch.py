"""A trainable PyTorch form of a float ONNX model, through onnx2torch, and the way back to the ONNX file.

QAT of an ONNX input needs the graph as something autograd can train. onnx2torch (pinned in the
``torch`` extra) turns an ONNX graph into a ``torch.fx.GraphModule``: weight-bearing nodes become
``nn.Conv2d`` / ``nn.ConvTranspose2d`` / ``nn.Linear`` modules, other initializers become buffers.
:class:`TrainableOnnx` keeps, for every tensor that will be trained, where it came from in the ONNX
file (an initializer, or a ``Constant`` node's value), so the fine-tuned values can be written back
into a copy of the *user's own graph* (:func:`write_back`), which then goes through the normal
ONNX Runtime PTQ.

Two things are done before conversion, without changing what the graph computes: ``Constant`` nodes
become initializers (exporters such as Paddle2ONNX store every weight as a ``Constant`` node, which
onnx2torch's Conv converter does not look for), and the inputs get the static shape of the samples.
The converted module is checked against ONNX Runtime on real samples before it is trained.

onnx2torch imports torchvision for its NonMaxSuppression and RoiAlign converters only; PyPI's
torchvision does not import next to the CPU torch wheel. :func:`_import_onnx2torch` therefore lends it
a placeholder ``torchvision`` while it is imported (and removes it again), whose two ops raise
:class:`ConversionFailed` — a model with those ops is a reported conversion failure, nothing else is
affected.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from edgepipe.data.dataset import Dataset
from edgepipe.graph.onnx_edit import constants_to_initializers
from edgepipe.metrics.compare import run_outputs

#: Worst relative error (max |torch - ORT| / max |ORT|) the converted module may show on the check samples.
MAX_RELATIVE_ERROR = 1e-3


class ConversionFailed(Exception):
    """onnx2torch could not turn the ONNX graph into a module that computes what the graph computes."""


#: What to install for QAT of ONNX inputs (torch and onnx2torch are in the ``torch`` extra).
INSTALL_HINT = "pip install 'edgepipe[torch]'"


def require_torch() -> None:
    """Raise :class:`ConversionFailed` (a reported skip, not a crash) when torch or onnx2torch is missing."""
    missing = [name for name in ("torch", "onnx2torch") if importlib.util.find_spec(name) is None]
    if missing:
        raise ConversionFailed(f"{' and '.join(missing)} not installed: QAT of an ONNX model trains it with "
                               f"PyTorch. Run: {INSTALL_HINT}")


def _needs_torchvision(*_args: Any, **_kwargs: Any) -> Any:
    raise ConversionFailed("this ONNX op needs torchvision (NonMaxSuppression / RoiAlign in onnx2torch), "
                           "which does not import next to the CPU torch wheel")


def _import_onnx2torch() -> Any:
    """``onnx2torch.convert``; a placeholder torchvision stands in during the import when the real one is missing."""
    try:
        import torchvision  # noqa: F401  # heavy optional dependency; used by onnx2torch when it imports
    except (ImportError, RuntimeError):  # absent, or the registry's wheel that fails beside the CPU torch
        sys.modules.pop("torchvision", None)
        placeholder = types.ModuleType("torchvision")
        ops = types.ModuleType("torchvision.ops")
        placeholder.__spec__ = importlib.machinery.ModuleSpec("torchvision", None)
        ops.__spec__ = importlib.machinery.ModuleSpec("torchvision.ops", None)
        ops.nms = ops.roi_align = ops.box_convert = _needs_torchvision  # type: ignore[attr-defined]
        placeholder.ops = ops  # type: ignore[attr-defined]
        sys.modules.update({"torchvision": placeholder, "torchvision.ops": ops})
        try:
            from onnx2torch import convert  # heavy optional dependency
        finally:  # nobody else may mistake the placeholder for torchvision
            sys.modules.pop("torchvision", None)
            sys.modules.pop("torchvision.ops", None)
        return convert
    from onnx2torch import convert  # heavy optional dependency

    return convert


@dataclass
class TrainableOnnx:
    """The converted module and, per trained tensor, the ONNX tensor it writes back to.

    ``sources`` maps a parameter name of ``module`` to ``(onnx tensor name, kind)``: ``"same"``
    (same layout), ``"gemm"`` (an ``nn.Linear`` built from a Gemm: transposed unless transB, scaled
    by alpha) or ``"gemm-bias"`` (scaled by beta). ``alphas`` holds those Gemm factors.
    ``tensors`` maps the name of an fx node (a layer's target, a graph input's placeholder) to the
    ONNX tensor it computes, so that ONNX Runtime's activation ranges can be given to it.
    """

    module: Any
    onnx_path: Path
    sources: dict[str, tuple[str, str]] = field(default_factory=dict)
    alphas: dict[str, float] = field(default_factory=dict)
    tensors: dict[str, str] = field(default_factory=dict)


def _initializers_only(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with every plain ``Constant`` node's tensor held as an initializer of the same name."""
    constants_to_initializers(model)
    return model


#: The newest default-domain opset onnx2torch 1.5.15 converts every op of (e.g. ReduceMean takes axes as an input
#: from opset 18, which it does not read); newer graphs are brought down to it by ONNX's version converter.
NEWEST_OPSET = 17


def _convertible(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same computation in the forms onnx2torch reads: opset <= 17, Reshape without a needless allowzero."""
    import onnx.version_converter

    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), NEWEST_OPSET)
    if opset > NEWEST_OPSET:
        try:
            model = onnx.version_converter.convert_version(model, NEWEST_OPSET)
        except (RuntimeError, ValueError, onnx.checker.ValidationError) as error:
            raise ConversionFailed(f"opset {opset} could not be brought down to {NEWEST_OPSET} for onnx2torch: "
                                   f"{error}") from error
    shapes = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:  # allowzero only matters when the target shape holds a 0
        if node.op_type == "Reshape" and node.input[1] in shapes and not (shapes[node.input[1]] == 0).any():
            kept = [a for a in node.attribute if a.name != "allowzero"]
            del node.attribute[:]
            node.attribute.extend(kept)
    return model


def _fix_shapes(model: onnx.ModelProto, shapes: list[tuple[int, ...]]) -> None:
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    for value, shape in zip(inputs, shapes):
        dims = value.type.tensor_type.shape.dim
        for dim, size in zip(dims, shape):
            dim.ClearField("dim_param")
            dim.dim_value = int(size)


def _infer_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Shapes of every value (onnx2torch's BatchNormalization converter reads its input's rank from them).

    ONNX Runtime's symbolic inference first: it follows shapes computed by Shape/Reshape chains, where
    ONNX's own leaves them unknown; ONNX's when the symbolic one gives up on the graph.
    """
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    try:
        return SymbolicShapeInference.infer_shapes(model, auto_merge=True)
    except Exception as exc:  # noqa: BLE001 - ORT's symbolic shape inference raises a bare Exception or asserts
        if not isinstance(exc, AssertionError) and "symbolic shape inference" not in str(exc):
            raise  # anything else is not the shape-inference gap this works around
        return onnx.shape_inference.infer_shapes(model)


def conv_layers() -> tuple[type[Any], ...]:
    """torch's convolution layer classes (the layers an ONNX Conv / ConvTranspose becomes)."""
    import torch  # heavy optional dependency

    nn = torch.nn
    return (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)


def conv_layer(name: str, layer: Any) -> tuple[str, Any] | None:
    """The convolution an ONNX Conv node became, with its module name: the layer itself, or the one
    convolution inside it (onnx2torch makes ``Sequential(OnnxPadStatic, Conv2d)`` of a Conv whose pads
    differ per side, as tf2onnx writes a stride-2 'SAME' convolution)."""
    if isinstance(layer, conv_layers()):
        return name, layer
    inner = [(f"{name}.{child}", m) for child, m in layer.named_children() if isinstance(m, conv_layers())]
    return inner[0] if len(inner) == 1 else None


def _sources(module: Any, model: onnx.ModelProto) -> tuple[dict[str, tuple[str, str]], dict[str, float]]:
    """Which ONNX tensor each weight/bias parameter of the converted layers came from."""
    import torch  # heavy optional dependency
    from onnx2torch.onnx_graph import OnnxGraph  # heavy optional dependency; names modules as convert() does

    layers = dict(module.named_modules())
    sources: dict[str, tuple[str, str]] = {}
    factors: dict[str, float] = {}
    for name, node in OnnxGraph(model.graph).nodes.items():
        onnx_node, layer = node.proto, layers.get(name)
        if layer is None or len(onnx_node.input) < 2:
            continue
        inner = conv_layer(name, layer) if onnx_node.op_type in ("Conv", "ConvTranspose") else None
        if inner is not None:
            name, layer = inner
        if isinstance(layer, conv_layers()):
            sources[f"{name}.weight"] = (onnx_node.input[1], "same")
            if layer.bias is not None and len(onnx_node.input) > 2:
                sources[f"{name}.bias"] = (onnx_node.input[2], "same")
        elif isinstance(layer, torch.nn.Linear) and onnx_node.op_type == "Gemm":
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in onnx_node.attribute}
            sources[f"{name}.weight"] = (onnx_node.input[1], "gemm" if attrs.get("transB", 0) else "gemm-t")
            factors[f"{name}.weight"] = float(attrs.get("alpha", 1.0))
            if layer.bias is not None and len(onnx_node.input) > 2:
                sources[f"{name}.bias"] = (onnx_node.input[2], "gemm-bias")
                factors[f"{name}.bias"] = float(attrs.get("beta", 1.0))
    return sources, factors


def _tensor_names(model: onnx.ModelProto) -> dict[str, str]:
    """fx node → ONNX tensor: onnx2torch names each layer after its ONNX node and each input ``input_<n>``."""
    from onnx2torch.onnx_graph import OnnxGraph  # heavy optional dependency; names modules as convert() does

    initializers = {i.name for i in model.graph.initializer}  # convert() drops them from the inputs first
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    names = {f"input_{i}": name for i, name in enumerate(inputs, 1)}
    nodes = OnnxGraph(model.graph).nodes.items()
    names.update({name: node.proto.output[0] for name, node in nodes if len(node.proto.output) == 1})
    return names


def convert_onnx(onnx_path: Path, check: Dataset, samples: int = 4) -> TrainableOnnx:
    """onnx2torch's module of ``onnx_path`` (eval mode), checked against ONNX Runtime on ``samples`` of ``check``.

    Raises :class:`ConversionFailed` with onnx2torch's (or the check's) message.
    """
    convert = _import_onnx2torch()
    model = _convertible(_initializers_only(onnx.load(str(onnx_path))))
    _fix_shapes(model, [a.shape for a in next(check.samples(1))])
    model = _infer_shapes(model)
    try:
        module = convert(model).eval()
    except (NotImplementedError, KeyError, ValueError, RuntimeError, TypeError, AttributeError) as error:
        raise ConversionFailed(f"onnx2torch: {type(error).__name__}: {error}") from error
    sources, factors = _sources(module, model)
    trainable = TrainableOnnx(module=module, onnx_path=onnx_path, sources=sources, alphas=factors,
                              tensors=_tensor_names(model))
    _check(trainable, check, samples)
    return trainable


def run_module(module: Any, sample: tuple[np.ndarray, ...]) -> list[Any]:
    """The module's outputs on one batch-1 sample, always as a list of tensors."""
    import torch  # heavy optional dependency

    out = module(*[torch.from_numpy(np.ascontiguousarray(a)) for a in sample])
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _check(trainable: TrainableOnnx, data: Dataset, samples: int) -> None:
    """Raise :class:`ConversionFailed` unless the module follows ONNX Runtime on the first ``samples``."""
    import torch  # heavy optional dependency

    subset = Dataset(data.path, tuple(a[:samples] for a in data.inputs), None, data.sha256, data.whole)
    reference = run_outputs(trainable.onnx_path, subset).arrays
    with torch.no_grad():
        try:
            got = [run_module(trainable.module, tuple(s)) for s in subset.samples()]
        except (NotImplementedError, RuntimeError, ValueError, TypeError, IndexError) as error:
            raise ConversionFailed(f"the converted module does not run: {type(error).__name__}: {error}") from error
    for index, ref in enumerate(reference):
        if index >= len(got[0]):
            raise ConversionFailed(f"the converted module has {len(got[0])} outputs, the ONNX model more")
        mine = np.concatenate([g[index].detach().numpy().reshape(-1) for g in got])
        if mine.size != ref.size:
            raise ConversionFailed(f"the converted module's output {index} has {mine.size} values on the check "
                                   f"samples, ONNX Runtime's {ref.size}")
        mine = mine.reshape(ref.shape)
        scale = max(float(np.abs(ref).max()), 1e-6)
        relative = float(np.abs(mine - ref).max()) / scale
        if not relative <= MAX_RELATIVE_ERROR:
            raise ConversionFailed(f"the converted module disagrees with ONNX Runtime on output {index}: "
                                   f"max relative error {relative:.3g} > {MAX_RELATIVE_ERROR:g}")


def _onnx_layout(value: np.ndarray, kind: str, factor: float) -> np.ndarray:
    if kind == "gemm-t":
        return (value / factor).T
    if kind in ("gemm", "gemm-bias"):
        return value / factor
    return value


def write_back(trainable: TrainableOnnx, values: dict[str, np.ndarray], out: Path) -> Path:
    """A copy of the original ONNX file with the trained ``values`` (parameter name → array) in place."""
    model = onnx.load(str(trainable.onnx_path))
    tensors: dict[str, np.ndarray] = {}
    for name, value in values.items():
        onnx_name, kind = trainable.sources[name]
        tensors[onnx_name] = _onnx_layout(value, kind, trainable.alphas.get(name, 1.0))
    for initializer in model.graph.initializer:
        if initializer.name in tensors:
            old = numpy_helper.to_array(initializer)
            initializer.CopyFrom(numpy_helper.from_array(tensors.pop(initializer.name).astype(old.dtype)
                                                         .reshape(old.shape), initializer.name))
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output[0] in tensors:
            old = numpy_helper.to_array(node.attribute[0].t)
            node.attribute[0].t.CopyFrom(numpy_helper.from_array(tensors.pop(node.output[0]).astype(old.dtype)
                                                                 .reshape(old.shape), node.output[0]))
    if tensors:
        raise ConversionFailed(f"trained tensors not found in the ONNX graph: {sorted(tensors)[:3]}")
    onnx.save(model, str(out))
    return out
