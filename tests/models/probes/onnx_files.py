"""Saving probe graphs as the vendor tools read them (opset, IR version), and their QDQ int8 versions."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def qdq_onnx(float_path: Path, out: Path, input_shape: tuple[int, ...], activations: str = "QInt8") -> Path:
    """QDQ int8 (per-channel symmetric weights) of ``float_path`` through edgepipe's pre-processing, activations of
    ONNX Runtime's ``QuantType`` named ``activations``."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from edgepipe.quantize.native_ops import restore_native_ops

    prepared = out.with_name(out.stem + "_prep.onnx")
    quant_pre_process(str(float_path), str(prepared))
    restore_native_ops(float_path, prepared)
    rng = np.random.default_rng(1)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.samples = iter([{"x": rng.random(input_shape, dtype=np.float32)} for _ in range(4)])

        def get_next(self) -> dict | None:
            return next(self.samples, None)

    quantize_static(str(prepared), str(out), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=getattr(QuantType, activations), weight_type=QuantType.QInt8,
                    extra_options={"WeightSymmetric": True})
    return out


def save_opset14(graph: object, path: Path) -> Path:
    """``graph`` saved at ``path`` as an opset-14, IR-8 model (what rknn-toolkit2's ONNX 1.18 reads)."""
    return save_opset(graph, path, 14)


def save_opset(graph: object, path: Path, opset: int) -> Path:
    """``graph`` saved at ``path`` as an IR-8 model of ``opset``."""
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def onnx_save(graph: object, path: Path) -> None:
    """``graph`` saved at ``path`` as an opset-17 model."""
    import onnx
    from onnx import helper

    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def ort_outputs(model: object, feeds: dict[str, object]) -> list[object]:
    """ONNX Runtime's outputs (CPU) of the in-memory ``model`` on ``feeds``."""
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(),  # type: ignore[attr-defined]
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)
