"""The zoo's data is what it claims: honest labels that the float models themselves confirm.

- the rendered text turned by 0°/180° is classified by both PP-OCR direction classifiers
  (float, ONNX Runtime) at the label the data carries, read through the class-folder and
  labels-CSV readers a build uses;
- the bytes of real files get Magika's own content type for most files (a file-type label is
  honest, the model is not perfect);
- every model's config is valid for ``load_config`` and names data that exists.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from edgepipe.config import load_config
from edgepipe.data.dataset import load_dataset
from edgepipe.tensors import Signature, TensorSpec
from tests.realmodels import zoo

CLS = Signature(inputs=(TensorSpec("x", (1, 3, 48, 192), np.dtype(np.float32)),),
                outputs=(TensorSpec("y", (1, 2), np.dtype(np.float32)),))


@pytest.mark.parametrize(("name", "evaluation"), [("ppocr_v2_cls", "eval"), ("ppocr_v4_cls", "eval/labels.csv")])
def test_rotation_labels_are_what_the_float_classifier_sees(name: str, evaluation: str, tmp_path: Path) -> None:
    config = load_config(zoo.prepare(zoo.BY_NAME[name], tmp_path, zoo.DataSize(calibration=4, evaluation=16)))
    data = load_dataset(tmp_path / name / evaluation, CLS, role="evaluation", num_classes=2,
                        preprocess=config.preprocess)
    assert len(data) == 16 and sorted(np.bincount(data.labels).tolist()) == [8, 8]
    session = ort.InferenceSession(str(config.model), providers=["CPUExecutionProvider"])
    predicted = np.array([int(np.argmax(session.run(None, {"x": x})[0])) for (x,) in data.samples()])
    assert np.mean(predicted == data.labels) >= 0.9, (predicted, data.labels)


def test_file_type_labels_mostly_agree_with_magika(tmp_path: Path) -> None:
    config = load_config(zoo.prepare(zoo.BY_NAME["magika"], tmp_path, zoo.DataSize(calibration=8, evaluation=32)))
    data = np.load(config.data.evaluation)
    assert data["bytes"].dtype == np.int32 and data["bytes"].shape[1] == 2048
    assert data["bytes"].min() >= 0 and data["bytes"].max() <= 256  # bytes and the padding token
    assert len(np.unique(data["labels"])) >= 6
    session = ort.InferenceSession(str(config.model), providers=["CPUExecutionProvider"])
    scores = session.run(None, {"bytes": data["bytes"]})[0]
    assert np.mean(scores.argmax(axis=1) == data["labels"]) >= 0.6
    # the labelled selection split the ladder decides on shares no file with the evaluation or calibration
    assert config.data.selection is not None
    selection, calibration = np.load(config.data.selection), np.load(config.data.calibration)
    assert len(selection["labels"]) == len(selection["bytes"]) >= 12
    evaluated = {row.tobytes() for row in data["bytes"]} | {row.tobytes() for row in calibration["bytes"]}
    assert not any(row.tobytes() in evaluated for row in selection["bytes"])


@pytest.mark.parametrize("name", ["akiki_vad", "minilm_l6", "micro_wakeword", "oww_embedding"])
def test_configs_are_valid_and_data_fits(name: str, tmp_path: Path) -> None:
    config = load_config(zoo.prepare(zoo.BY_NAME[name], tmp_path, zoo.SMALL))
    assert config.model.is_file() and config.data.calibration.exists() and config.data.evaluation.exists()
    calib = np.load(config.data.calibration)
    assert all(len(calib[k]) == zoo.SMALL.calibration for k in calib.files)
    assert not any(np.all(calib[k] == calib[k].flat[0]) for k in calib.files if k != "token_type_ids")
