"""The toolchain registry, the profiles' vendor_tool lines, the CLI, and how agreement is counted."""

from __future__ import annotations

import subprocess
import sys

import pytest

from edgepipe.support.report import NodeVerdict, SupportReport
from edgepipe.targets import available_targets, load_profile
from edgepipe.vendors.base import CompileResult, OptionError
from edgepipe.vendors.compare import compare
from edgepipe.vendors.registry import TOOLCHAINS, get_toolchain, toolchain_for

EDGEPIPE = [sys.executable, "-c", "import sys; from edgepipe.cli.app import main; sys.exit(main(sys.argv[1:]))"]


def test_every_profile_names_a_known_tool_with_known_options() -> None:
    named = {}
    for name in available_targets():
        found = toolchain_for(load_profile(name))
        if found is not None:
            named[name] = found[0].name
    assert named == {"edge-box-npu": "rknn", "ethos-u55": "vela", "ethos-u85": "vela", "mobile-npu": "qnn",
                     "rk3576": "rknn", "rk3588": "rknn"}


def test_unknown_tool_and_option_are_rejected() -> None:
    with pytest.raises(OptionError, match="unknown toolchain 'tvm'"):
        get_toolchain("tvm")
    with pytest.raises(OptionError, match="qnn takes no option '--htp'"):
        get_toolchain("qnn").parse_options(["--htp", "73"])


def test_toolchain_list_shows_each_tool_and_its_install_command() -> None:
    out = subprocess.run([*EDGEPIPE, "toolchain", "list"], capture_output=True, text=True, check=True).stdout
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert set(lines) == set(TOOLCHAINS)
    assert "installed 5.2.0" in lines["vela"] and "pip install 'edgepipe[vela]'" in lines["vela"]
    assert "installed 2.7.0" in lines["qnn"]
    assert "edgepipe toolchain install rknn" in lines["rknn"]


def _report(placements: list[tuple[str, str]]) -> SupportReport:
    verdicts = [NodeVerdict(index=i, name=n, op="Conv", placement=p) for i, (n, p) in enumerate(placements)]  # type: ignore[arg-type]
    return SupportReport(target="t", artifact="m", format="onnx", partition_semantics="any", nodes=len(verdicts),
                         accelerator_nodes=0, node_share=0, macs=0, accelerator_macs=0, mac_share=1, partitions=0,
                         transitions=0, peak_activation_bytes=0, weights_bytes=0, sram_bytes=None, fits_sram=None,
                         cpu_ops={}, node_verdicts=verdicts, partition_list=[])


def test_unmatched_nodes_on_either_side_are_disagreements_and_cpu_classes_are_counted() -> None:
    report = _report([("a", "accelerator"), ("b", "cpu"), ("c", "cpu"), ("d", "accelerator")])
    result = CompileResult(tool="x", status="compiled", placement={"a": "accelerator", "b": "cpu", "c": "accelerator"},
                           unmatched={"renamed_d": "cpu"})
    verification = compare(report, result)
    assert (verification.compared, verification.agree, verification.vendor_only) == (5, 2, 1)
    extra = verification.extra
    assert (extra["edgepipe_unmatched"], extra["vendor_unmatched"]) == (1.0, 1.0)
    assert (extra["vendor_cpu"], extra["edgepipe_cpu"], extra["both_cpu"]) == (2.0, 2.0, 1.0)


@pytest.mark.parametrize(("status", "verdict"), [("compile_failed", "compile_failed"), ("failed", "failed"),
                                                 ("not installed", "not installed")])
def test_a_run_without_placement_keeps_its_status_and_message(status: str, verdict: str) -> None:
    result = CompileResult(tool="x", status=status, detail="the tool's message")  # type: ignore[arg-type]
    verification = compare(_report([("a", "accelerator")]), result)
    assert (verification.status, verification.detail, verification.compared) == (verdict, "the tool's message", 0)
