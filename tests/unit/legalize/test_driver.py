"""When a rewrite is tried, kept or refused: the target's placement, the rewritten form's support, the outputs, and
the config's switches."""

from __future__ import annotations

import typing
from dataclasses import replace

import pytest

from edgepipe.config import LegalizeConfig, RewriteName
from edgepipe.legalize import REWRITES, legalizable
from edgepipe.legalize import driver as driver_module
from edgepipe.legalize.hard_sigmoid import hard_sigmoid_as_clip
from edgepipe.legalize.rewrite import Site
from edgepipe.targets import load_profile
from tests.unit.legalize import graphs
from tests.unit.legalize.conftest import Legalize


def test_every_rewrite_is_registered_once_under_the_name_the_config_takes() -> None:
    assert [r.name for r in REWRITES] == list(typing.get_args(RewriteName))
    assert all(r.rule.endswith(".") and len(r.rule) < 120 and r.replaces for r in REWRITES)


def test_an_op_the_accelerator_runs_is_left_alone(legalize: Legalize) -> None:
    run = legalize(graphs.hard_sigmoid(), graphs.profile(HardSigmoid={}))
    assert run.result.report.rewrites == [] and run.result.path is None
    assert run.result.report.before == run.result.report.after


def test_refused_when_the_accelerator_lacks_the_rewritten_form(legalize: Legalize) -> None:
    run = legalize(graphs.hard_sigmoid(), graphs.profile(without=("Clip",)))
    (outcome,) = run.result.report.rewrites
    assert outcome.status == "refused" and "Clip" in outcome.reason and run.result.path is None


def test_refused_when_the_rewritten_form_lands_on_the_cpu_too(legalize: Legalize) -> None:
    run = legalize(graphs.hard_sigmoid(), graphs.profile(Clip={"max_rank": 2}))  # the 4-D Clip stays on the CPU
    (outcome,) = run.result.report.rewrites
    assert outcome.status == "refused" and outcome.reason.startswith("placement not better") and outcome.nodes == 1
    assert run.ops["HardSigmoid"] == 1


def test_refused_when_the_outputs_differ(legalize: Legalize, monkeypatch: pytest.MonkeyPatch) -> None:
    def off_by_a_bit(site: Site) -> int:  # a rewrite with the wrong slope
        for node in site.candidates("HardSigmoid"):
            node.attribute[0].f *= 1.01
        return hard_sigmoid_as_clip(site)

    broken = replace(REWRITES[0], apply=off_by_a_bit)
    monkeypatch.setattr(driver_module, "REWRITES", (broken,))
    run = legalize(graphs.hard_sigmoid(), graphs.profile())
    (outcome,) = run.result.report.rewrites
    assert outcome.status == "refused" and "outputs differ" in outcome.reason and run.result.path is None
    assert outcome.max_relative_error is not None and outcome.max_relative_error > 1e-5


def test_a_rewrite_turned_off_is_reported_and_not_tried(legalize: Legalize) -> None:
    run = legalize(graphs.hard_sigmoid(), graphs.profile(), LegalizeConfig(rewrites={"hard-sigmoid": False}))
    (outcome,) = run.result.report.rewrites
    assert outcome.status == "off" and run.result.path is None


def test_legalization_runs_only_for_targets_checking_onnx_against_a_partial_op_table() -> None:
    on = LegalizeConfig()
    assert legalizable(load_profile("mobile-npu"), on) and legalizable(load_profile("rk3588"), on)
    assert not legalizable(load_profile("host-cpu"), on)  # every op runs there
    assert not legalizable(load_profile("ethos-u55"), on)  # checks TFLite
    assert not legalizable(load_profile("mobile-npu"), LegalizeConfig(enabled=False))
    names: dict[RewriteName, bool] = {name: False for name in typing.get_args(RewriteName)}
    assert not legalizable(load_profile("mobile-npu"), LegalizeConfig(rewrites=names))


def test_the_model_file_is_never_changed(legalize: Legalize) -> None:
    model = graphs.hard_sigmoid()
    run = legalize(model, graphs.profile())
    assert run.result.path is not None and run.result.path != run.source
    assert run.source.read_bytes() == model.SerializeToString()


def test_the_targets_guide_lists_every_rewrite_with_its_rule() -> None:
    from edgepipe.config import PROJECT_ROOT

    page = (PROJECT_ROOT / "docs" / "guide" / "targets.md").read_text(encoding="utf-8")
    assert all(f"| `{r.name}` | {r.rule} |" in page for r in REWRITES)
