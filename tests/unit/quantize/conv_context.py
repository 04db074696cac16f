"""A ladder context over the generated Conv-ReLU-Conv whose channels span four decades
(:func:`tests.models.onnx_exports.conv_relu_conv`), with a gate nothing reaches, so that every step runs and says
what it did: what the tests of the all-int8 steps (equalization, NNCF) and of mixed precision start from."""

from __future__ import annotations

from pathlib import Path

from edgepipe.config import TaskConfig
from edgepipe.data.dataset import Dataset
from edgepipe.load import load_model
from edgepipe.metrics.label_free import Thresholds
from edgepipe.quantize.ladder import LadderContext, LadderSettings
from edgepipe.quantize.settings import prepare_float_onnx
from tests.models.onnx_exports import conv_relu_conv, image_batches


def conv_context(folder: Path, settings: LadderSettings, bias: float | None = None, *,
                 group_of: LadderContext | None = None) -> LadderContext:
    """The ladder's context for the float ONNX written to ``folder/model.onnx`` (``bias``: see
    :func:`~tests.models.onnx_exports.conv_relu_conv`), working in ``folder/ladder``. ``group_of``: another
    group of the same build, whose data and memo this one shares (as a build's quantization groups do)."""
    float_path = conv_relu_conv(folder / "model.onnx", bias)
    calibration = Dataset(folder / "calibration.npz", (image_batches(16, 16, 16, 0),), None, "0" * 64)
    selection = Dataset(folder / "selection.npz", (image_batches(8, 16, 16, 1),), None, "1" * 64)
    if group_of is not None:
        calibration, selection = group_of.calibration, group_of.selection
    work = folder / "ladder"
    work.mkdir()
    settings, notes = prepare_float_onnx({"onnx": float_path}, calibration, settings, work)
    context = LadderContext(model=load_model(float_path), graph=None, floats={"onnx": float_path},
                            calibration=calibration, selection=selection, evaluation=None, train=None, threshold=1.0,
                            settings=settings, work=work, preparation=notes, task=TaskConfig(kind="none"),
                            thresholds=Thresholds(min_cosine=0.999999, min_sqnr_db=150.0, min_part_sqnr_db=None))
    if group_of is not None:
        context.memo = group_of.memo
    return context
