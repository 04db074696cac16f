"""The fleet file is strict: every mistake is exit 1 with one line naming the file, the key and what is allowed,
before any job starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.cli import main
from edgepipe.config import DEFAULT_MODEL
from edgepipe.fleet.plan import plan_fleet
from edgepipe.fleet.spec import load_fleet

MODEL = f'[[models]]\nname = "digits"\nmodel = "{DEFAULT_MODEL}"\n'


def _fleet(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fleet.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "expected"), [
    ('targets = ["host-cpu"]\nworkerz = 2\n' + MODEL, "unknown key 'workerz'. Allowed keys here: build, cache"),
    ('targets = ["host-cpu"]\n[[models]]\nname = "d"\nmodl = "x.keras"\n',
     "unknown key 'models.0.modl'. Allowed keys here: config, data, model, name, targets"),
    ('targets = ["host-cpu"]\n[[models]]\nname = "d"\ndata = { calib = "x" }\n',
     "unknown key 'models.0.data.calib'. Allowed keys here: calibration, evaluation, selection, train"),
    ('targets = ["host-cpu"]\n[gate]\nfidelity = 1\n' + MODEL, "unknown key 'gate.fidelity'"),
    ('targets = ["host-cpu"]\n[build]\nlatency = { rnus = 3 }\n' + MODEL, "model 'digits'"),
    ('targets = ["host-cpu"]\n[build]\noutput = "x"\n' + MODEL, "[build] may not set output"),
    ('targets = ["no-such-device"]\n' + MODEL, "no-such-device"),
    ('targets = ["host-cpu"]\n[[models]]\nname = "d"\nmodel = "missing.onnx"\n', "missing.onnx does not exist"),
    ('targets = ["host-cpu"]\n' + MODEL + MODEL, "model name 'digits' appears twice"),
    ('targets = ["host-cpu"]\nmodels = []\n', "models"),
    ("targets = [", "not valid TOML"),
])
def test_fleet_file_mistakes_are_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                             expected: str) -> None:
    path = _fleet(tmp_path, text)
    assert main(["fleet", str(path), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(path) in err and expected in err, err
    assert not (tmp_path / "build").exists()  # nothing ran


def test_missing_fleet_file_and_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", str(tmp_path / "nope.toml")]) == 1
    assert "fleet file not found" in capsys.readouterr().err
    path = _fleet(tmp_path, 'targets = ["host-cpu"]\n' + MODEL)
    assert main(["fleet", str(path), "--executor", "spark"]) == 1
    assert "unknown executor 'spark'" in capsys.readouterr().err
    assert main(["fleet", str(path), "--address", "auto"]) == 1
    assert "--address is for --executor ray" in capsys.readouterr().err


def test_the_readme_example_plans(repo_root: Path) -> None:
    """`edgepipe fleet examples/fleet.toml` (README): two bundled models × four targets, three jobs per model (the
    targets that run int8, int16 and float layers; Ethos-U: int8 and int16 only; Edge TPU: int8 only)."""
    source = repo_root / "examples" / "fleet.toml"
    plan = plan_fleet(load_fleet(source), source)
    assert plan.models == ["digits_cnn", "digits_nobn"] and plan.cells == 8
    assert plan.targets == ["host-cpu", "ethos-u55", "mobile-npu", "edge-tpu"]  # in the fleet file's order
    assert [(j.job_id, j.targets) for j in plan.jobs] == [
        ("digits_cnn#0", ["host-cpu", "mobile-npu"]), ("digits_cnn#1", ["ethos-u55"]), ("digits_cnn#2", ["edge-tpu"]),
        ("digits_nobn#0", ["host-cpu", "mobile-npu"]), ("digits_nobn#1", ["ethos-u55"]),
        ("digits_nobn#2", ["edge-tpu"])]
    nobn = plan.jobs[3].config
    assert nobn.quantization.granularity == "per-tensor" and nobn.latency.runs == 20  # its config, then [build]
    assert nobn.output == repo_root / "build" / "fleet" / "digits_nobn"
    assert plan.jobs[0].cache_dir == repo_root / "build" / "fleet" / ".edgepipe-cache"
