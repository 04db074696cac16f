"""The ladder's QAT step on the PyTorch reference model digits_irnn, pt2e QAT's mechanics, and QAT of an ONNX input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from edgepipe.config import PROJECT_ROOT
from edgepipe.data.dataset import Dataset, load_dataset
from edgepipe.export.torch_to_onnx import export_program_to_onnx
from edgepipe.load import load_model
from edgepipe.quantize.ladder import LadderContext, LadderSettings, run_ladder

pytestmark = pytest.mark.slow
DATA = PROJECT_ROOT / "calib" / "digits"
IRNN = PROJECT_ROOT / "models" / "digits_irnn" / "digits_irnn.pt2"
VIT = PROJECT_ROOT / "models" / "digits_vit" / "digits_vit.pt2"


def _split(model: object, role: str, labels: bool = True, limit: int | None = None) -> Dataset:
    data = load_dataset(DATA / f"{role}.npz", model.signature, role=role, need_labels=labels)  # type: ignore[attr-defined]
    if limit is None:
        return data
    labels = None if data.labels is None else data.labels[:limit]
    return Dataset(data.path, tuple(a[:limit] for a in data.inputs), labels, f"{data.sha256}:{limit}", data.whole)


def _context(tmp_path: Path, source: Path, settings: LadderSettings, *, as_onnx: bool = False,
             train: int | None = None) -> LadderContext:
    model = load_model(source)
    onnx_path = export_program_to_onnx(model.handle.program, tmp_path / "model.onnx")
    if as_onnx:  # the same network given as an ONNX file
        model = load_model(onnx_path)
    return LadderContext(model=model, graph=None, floats={"onnx": onnx_path},
                         calibration=_split(model, "calibration", False), selection=_split(model, "selection"),
                         evaluation=_split(model, "evaluation"),
                         train=None if train is None else _split(model, "train", limit=train), threshold=1.0,
                         settings=settings, work=tmp_path / "ladder")


def test_qat_improves_the_reference_model_over_ptq(tmp_path: Path) -> None:
    """digits_irnn (models/digits_irnn/MODEL.md): PTQ drifts over the 64 recurrent steps, QAT recovers it.

    Distillation on the 200 calibration images keeps this under a minute; benchmarks/qat.py runs the whole
    ladder (with the calibration search) with labels and with distillation."""
    settings = LadderSettings(steps=("ptq", "qat"), precisions=("int8",), qat_epochs=3, qat_learning_rate=1e-4)
    artifacts, report = run_ladder(_context(tmp_path, IRNN, settings))
    ptq, qat = report.steps
    assert (ptq.step, qat.step) == ("ptq", "qat") and ptq.status == "missed"
    assert ptq.selection["onnx"].flips_points > 3.0, "PTQ changes top-1 answers on the selection split"
    assert ptq.drop_points["onnx"] > 3.0, "PTQ loses accuracy on the evaluation split (MODEL.md: 5.25 points)"
    assert qat.accuracy["onnx"] >= ptq.accuracy["onnx"] + 0.03, (ptq.accuracy, qat.accuracy)
    assert qat.selection["onnx"].flips_points < ptq.selection["onnx"].flips_points
    assert "distilled" in qat.note and report.final_step == "qat"
    graph = onnx.load(str(artifacts[0].path)).graph
    gemms = [n for n in graph.node if n.op_type == "Gemm"]
    producers = {o: n.op_type for n in graph.node for o in n.output}
    assert len(gemms) >= 64 and all(producers.get(n.input[0]) == "DequantizeLinear" for n in gemms), \
        "every recurrent step's Gemm reads a quantized state"
    assert any(i.data_type == onnx.TensorProto.INT8 for i in graph.initializer), "int8 weights"


def test_qat_fine_tunes_on_labels_with_activation_ranges_frozen_at_calibration(tmp_path: Path) -> None:
    """With a labelled training split pt2e QAT trains on the labels; activation ranges are the float model's
    min/max over the calibration split, frozen (as PTQ's minmax), while weight quantizers keep observing."""
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

    from edgepipe.quantize import qat_torch
    from edgepipe.quantize.qat_torch import TorchQatRequest, run_torch_qat

    model = load_model(VIT)
    calibration = _split(model, "calibration", False, limit=16)
    prepared = prepare_qat_pt2e(model.handle.program.module(), qat_torch.qat_quantizer(per_channel=True))
    count = qat_torch.calibrate_activations(prepared, calibration)
    activations = [m for m in prepared.modules() if qat_torch.is_activation_quantizer(m)]
    assert count == len(activations) >= 10
    assert all(int(m.observer_enabled[0]) == 0 and int(m.fake_quant_enabled[0]) == 1 for m in activations)
    low, high = float(calibration.inputs[0].min()), float(calibration.inputs[0].max())
    expected = torch.tensor((high - low) / 255)
    assert any(torch.allclose(m.scale, expected, rtol=1e-4) for m in activations), "the input's range: its min/max"

    request = TorchQatRequest(program=model.handle.program, example_inputs=model.handle.example_inputs,
                              calibration=calibration, train=_split(model, "train", limit=64), epochs=1,
                              learning_rate=1e-4)
    result = run_torch_qat(request, tmp_path / "qat.onnx")
    assert result.loss == "labels" and result.samples == 64 and len(result.epoch_losses) == 1
    graph = onnx.load(str(result.onnx)).graph
    assert sum(n.op_type == "QuantizeLinear" for n in graph.node) >= 5
    assert np.isfinite(result.epoch_losses).all()


def test_qat_step_on_an_onnx_input_trains_through_onnx2torch(tmp_path: Path) -> None:
    from edgepipe.quantize.qat_torch_step import torch_qat_step

    settings = LadderSettings(steps=("ptq", "qat"), precisions=("int8",), qat_epochs=3, qat_learning_rate=1e-3)
    context = _context(tmp_path, VIT, settings, as_onnx=True)
    result = torch_qat_step(context)
    assert context.model.format == "onnx" and result.outcome.status == "missed", result.outcome.note
    assert "onnx2torch" in result.outcome.note and "distilled from the original float ONNX" in result.outcome.note
    graph = onnx.load(str(result.artifacts["onnx"].path)).graph
    assert sum(n.op_type == "QuantizeLinear" for n in graph.node) >= 5
