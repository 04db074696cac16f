"""report.html in a real browser: headless Chromium renders it, the screenshot is not blank and the DOM has
every section. Chromium comes from the Debian packages ``chromium`` / ``chromium-driver`` (.ci/run installs them)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from tests.e2e.conftest import Build

pytestmark = pytest.mark.slow

SECTIONS = ("summary", "pareto", "sensitivity", "placement", "targets")


def _chromium(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    assert exe, "Chromium is not installed: apt-get install -y chromium chromium-driver (see .ci/run)"
    with tempfile.TemporaryDirectory() as profile:
        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars",
                 f"--user-data-dir={profile}"]
        return subprocess.run([exe, *flags, *args], capture_output=True, text=True, timeout=180)


def test_report_html_renders_in_headless_chromium(all_targets_build: Build, tmp_path: Path) -> None:
    page = all_targets_build.root / "report.html"
    assert page.is_file(), all_targets_build.proc.stderr[-3000:]
    shot = tmp_path / "report.png"
    proc = _chromium(f"--screenshot={shot}", "--window-size=1280,2400", page.as_uri())
    assert shot.is_file(), proc.stderr[-3000:]
    import matplotlib.image

    pixels = np.asarray(matplotlib.image.imread(shot))[..., :3]
    assert pixels.shape[0] >= 2000 and pixels.shape[1] >= 1200
    assert pixels.std() > 0.05, "the screenshot is blank"
    colours = np.unique((pixels.reshape(-1, 3) * 255).astype(np.uint8), axis=0)
    assert len(colours) > 50, "text, tables and plots give many distinct colours"


def test_rendered_dom_has_every_section_and_plot(all_targets_build: Build) -> None:
    proc = _chromium("--dump-dom", (all_targets_build.root / "report.html").as_uri())
    dom = proc.stdout
    assert "<html" in dom, proc.stderr[-3000:]
    for section in SECTIONS:
        assert f'<section id="{section}">' in dom, section
    assert dom.count("<svg") >= 1
    for target in (p.name for p in all_targets_build.root.iterdir() if p.is_dir()):
        assert f'id="target-{target}"' in dom
