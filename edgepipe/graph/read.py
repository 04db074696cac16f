"""One reader for every model format the checks read: an ``.onnx`` or ``.tflite`` file as an :class:`OpGraph`."""

from __future__ import annotations

from pathlib import Path

from edgepipe.errors import ModelLoadError
from edgepipe.graph.onnx_reader import read_onnx
from edgepipe.graph.opgraph import OpGraph
from edgepipe.graph.tflite_reader import read_tflite


def read_graph(path: Path) -> OpGraph:
    """The common op list of an ``.onnx`` or ``.tflite`` file."""
    path = Path(path)
    if not path.is_file():
        raise ModelLoadError("model file not found", path=path, fix="Check the path")
    if path.suffix == ".onnx":
        return read_onnx(path)
    if path.suffix == ".tflite":
        return read_tflite(path)
    raise ModelLoadError("the support check reads .onnx or .tflite files", path=path,
                         fix="Build the model first (`edgepipe build`) and check one of its artifacts")
