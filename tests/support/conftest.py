"""TFLite models for the support tests, converted once per session from small Keras nets."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.graph.opgraph import OpGraph


@pytest.fixture(scope="session")
def probe_tflite(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The 'probe' net as int8 and as float TFLite."""
    from tests.support.nets import build_probe, to_float_tflite, to_int8_tflite

    folder = tmp_path_factory.mktemp("probe")
    model = build_probe()
    return {"int8": to_int8_tflite(model, folder / "probe_int8.tflite"),
            "float": to_float_tflite(model, folder / "probe_float.tflite")}


@pytest.fixture(scope="session")
def probe_graphs(probe_tflite: dict[str, Path]) -> dict[str, OpGraph]:
    from edgepipe.graph.tflite_reader import read_tflite

    return {kind: read_tflite(path) for kind, path in probe_tflite.items()}
