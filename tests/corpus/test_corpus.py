"""Every corpus entry through the real CLI, in-process: a clean answer, no partial output, no stray writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgepipe.cli import main
from tests.corpus import make_corpus
from tests.corpus.conftest import assert_clean_answer, snapshot, substitute

ENTRIES = {entry["name"]: entry for entry in make_corpus.manifest()}


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_corpus_entry(name: str, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    entry = ENTRIES[name]
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)  # anything written to the working folder shows up in the snapshot
    monkeypatch.setenv("EDGEPIPE_CACHE_DIR", str(tmp_path / "cache"))
    for key, value in entry["env"].items():
        monkeypatch.setenv(key, substitute(value, corpus, out, tmp_path))
    before_corpus, before_tmp = snapshot(corpus), snapshot(tmp_path)
    code = main([substitute(arg, corpus, out, tmp_path) for arg in entry["args"]])
    assert_clean_answer(entry, code, capsys.readouterr().err, corpus, out, tmp_path)
    assert snapshot(corpus) == before_corpus, "the inputs were modified"
    assert snapshot(tmp_path) == before_tmp, "something was written (a partial output, or outside the output)"


def test_manifest_lists_every_entry_with_an_answer(corpus: Path) -> None:
    listed = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    names = [entry["name"] for entry in listed]
    assert len(names) == len(set(names))
    assert set(ENTRIES) | {e["name"] for e in make_corpus.special_entries()} == set(names)
    for entry in listed:
        assert entry["exit_code"] in (0, 1, 130)


def test_corpus_is_deterministic(tmp_path: Path, corpus: Path) -> None:
    again = tmp_path / "again"
    make_corpus.main(again)
    files = sorted(p.relative_to(corpus) for p in corpus.rglob("*") if p.is_file() and not p.is_symlink())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file() and not p.is_symlink())
    changed = [f for f in files if f.name != "manifest.json" and (corpus / f).read_bytes() != (again / f).read_bytes()]
    assert changed == [], changed


def test_lambda_file_really_holds_code_that_runs_without_safe_mode(corpus: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The keras_lambda entry is armed: loaded unsafely its code writes the marker (so the CLI refusal means it)."""
    from edgepipe.frameworks import import_keras

    marker = tmp_path / "LAMBDA_CODE_RAN"
    monkeypatch.setenv("EDGEPIPE_CORPUS_MARKER", str(marker))
    keras = import_keras()
    with pytest.raises(ValueError, match="weights"):  # the corpus file carries no weights; the code ran first
        keras.saving.load_model(corpus / "keras_lambda.keras", safe_mode=False)
    assert marker.read_text() == "code ran"
    marker.unlink()
    with pytest.raises(ValueError, match="Lambda"):
        keras.saving.load_model(corpus / "keras_lambda.keras", safe_mode=True)
    assert not marker.exists()


def _ort_accepts(opset: int, domain: str) -> bool:
    import onnxruntime as ort
    from onnx import TensorProto, helper

    value = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])]
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", value,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    imports = [helper.make_opsetid("", 17 if domain else opset)] + ([helper.make_opsetid(domain, opset)] if domain
                                                                    else [])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - any refusal is what we probe for
        return False
    return True


@pytest.mark.parametrize("domain", ["", "ai.onnx.ml"])
def test_supported_opsets_match_onnxruntime(domain: str) -> None:
    """SUPPORTED_OPSETS is exactly what the pinned ONNX Runtime loads: its newest opset, and not one more."""
    from edgepipe.load.onnx_checks import SUPPORTED_OPSETS

    newest = SUPPORTED_OPSETS[domain]
    assert _ort_accepts(newest, domain)
    assert not _ort_accepts(newest + 1, domain)
