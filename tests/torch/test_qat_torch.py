"""The ladder's QAT step on the PyTorch reference model (labels and distillation), and on it given as ONNX."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from edgepipe.config import PROJECT_ROOT
from edgepipe.data import load_dataset
from edgepipe.export.torch_to_onnx import export_program_to_onnx
from edgepipe.load import load_model
from edgepipe.quantize.ladder import LadderContext, LadderSettings, run_ladder

pytestmark = pytest.mark.slow
DATA = PROJECT_ROOT / "calib" / "digits"
MODEL = PROJECT_ROOT / "models" / "digits_vit" / "digits_vit.pt2"


def _context(tmp_path: Path, model_path: Path | None, labelled: bool) -> LadderContext:
    model = load_model(MODEL)
    onnx_path = export_program_to_onnx(model.handle.program, tmp_path / "model.onnx")
    if model_path is not None:  # the same network given as an ONNX file
        model = load_model(onnx_path)

    def split(role: str, labels: bool = True) -> object:
        return load_dataset(DATA / f"{role}.npz", model.signature, role=role, need_labels=labels)

    # An int8-only target and no calibration search: PTQ, then straight to QAT (benchmarks/qat.py runs all steps).
    settings = LadderSettings(steps=("ptq", "qat"), precisions=("int8",), qat_epochs=3, qat_learning_rate=1e-3)
    return LadderContext(model=model, graph=None, floats={"onnx": onnx_path}, calibration=split("calibration", False),
                         selection=split("selection"), evaluation=split("evaluation"),
                         train=split("train") if labelled else None, threshold=1.0, settings=settings,
                         work=tmp_path / "ladder")


@pytest.mark.xfail(reason="known, open: re-measured by benchmarks/qat.py with exact int8 semantics, PTQ of digits_vit "
                          "changes no top-1 on the selection split (1.0-point drop on evaluation), so the ladder stops "
                          "at PTQ and never reaches QAT; the reference model still needs a natural PTQ loss "
                          "(docs/PYTORCH.md, issue 15)", strict=False)
@pytest.mark.parametrize("labelled", [True, False], ids=["labels", "distillation"])
def test_qat_improves_the_reference_model_over_ptq(tmp_path: Path, labelled: bool) -> None:
    artifacts, report = run_ladder(_context(tmp_path, None, labelled))
    ptq, qat = report.steps
    assert (ptq.step, qat.step) == ("ptq", "qat") and ptq.status == "missed"
    assert ptq.drop_points["onnx"] > 3.0, "PTQ loses accuracy on the transformer (docs/PYTORCH.md)"
    assert qat.accuracy["onnx"] >= ptq.accuracy["onnx"] + 0.015, (ptq.accuracy, qat.accuracy)
    assert ("distilled" in qat.note) != labelled and report.final_step == "qat"
    graph = onnx.load(str(artifacts[0].path)).graph
    assert sum(n.op_type == "QuantizeLinear" for n in graph.node) >= 5
    assert any(i.data_type == onnx.TensorProto.INT8 for i in graph.initializer), "int8 weights"


def test_qat_step_on_an_onnx_input_trains_through_onnx2torch(tmp_path: Path) -> None:
    from edgepipe.quantize.qat_torch_step import torch_qat_step

    context = _context(tmp_path, tmp_path / "model.onnx", labelled=False)
    result = torch_qat_step(context)
    assert context.model.format == "onnx" and result.outcome.status == "missed", result.outcome.note
    assert "onnx2torch" in result.outcome.note and "distilled from the original float ONNX" in result.outcome.note
    graph = onnx.load(str(result.artifacts["onnx"].path)).graph
    assert sum(n.op_type == "QuantizeLinear" for n in graph.node) >= 5
