"""Loading PyTorch models: .pt2 archives are checked before torch.export.load runs; factories are explicit."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from edgepipe.config import PROJECT_ROOT
from edgepipe.errors import ModelLoadError
from edgepipe.load import load_model
from edgepipe.load.torch_loader import check_archive, import_torch

REFERENCE = PROJECT_ROOT / "models" / "digits_vit" / "digits_vit.pt2"


class _TouchOnUnpickle:
    """A pickle payload that creates a file when unpickled: stands for arbitrary code in a hostile archive."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (Path.touch, (self.marker,))


def _hostile_tensor_file(marker: Path) -> bytes:
    buffer = io.BytesIO()
    torch.save(_TouchOnUnpickle(marker), buffer)
    return buffer.getvalue()


def _rewrite(source: Path, target: Path, member_suffix: str, data: bytes) -> None:
    """Copy the zip ``source`` to ``target`` with the member ending in ``member_suffix`` replaced by ``data``."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, data if info.filename.endswith(member_suffix) else src.read(info.filename))


def test_reference_pt2_loads_with_its_signature() -> None:
    model = load_model(REFERENCE)
    assert model.format == "pytorch" and len(model.sha256) == 64
    assert [s.shape for s in model.signature.inputs] == [(1, 8, 8, 1)]
    assert [s.shape for s in model.signature.outputs] == [(1, 10)]
    with np.load(PROJECT_ROOT / "calib" / "digits" / "evaluation.npz") as data:
        images, labels = data["input"][:50], data["labels"][:50]
    logits = np.concatenate([model.handle.run([image[None]])[0] for image in images])
    assert float(np.mean(logits.argmax(1) == labels)) >= 0.85


def test_pickled_sample_inputs_are_refused_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "code_ran"
    hostile = tmp_path / "hostile.pt2"
    _rewrite(REFERENCE, hostile, "/data/sample_inputs/model.pt", _hostile_tensor_file(marker))
    with pytest.raises(ModelLoadError, match="sample inputs are not plain tensors"):
        load_model(hostile)
    assert not marker.exists()
    # What the check prevents: torch.export.load falls back to weights_only=False and runs the payload.
    subprocess.run([sys.executable, "-c", f"import torch; torch.export.load({str(hostile)!r})"],
                   capture_output=True, timeout=300, check=False)
    assert marker.exists()


def test_weights_flagged_for_pickle_are_refused(tmp_path: Path) -> None:
    with zipfile.ZipFile(REFERENCE) as archive:
        name = next(n for n in archive.namelist() if n.endswith("weights_config.json"))
        config = json.loads(archive.read(name))
    first = next(iter(config["config"]))
    config["config"][first]["use_pickle"] = True
    flagged = tmp_path / "flagged.pt2"
    _rewrite(REFERENCE, flagged, "weights_config.json", json.dumps(config).encode())
    with pytest.raises(ModelLoadError, match=f"{first} is pickled"):
        check_archive(flagged)


def test_not_an_archive_is_a_user_error(tmp_path: Path) -> None:
    fake = tmp_path / "model.pt2"
    fake.write_bytes(b"not a zip")
    with pytest.raises(ModelLoadError, match="not a torch.export archive"):
        load_model(fake)


def test_missing_torch_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # what `import torch` meets when the extra is not installed
    with pytest.raises(ModelLoadError, match=r"pip install 'edgepipe\[torch\]'"):
        import_torch()


def test_factory_loads_and_names_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(PROJECT_ROOT)
    model = load_model(Path("python:tests.torch.torch_factories:small_cnn"))
    assert model.format == "pytorch" and [s.shape for s in model.signature.outputs] == [(1, 10)]
    again = load_model(Path("python:tests.torch.torch_factories:small_cnn"))
    assert again.sha256 == model.sha256, "the content hash of a factory's program is stable"


@pytest.mark.parametrize(("reference", "message"), [
    ("python:tests.torch.torch_factories:data_dependent", "torch.export cannot trace"),
    ("python:tests.torch.torch_factories:not_a_model", "must return"),
    ("python:tests.torch.no_such_module:factory", "cannot import"),
    ("python:tests.torch.torch_factories", "is not python:pkg.module:factory"),
])
def test_factory_problems_are_user_errors(monkeypatch: pytest.MonkeyPatch, reference: str, message: str) -> None:
    monkeypatch.chdir(PROJECT_ROOT)
    with pytest.raises(ModelLoadError, match=message):
        load_model(Path(reference))


def test_copied_archive_still_loads(tmp_path: Path) -> None:
    copy = Path(shutil.copyfile(REFERENCE, tmp_path / "copy.pt2"))
    check_archive(copy)
