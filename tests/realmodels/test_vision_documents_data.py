"""Held-out vision models of documents, captchas and files seen as images (tests/realmodels/models/
vision_documents.py): their data made as each package feeds its model, and the models doing their job on it."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.vision_documents import (
    ICBC_CLASSES,
    ICBC_LENGTH,
    icbc_captchas,
    malviz_byte_plots,
    orinet_pages,
    vietcombank_captchas,
)


def _session(name: str) -> Any:
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_orinet_tells_how_far_each_page_was_turned() -> None:
    """Pages turned by seeded quarter turns, letterboxed as the package's ``_prep`` does: OriNet names the turn of
    nearly every page (a wrong normalization or a missed letterbox would scatter its answers)."""
    data = orinet_pages(None, 8, 3)  # type: ignore[arg-type]
    assert data["x"].shape == (8, 3, 320, 320) and len(set(data["labels"].tolist())) > 1
    logits = _session("orinet_orientation").run(None, {"x": data["x"]})[0]
    assert (logits.argmax(axis=1) == data["labels"]).mean() >= 0.75


def test_malviz_calls_the_python_install_benign() -> None:
    """Byte plots of files of Python's own install, made by the package's code: the classifier puts them in its
    "Benign" class (index 6 of its 26), not in a malware family."""
    images = malviz_byte_plots(None, 4, 0)["input"]  # type: ignore[arg-type]
    assert images.shape == (4, 3, 224, 224) and images.std() > 0.1
    logits = _session("malviz_resnet18").run(None, {"input": images})[0]
    assert (logits.argmax(axis=1) == 6).mean() >= 0.75


def test_captchas_are_deterministic_and_shaped_as_each_package_reads_them() -> None:
    first = vietcombank_captchas(None, 3, 7)["input"]  # type: ignore[arg-type]
    assert first.shape == (3, 50, 155, 3) and 0.0 <= first.min() and first.max() <= 1.0
    assert np.array_equal(first, vietcombank_captchas(None, 3, 7)["input"])  # type: ignore[arg-type]
    grey = icbc_captchas(None, 2, 1)["image"]  # type: ignore[arg-type]
    assert grey.shape == (2, 1, 28, 80) and 0.0 <= grey.min() and grey.max() <= 1.0
    logits = _session("icbc_captcha").run(None, {"image": grey[:1]})[0]  # exported at batch 1
    assert logits.shape == (1, ICBC_LENGTH, ICBC_CLASSES)
