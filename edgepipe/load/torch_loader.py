"""PyTorch models: a ``torch.export`` archive (``.pt2``) read without running code, or a factory the user names.

Two ways in, with different trust:

- ``model.pt2``, written by ``torch.export.save``. ``torch.export.load`` (torch 2.13) is
  *not* safe on an untrusted file by itself: it unpickles with ``weights_only=False``
  weights and constants flagged ``use_pickle``, torchbind and opaque constants, and the
  sample inputs whenever the weights-only unpickler refuses them; an archive with an
  ``aotinductor`` folder carries compiled native code. :func:`check_archive` reads the
  zip's JSON configs first and refuses all of those, and unpickles the sample inputs
  weights-only itself, so the only way left in is raw tensor bytes and the JSON graph.
- ``model = "python:pkg.module:factory"`` in the config: edgepipe imports ``pkg.module``
  (from the current folder or the installed packages) and calls ``factory()``. That runs
  the user's code, which is what they asked for; a file path never does. The factory
  returns ``(module, example_inputs)``: an ``nn.Module`` and a tensor or tuple of tensors
  (batch size 1) that ``torch.export.export`` traces it with.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import logging
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from edgepipe.errors import ModelLoadError
from edgepipe.tensors import Signature, TensorSpec

log = logging.getLogger(__name__)

FACTORY_PREFIX = "python:"
INSTALL_HINT = "pip install 'edgepipe[torch]'"
_UNSAFE_CONSTANTS = ("custom_obj", "opaque_obj")


@dataclass(frozen=True)
class TorchModel:
    """An exported PyTorch program (``torch.export.ExportedProgram``) and batch-1 example inputs for it."""

    program: Any
    example_inputs: tuple[Any, ...]

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """The program's outputs for one list of numpy inputs, as numpy arrays (no autograd)."""
        torch = import_torch()
        with torch.no_grad():
            out = self.program.module()(*[torch.from_numpy(np.ascontiguousarray(a)) for a in inputs])
        return [t.detach().numpy() for t in (out if isinstance(out, (tuple, list)) else (out,))]


def import_torch() -> ModuleType:
    """``torch``, or a one-line user error naming the extra that installs it."""
    try:
        import torch  # heavy optional dependency
    except ImportError:
        raise ModelLoadError(f"PyTorch models need torch, which is not installed. Run: {INSTALL_HINT}") from None
    return torch


def is_factory(path: Path | str) -> bool:
    """True when ``path`` is a ``python:pkg.module:factory`` reference, not a file."""
    return str(path).startswith(FACTORY_PREFIX)


def _refuse(path: Path, problem: str) -> ModelLoadError:
    return ModelLoadError(f"{problem}; torch.export.load would run code from it, so edgepipe does not load it",
                          path=path, fix="Re-save the program with torch.export.save from plain tensors, or point "
                                         "`model` at a python:pkg.module:factory you trust")


def _payload_problems(archive: zipfile.ZipFile, name: str) -> list[str]:
    """Entries of one weights/constants config that torch would unpickle without weights-only."""
    config = json.loads(archive.read(name)).get("config", {})
    problems = [f"{fqn} is pickled" for fqn, meta in config.items() if meta.get("use_pickle")]
    problems += [f"{fqn} is a Python object constant" for fqn, meta in config.items()
                 if str(meta.get("path_name", "")).startswith(_UNSAFE_CONSTANTS)]
    return problems


def check_archive(path: Path) -> None:
    """Raise :class:`ModelLoadError` unless ``torch.export.load`` can read ``path`` without unpickling code.

    Allowed: JSON graphs and configs, raw tensor payloads, and sample inputs the
    weights-only unpickler accepts. Refused: compiled AOTInductor code, legacy pickled
    weight files, payloads flagged ``use_pickle``, torchbind/opaque constants.
    """
    torch = import_torch()
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelLoadError(f"not a torch.export archive ({exc})", path=path,
                             fix="Save the program with torch.export.save(program, 'model.pt2')") from None
    with archive:
        names = archive.namelist()
        if not any("/models/" in n and n.endswith(".json") for n in names):
            raise ModelLoadError("not a torch.export archive (no models/*.json)", path=path,
                                 fix="Save the program with torch.export.save(program, 'model.pt2')")
        if any("/data/aotinductor/" in n for n in names):
            raise _refuse(path, "the archive holds AOTInductor-compiled native code")
        if any(n.endswith(".pt") and ("/data/weights/" in n or "/data/constants/" in n) for n in names):
            raise _refuse(path, "the archive stores weights in the legacy pickled format")
        problems = [p for n in names if n.endswith(("weights_config.json", "constants_config.json"))
                    for p in _payload_problems(archive, n)]
        if problems:
            raise _refuse(path, f"{problems[0]} ({len(problems)} such entries)")
        for name in (n for n in names if "/data/sample_inputs/" in n):
            try:
                torch.load(io.BytesIO(archive.read(name)), weights_only=True)
            except Exception as exc:  # noqa: BLE001 - any refusal of the weights-only unpickler means "unsafe"
                raise _refuse(path, f"its sample inputs are not plain tensors ({type(exc).__name__})") from None


