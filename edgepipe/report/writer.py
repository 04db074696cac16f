"""Write a report's files into a (staging) folder, and into the CI job's step summary."""

from __future__ import annotations

import os
from pathlib import Path

from edgepipe.report.markdown import render_markdown
from edgepipe.report.schema import BuildReport

REPORT_JSON = "report.json"
REPORT_MD = "report.md"
#: GitHub Actions sets this to a Markdown file shown on the run's summary page.
STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def write_report(report: BuildReport, folder: Path) -> list[Path]:
    """Write ``report.json`` and ``report.md`` into ``folder``; returns the paths written."""
    json_path = folder / REPORT_JSON
    json_path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    md_path = folder / REPORT_MD
    md_path.write_text(render_markdown(report), encoding="utf-8")
    return [json_path, md_path]


def append_step_summary(markdown: str) -> Path | None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY`` when it is set; returns the file, or ``None``."""
    target = os.environ.get(STEP_SUMMARY_ENV)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(markdown.rstrip("\n") + "\n\n")
    return path
