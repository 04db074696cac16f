"""Each target is judged on the arithmetic it performs: NPUs on exact integer semantics, host-cpu on this machine's
ONNX Runtime with default options, which is what a user who deploys ``model_int8.onnx`` there runs."""

from __future__ import annotations

import platform
from pathlib import Path

import numpy as np
import pytest

from edgepipe.config import BuildConfig
from edgepipe.metrics.similarity import cosine
from edgepipe.pipeline import run_build


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return set()
    line = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


def _saturating_host() -> bool:
    """x86 with AVX2 and no VNNI: ONNX Runtime's u8 x s8 kernels add pairs of products into 16 bits there."""
    flags = _cpu_flags()
    return platform.machine() in ("x86_64", "AMD64") and "avx2" in flags and not (
        {"avx512_vnni", "avx_vnni", "amx_int8"} & flags)


def _wide_matmul(path: Path) -> Path:
    """One MatMul of 256 inputs in [0, 1] with weights at ±1: adjacent int8 products sum past 16 bits."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = np.where(rng.random((256, 8)) < 0.5, -1.0, 1.0).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="dense")], "wide",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], [numpy_helper.from_array(weights, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("host_arithmetic")
    model = _wide_matmul(folder / "wide.onnx")
    rng = np.random.default_rng(1)
    np.savez(folder / "calibration.npz", x=rng.uniform(0.8, 1.0, (32, 256)).astype(np.float32))
    np.savez(folder / "evaluation.npz", x=rng.uniform(0.8, 1.0, (24, 256)).astype(np.float32))
    config = BuildConfig(model=model, targets=["host-cpu", "mobile-npu"], output=folder / "build",
                         data={"calibration": folder / "calibration.npz", "evaluation": folder / "evaluation.npz"},
                         quantization={"steps": ["ptq"]}, cache={"enabled": False})
    run_build(config)
    return folder


def _comparison(folder: Path, target: str, artifact: str) -> dict:
    import json

    report = json.loads((folder / "build" / "wide" / target / "report.json").read_text())
    return next(c for c in report["accuracy"]["label_free"]["comparisons"] if c["artifact"] == artifact)


@pytest.mark.slow
def test_host_cpu_reports_what_default_onnx_runtime_computes_here(built: Path) -> None:
    """Whatever this CPU is: host-cpu's figures for model_int8.onnx are those of a default ONNX Runtime session."""
    import onnxruntime as ort

    host = _comparison(built, "host-cpu", "model_int8.onnx")
    assert host["arithmetic"] == "host runtime"
    assert _comparison(built, "mobile-npu", "model_int8.onnx")["arithmetic"] == "exact integer"
    data = np.load(built / "evaluation.npz")["x"]
    runs = {}
    for name in ("model.onnx", "model_int8.onnx"):
        session = ort.InferenceSession(str(built / "build" / "wide" / "host-cpu" / name),
                                       providers=["CPUExecutionProvider"])
        runs[name] = np.concatenate([session.run(None, {"x": row[None]})[0] for row in data])
    assert host["outputs"][0]["cosine"] == pytest.approx(cosine(runs["model.onnx"], runs["model_int8.onnx"]),
                                                         abs=1e-5)


@pytest.mark.slow
@pytest.mark.skipif(not _saturating_host(), reason="ONNX Runtime's u8 x s8 kernels saturate only on x86 CPUs with "
                    "AVX2 and no VNNI (VPMADDUBSW adds pairs of products into 16 bits); this host does not saturate")
def test_a_saturating_host_is_judged_on_its_own_kernels(built: Path) -> None:
    """The uint8-activation form holds the same integers as model_int8.onnx; on this host its pairs of products
    (255 x 127, twice) overflow 16 bits, and host-cpu's figures show it while mobile-npu's exact ones do not."""
    host = _comparison(built, "host-cpu", "model_int8_qdq_u8.onnx")["outputs"][0]
    exact = _comparison(built, "mobile-npu", "model_int8.onnx")["outputs"][0]
    assert host["sqnr_db"] < exact["sqnr_db"] - 3
