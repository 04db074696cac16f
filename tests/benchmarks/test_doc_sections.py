"""Benchmark numbers come from scripts: sections between markers in the measurement logs under
benchmarks/results/, each saying when, where and how many runs (docs/ holds none); the benchmark models are
split into a tuning and a held-out set."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

from edgepipe.config import PROJECT_ROOT

BENCHMARKS = PROJECT_ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from doc_sections import model_error_lines, read_section, write_section  # noqa: E402
from nets import make_held_out_nets, make_nets  # noqa: E402

SECTION = re.compile(r"<!-- BEGIN (\S+): written by benchmarks/(\S+), do not edit by hand -->\n(.*?)\n"
                     r"<!-- END \1 -->", re.S)


def test_write_section_replaces_only_its_own_section(tmp_path: Path) -> None:
    doc = tmp_path / "DOC.md"
    doc.write_text("# Title\n\nkept prose\n", encoding="utf-8")
    write_section(doc, "a.py", "first")
    write_section(doc, "b.py:x", "other")
    write_section(doc, "a.py", "second\n")
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Title\n\nkept prose\n") and text.count("BEGIN a.py") == 1
    assert read_section(doc, "a.py") == "second" and read_section(doc, "b.py:x") == "other"
    assert read_section(doc, "c.py") is None


@pytest.mark.parametrize("log", ["benchmarks.md", "performance.md"])
def test_every_logged_section_names_its_script_date_machine_and_runs(log: str) -> None:
    text = (BENCHMARKS / "results" / log).read_text(encoding="utf-8")
    sections = SECTION.findall(text)
    begins = re.findall(r"^<!-- BEGIN ", text, re.M)
    assert sections and len(begins) == len(sections), "every BEGIN has its END"
    for name, script, body in sections:
        assert name.split(":")[0] == script and (BENCHMARKS / script).is_file(), name
        first = body.splitlines()[0]
        assert first.startswith(("_Measured ", "_Not measured yet")), f"{name}: {first}"
        if first.startswith("_Measured "):
            assert f"`benchmarks/{script}`" in first and " UTC " in first and "CPUs" in first and "runs:" in first


def test_docs_hold_no_measurement_section() -> None:
    docs = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").rglob("*.md"))]
    holding = [str(p.relative_to(PROJECT_ROOT)) for p in docs if "<!-- BEGIN " in p.read_text(encoding="utf-8")]
    assert not holding, f"measurement sections belong in benchmarks/results/, not in {holding}"


def test_benchmark_models_split_into_disjoint_tuning_and_held_out_sets(tmp_path: Path) -> None:
    sets = tomllib.loads((BENCHMARKS / "models.toml").read_text(encoding="utf-8"))
    tuning = {name for names in sets["tuning"].values() for name in names}
    held_out = {name for names in sets["held_out"].values() for name in names}
    assert tuning and held_out and not tuning & held_out
    made = {p.stem for p in make_held_out_nets(tmp_path / "held")}
    assert set(sets["held_out"]["generated"]) <= made
    assert not made & {p.stem for p in make_nets(tmp_path / "tuning")}


def test_cost_model_errors_are_summed_up_per_model_set_and_an_empty_set_is_left_out() -> None:
    lines = model_error_lines({"fit": [0.1, 0.3, 0.2], "held-out": []}, "step time", "models")
    assert lines == ["- fit models: the modelled step time is off by 20% (median), 30% (worst) over 3 models."]
