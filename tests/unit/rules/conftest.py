"""TFLite graphs for the rule tests, converted once per session from a small Keras net (tests/support/nets.py)."""

from __future__ import annotations

import pytest

from edgepipe.graph.opgraph import OpGraph


@pytest.fixture(scope="session")
def probe_graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, OpGraph]:
    """The 'probe' net of tests/support/nets.py as int8 and as float TFLite, read back."""
    from edgepipe.graph.tflite_reader import read_tflite
    from tests.support.nets import build_probe, to_float_tflite, to_int8_tflite

    folder = tmp_path_factory.mktemp("probe")
    model = build_probe()
    return {"int8": read_tflite(to_int8_tflite(model, folder / "probe_int8.tflite")),
            "float": read_tflite(to_float_tflite(model, folder / "probe_float.tflite"))}
