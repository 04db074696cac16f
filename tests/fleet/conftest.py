"""A cheap real fleet: the bundled model, two real third-party models (silero-vad, ONNX; micro_wakeword, a
shipped int8 TFLite prepared by the zoo with its own edgepipe.toml) and a corrupt model, on three targets, with
small data sets and a build cache shared by every test of the session."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from edgepipe.config import DEFAULT_DATA, DEFAULT_MODEL
from tests.realmodels import fetch, zoo
from tests.realmodels.data.audio import silero_stream

TARGETS = ["host-cpu", "ethos-u55", "mobile-npu"]

HERE = Path(__file__).resolve().parent
SILERO = "silero_vad_openvino_16k.onnx"
BUILD = """
[build]
latency = { warmup = 1, runs = 3 }
quantization = { steps = ["ptq"] }
"""


def _subset(source: Path, target: Path, count: int) -> Path:
    with np.load(source) as data:
        np.savez(target, **{k: data[k][:count] for k in data.files})
    return target


@pytest.fixture(scope="session")
def fleet_inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small data for the bundled model (64 calibration, 100 evaluation images), silero-vad with 16+8 frames
    of speech-like audio, a corrupt ONNX file, and the session's shared build cache folder."""
    folder = tmp_path_factory.mktemp("fleet_inputs")
    silero = fetch.silero(SILERO)
    stream = silero_stream(silero, 24)
    np.savez(folder / "silero_calib.npz", **{k: v[:16] for k, v in stream.items()})
    np.savez(folder / "silero_eval.npz", **{k: v[16:] for k, v in stream.items()})
    (folder / "broken.onnx").write_bytes(b"\x08\x07this is not an ONNX protobuf" * 40)
    wakeword = zoo.prepare(zoo.BY_NAME["micro_wakeword"], folder, zoo.DataSize(calibration=16, evaluation=32))
    return {"digits": DEFAULT_MODEL, "silero": silero, "folder": folder, "cache": folder / "cache",
            "wakeword_config": wakeword,
            "digits_calib": _subset(DEFAULT_DATA / "calibration.npz", folder / "digits_calib.npz", 64),
            "digits_eval": _subset(DEFAULT_DATA / "evaluation.npz", folder / "digits_eval.npz", 100)}


def write_fleet(path: Path, inputs: dict[str, Path], *, broken: bool = True, output: str = "out") -> Path:
    """A fleet file in ``path``'s folder: digits_cnn, silero-vad, micro_wakeword (and the corrupt model) × TARGETS."""
    models = f"""
[[models]]
name = "digits_cnn"
model = "{inputs['digits']}"
[models.data]
calibration = "{inputs['digits_calib']}"
evaluation = "{inputs['digits_eval']}"

[[models]]
name = "silero_vad"
model = "{inputs['silero']}"
[models.data]
calibration = "{inputs['folder'] / 'silero_calib.npz'}"
evaluation = "{inputs['folder'] / 'silero_eval.npz'}"

[[models]]
name = "micro_wakeword"
config = "{inputs['wakeword_config']}"
"""
    if broken:
        models += f'\n[[models]]\nname = "broken"\nmodel = "{inputs["folder"] / "broken.onnx"}"\n'
    path.write_text(f'targets = {TARGETS!r}\noutput = "{output}"\ncache = "{inputs["cache"]}"\nworkers = 2\n'
                    f"{BUILD}{models}", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One real local Ray instance (2 CPUs) for a test module, started the way the fleet starts it."""
    import ray  # heavy optional dependency

    from edgepipe.fleet.ray_executor import RayExecutor

    temp = RayExecutor(output=tmp_path_factory.mktemp("ray"), workers=2).connect()
    yield
    ray.shutdown()
    shutil.rmtree(temp, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder runs a real fleet end to end: markers ``fleet`` and ``slow``."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.fleet)
            item.add_marker(pytest.mark.slow)
