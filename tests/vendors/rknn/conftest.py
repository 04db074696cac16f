"""The RKNN environment these tests compile with, the agreement check they share, and their marker: every test here
runs rknn-toolkit2 in its own environment (``toolchain``)."""

import subprocess
import sys
from pathlib import Path

import pytest

from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.vendors import vendor_verification
from edgepipe.vendors.rknn.toolkit import Rknn

EDGEPIPE = [sys.executable, "-c", "import sys; from edgepipe.cli.app import main; sys.exit(main(sys.argv[1:]))"]

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def rknn_installed() -> Rknn:
    """rknn-toolkit2 installed the way a user does (`edgepipe toolchain install rknn`) into the user cache
    folder, where a later run finds it; a fresh CI machine installs it once (minutes)."""
    proc = subprocess.run([*EDGEPIPE, "toolchain", "install", "rknn"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    listed = subprocess.run([*EDGEPIPE, "toolchain", "list"], capture_output=True, text=True, check=True).stdout
    assert any(line.startswith("rknn") and "installed 2.5.0" in line for line in listed.splitlines()), listed
    tool = Rknn()
    assert tool.available()
    return tool


def agreement_with_vendor(model: Path, target: str, work: Path) -> tuple[dict[str, int], object]:
    """(edgepipe's CPU ops by type, the verification) for ``model`` on ``target``, asserting that the vendor's
    compiler ran and agrees on every node."""
    profile = load_profile(target)
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, work, graph)
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, (result.disagreements, result.extra)
    return report.cpu_ops, result


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder runs rknn-toolkit2 2.5.0: marker ``toolchain``."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.toolchain)
