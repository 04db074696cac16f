"""Exit classes that diagnose: 1 = the user's input or environment, 2 = gate, 3 = a bug in edgepipe only;
``--json`` prints one JSON document on stdout whatever the exit code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import onnx
import pytest

from edgepipe import pipeline
from edgepipe.cli import main
from edgepipe.errors import ExitCode, MissingToolchain, ModelLoadError
from edgepipe.load import load_model
from edgepipe.load.rejections import is_expected_rejection


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


def test_json_on_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["build", "--json", "-q", "--model", str(tmp_path / "missing.onnx")])
    document = _json(capsys)
    assert code == ExitCode.USER_ERROR == document["exit_code"] and document["verdict"] == "error"
    assert document["error"]["kind"] == "user error" and "model not found" in document["error"]["message"]
    assert document["error"]["fix"]


def test_json_on_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--json", "--no-such-option"]) == ExitCode.USER_ERROR
    assert _json(capsys)["exit_code"] == ExitCode.USER_ERROR


def test_json_on_a_bug(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(pipeline, "run_build", broken)
    assert main(["build", "--json", "-q"]) == ExitCode.INTERNAL_ERROR
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["exit_code"] == 3 and document["error"]["kind"] == "internal error"
    assert "ZeroDivisionError" in document["error"]["message"] and "Traceback" in captured.err


def test_a_library_rejection_is_a_user_error_with_its_cause(tmp_path: Path) -> None:
    path = tmp_path / "garbage.onnx"
    path.write_bytes(b"\x08\x07\x12\x04not an onnx model at all" * 3)
    with pytest.raises(ModelLoadError) as caught:
        load_model(path)
    assert is_expected_rejection(caught.value) and caught.value.exit_code == ExitCode.USER_ERROR
    assert type(caught.value.__cause__).__module__.startswith(("google.protobuf", "onnx"))


def test_a_bug_in_a_loader_is_not_dressed_as_a_user_error(tiny: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    def checker_bug(model: object) -> None:  # raised from edgepipe-side code, not from onnx
        raise ValueError("an edgepipe bug")

    monkeypatch.setattr(onnx.checker, "check_model", checker_bug)
    with pytest.raises(ValueError, match="an edgepipe bug"):
        load_model(tiny["onnx"])
    assert main(["build", "-q", "--model", str(tiny["onnx"])]) == ExitCode.INTERNAL_ERROR
    assert "bug in edgepipe" in capsys.readouterr().err


def test_a_missing_vendor_toolchain_names_its_install_and_the_build_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        reference_build: tuple[object, Path]) -> None:
    from edgepipe.perf import vela_estimate
    from edgepipe.perf.predict import predict
    from edgepipe.targets import load_profile

    _, folder = reference_build
    ethos = load_profile("ethos-u55")
    assert ethos.performance is not None
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # no vela beside it ...
    monkeypatch.setenv("PATH", str(tmp_path))  # ... nor on PATH: Vela is really absent for this process
    with pytest.raises(MissingToolchain) as caught:
        vela_estimate.run_vela(folder / "model_int8.tflite", ethos.performance)
    assert caught.value.exit_code == ExitCode.USER_ERROR
    assert "pip install 'edgepipe[vela]'" in caught.value.one_line()
    report = predict(folder / "model_int8.tflite", ethos)  # profile-based results still come
    assert report.estimator == "cost-model" and report.vela is None
    assert any("pip install 'edgepipe[vela]'" in note for note in report.notes)
