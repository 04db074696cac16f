"""On an x86 host without an int8 dot product, host-cpu is also offered a form that cannot saturate there."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from edgepipe.artifacts import Artifact
from edgepipe.data.dataset import Dataset
from edgepipe.latency.cpu_features import parse_cpuinfo
from edgepipe.quantize.host.forms import REDUCE_RANGE_NAME, host_forms
from tests.unit.metrics.detector_model import detector_images, make_detector

AVX2 = parse_cpuinfo("model name : AMD EPYC\nflags : sse4_2 avx avx2 fma\n", "x86_64", 2)
VNNI = parse_cpuinfo("model name : AMD EPYC\nflags : avx2 avx512f avx512_vnni\n", "x86_64", 2)


def _forms(tmp_path: Path, cpu: object) -> list[Artifact]:
    model = make_detector(tmp_path / "model.onnx")
    calibration = Dataset(tmp_path / "c.npz", (detector_images(16, seed=1),), None, "")
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return host_forms([Artifact(model, "onnx", "fp32")], calibration, out, tmp_path, cpu)  # type: ignore[arg-type]


def test_an_avx2_host_gets_the_seven_bit_weight_form(tmp_path: Path) -> None:
    forms = {a.key: a for a in _forms(tmp_path, AVX2)}
    assert REDUCE_RANGE_NAME in forms
    model = onnx.load(str(forms[REDUCE_RANGE_NAME].path))
    weights = [numpy_helper.to_array(i) for i in model.graph.initializer if numpy_helper.to_array(i).dtype == np.int8]
    assert weights and all(w.min() >= -64 and w.max() <= 64 for w in weights)  # 255 x 64, twice, fits 16 bits


def test_a_vnni_host_does_not(tmp_path: Path) -> None:
    assert REDUCE_RANGE_NAME not in {a.key for a in _forms(tmp_path, VNNI)}
