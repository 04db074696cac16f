"""Invariants checked between stages: every artifact loads in its runtime and keeps the model's shape."""

from __future__ import annotations

from edgepipe.artifacts import Artifact
from edgepipe.errors import EdgepipeError
from edgepipe.runtimes import open_runner
from edgepipe.tensors import Signature


class StageError(EdgepipeError):
    """A stage produced something broken: a bug in edgepipe or a converter (exit 3)."""


def check_artifact(artifact: Artifact, source: Signature) -> None:
    """Raise :class:`StageError` unless ``artifact`` loads and matches ``source``'s inputs and outputs."""
    try:
        with open_runner(artifact.path) as runner:
            signature = runner.signature
    except Exception as exc:  # noqa: BLE001 - whatever the runtime says, report it as the stage's failure
        raise StageError(f"{artifact.key} does not load in its runtime: {exc}") from exc
    fewest = len(source.outputs) - len(source.constant_outputs)  # constant outputs may be left out by a converter
    if len(signature.inputs) != len(source.inputs) or not fewest <= len(signature.outputs) <= len(source.outputs):
        raise StageError(f"{artifact.key} has {len(signature.inputs)} inputs / {len(signature.outputs)} outputs, "
                         f"the source model {len(source.inputs)} / {len(source.outputs)}")
    for got, want in zip(signature.inputs, source.inputs):
        if got.shape[1:] != want.shape[1:]:
            raise StageError(f"{artifact.key} input {got.name} has shape {got.shape}, expected {want.shape}")
