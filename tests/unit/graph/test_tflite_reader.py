"""A truncated or corrupted TFLite file is a user error naming the file (exit 1), never a crash (exit 3)."""

from __future__ import annotations

import random
from pathlib import Path

from edgepipe.errors import ModelLoadError
from edgepipe.graph.tflite_reader import read_tflite
from tests.realmodels import fetch


def _corruptions(data: bytes, count: int) -> list[bytes]:
    """Truncations, flipped bytes and random bytes of a real model, deterministic."""
    rng = random.Random(0)
    out = []
    for index in range(count):
        if index % 3 == 0:
            out.append(data[:rng.randrange(8, len(data))])
        elif index % 3 == 1:
            flipped = bytearray(data)
            for _ in range(20):
                flipped[rng.randrange(len(flipped))] = rng.randrange(256)
            out.append(bytes(flipped))
        else:
            out.append(rng.randbytes(rng.randrange(4, 2000)))
    return out


def test_corrupt_tflite_bytes_are_a_model_load_error(tmp_path: Path) -> None:
    data = fetch.mediapipe("face_detection/face_detection_short_range.tflite").read_bytes()
    path = tmp_path / "model.tflite"
    refused = 0
    for corrupt in _corruptions(data, 300):
        path.write_bytes(corrupt)
        try:
            read_tflite(path)
        except ModelLoadError as error:
            refused += 1
            assert error.path == str(path)
    assert refused > 250  # some flipped bytes land in weights and still read: those are fine


def test_a_readable_model_still_reads() -> None:
    graph = read_tflite(fetch.mediapipe("face_detection/face_detection_short_range.tflite"))
    assert graph.nodes and graph.graph_inputs and graph.graph_outputs

