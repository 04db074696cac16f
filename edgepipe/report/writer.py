"""Write a report's files into a (staging) folder."""

from __future__ import annotations

from pathlib import Path

from edgepipe.report.markdown import render_markdown
from edgepipe.report.schema import BuildReport

REPORT_JSON = "report.json"
REPORT_MD = "report.md"


def write_report(report: BuildReport, folder: Path) -> list[Path]:
    """Write ``report.json`` and ``report.md`` into ``folder``; returns the paths written."""
    json_path = folder / REPORT_JSON
    json_path.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    md_path = folder / REPORT_MD
    md_path.write_text(render_markdown(report), encoding="utf-8")
    return [json_path, md_path]
