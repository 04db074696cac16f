"""Bad input: exit 1, one readable line naming the file and the fix, no traceback, nothing written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.cli import main
from edgepipe.errors import ExitCode


def _assert_clean_user_error(code: int, err: str, out_root: Path, *needles: str) -> None:
    assert code == ExitCode.USER_ERROR
    lines = [line for line in err.splitlines() if line.startswith("edgepipe: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert not out_root.exists() or not any(out_root.rglob("*")), "nothing may be left in the output folder"


def _build(tmp_path: Path, *args: str) -> int:
    return main(["build", "-q", "--output", str(tmp_path / "out"), *args])


def test_truncated_onnx(tmp_path: Path, tiny: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "cut.onnx"
    bad.write_bytes(tiny["onnx"].read_bytes()[:150])
    code = _build(tmp_path, "--model", str(bad))
    _assert_clean_user_error(code, capsys.readouterr().err, tmp_path / "out", str(bad), "ONNX")


def test_text_file_renamed_keras(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.keras"
    bad.write_text("just some notes")
    code = _build(tmp_path, "--model", str(bad))
    _assert_clean_user_error(code, capsys.readouterr().err, tmp_path / "out", str(bad), "model.save")


def test_calibration_of_wrong_shape(tmp_path: Path, reference_model: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "calib.npz"
    np.savez(bad, input=np.zeros((10, 28, 28, 1), np.float32))
    code = _build(tmp_path, "--model", str(reference_model), "--calib", str(bad))
    _assert_clean_user_error(code, capsys.readouterr().err, tmp_path / "out", str(bad), "8x8x1")


def test_npy_holding_a_pickle(tmp_path: Path, reference_model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "calib.npy"
    np.save(bad, np.array([object()], dtype=object), allow_pickle=True)
    code = _build(tmp_path, "--model", str(reference_model), "--calib", str(bad))
    _assert_clean_user_error(code, capsys.readouterr().err, tmp_path / "out", str(bad), "pickled")


def test_unknown_config_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "edgepipe.toml"
    config.write_text('model = "m.keras"\nthreshold = 2\n')
    code = _build(tmp_path, "--config", str(config))
    _assert_clean_user_error(code, capsys.readouterr().err, tmp_path / "out", str(config), "'threshold'",
                             "accuracy")


def test_missing_model_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = _build(tmp_path, "--model", str(tmp_path / "missing.keras"))
    _assert_clean_user_error(code, capsys.readouterr().err, tmp_path / "out", "missing.keras", "not found")


def test_unknown_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = _build(tmp_path, "--target", "pocket-calculator")
    _assert_clean_user_error(code, capsys.readouterr().err, tmp_path / "out", "pocket-calculator", "host-cpu")


def test_unknown_option_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = _build(tmp_path, "--frobnicate")
    _assert_clean_user_error(code, capsys.readouterr().err, tmp_path / "out", "--frobnicate")


def test_debug_shows_the_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--debug", "build", "--model", str(tmp_path / "missing.onnx")]) == ExitCode.USER_ERROR
    assert "Traceback" in capsys.readouterr().err


def test_a_bug_exits_three_with_its_traceback(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from edgepipe import pipeline

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(pipeline, "run_build", broken)
    assert main(["build", "-q"]) == ExitCode.INTERNAL_ERROR
    err = capsys.readouterr().err
    assert "Traceback" in err and "bug in edgepipe" in err


def test_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 user error" in out and "2 gate: accuracy gate failed" in out and "3 internal error" in out
    assert "missing optional toolchain" in out and "not proven" in out and "never exit 3" in out


def test_build_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "2 gate: accuracy gate failed" in out and "not proven" in out and "--target" in out


def test_targets_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["targets", "list"]) == 0
    assert "host-cpu" in capsys.readouterr().out