def _spec(name: str, value: Any) -> TensorSpec:
    return TensorSpec(name=name, shape=tuple(int(d) for d in value.shape),
                      dtype=np.dtype(str(value.dtype).removeprefix("torch.")))


def signature_of(program: Any) -> Signature:
    """Inputs (user inputs, in order) and outputs of an exported program, from its traced metadata."""
    nodes = {n.name: n for n in program.graph.nodes}
    inputs = tuple(_spec(spec.arg.name, nodes[spec.arg.name].meta["val"])
                   for spec in program.graph_signature.input_specs if spec.kind.name == "USER_INPUT")
    output_node = next(n for n in program.graph.nodes if n.op == "output")
    values = [arg.meta["val"] for arg in output_node.args[0]]
    outputs = tuple(_spec(f"output_{i}", v) for i, v in enumerate(values))
    return Signature(inputs=inputs, outputs=outputs)


def load_pt2(path: Path) -> tuple[TorchModel, Signature]:
    """The program in ``path`` after :func:`check_archive`; its example inputs are the saved sample inputs."""
    check_archive(path)
    torch = import_torch()
    try:
        program = torch.export.load(str(path))
    except (RuntimeError, KeyError, ValueError, AssertionError) as exc:
        raise ModelLoadError(f"torch.export.load cannot read it ({exc})", path=path,
                             fix="Save it again with this torch version (torch.export.save)") from None
    signature = signature_of(program)
    example = program.example_inputs[0] if program.example_inputs else ()
    if not example:
        example = tuple(torch.zeros(s.shape, dtype=getattr(torch, s.dtype.name)) for s in signature.inputs)
    return TorchModel(program=program, example_inputs=tuple(example)), signature


def _import_factory(reference: str) -> Any:
    """The callable ``factory`` of ``python:pkg.module:factory`` (the current folder is searched first)."""
    target = reference.removeprefix(FACTORY_PREFIX)
    module_name, _, attribute = target.partition(":")
    fix = "Write it as python:pkg.module:factory, importable from the current folder"
    if not module_name or not attribute:
        raise ModelLoadError(f"'{reference}' is not python:pkg.module:factory", fix=fix)
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelLoadError(f"cannot import '{module_name}' for the model factory ({exc})", fix=fix) from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ModelLoadError(f"'{module_name}' has no callable '{attribute}'", fix=fix)
    return factory


def export_program(module: Any, example_inputs: tuple[Any, ...], where: str) -> Any:
    """``torch.export.export`` of ``module`` in eval mode; a model it cannot trace is a user error naming why."""
    torch = import_torch()
    from torch._dynamo.exc import TorchDynamoException  # heavy optional dependency

    try:
        return torch.export.export(module.eval(), example_inputs)
    except (TorchDynamoException, torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(f"torch.export cannot trace the model from {where}: {first}",
                             fix="Make forward() traceable (no data-dependent Python control flow; use torch.cond), "
                                 "see the torch.export docs on graph breaks") from None


def load_factory(reference: str) -> tuple[TorchModel, Signature, str]:
    """Call the user's factory, export its module; returns the model, its signature and a content hash (hex)."""
    torch = import_torch()
    result = _import_factory(reference)()
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], torch.nn.Module)):
        raise ModelLoadError(f"{reference} must return (torch.nn.Module, example_inputs), got {type(result).__name__}",
                             fix="Return the module and a batch-1 tensor (or tuple of tensors)")
    module, example = result
    example = tuple(example) if isinstance(example, (tuple, list)) else (example,)
    program = export_program(module, example, reference)
    digest = hashlib.sha256(str(program.graph).encode())
    for name, tensor in sorted(program.state_dict.items()):
        digest.update(name.encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    return TorchModel(program, example), signature_of(program), digest.hexdigest()
