"""Reading reports from what CI has at hand, and writing baselines.

Accepted everywhere a report set is expected: a target's ``report.json``, a
build's ``summary.json``, a baseline file, or a folder holding any of those
(``build/<model>/`` or ``build/<model>/<target>/``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from edgepipe.errors import UserError
from edgepipe.report.schema import BuildReport
from edgepipe.report.summary import SUMMARY_JSON, write_text_atomic
from edgepipe.report.writer import REPORT_JSON

BASELINE_VERSION = "1"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError("file not found", path=path, fix="Give a report.json, summary.json, baseline or build folder")\
            from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"not valid JSON ({exc})", path=path, fix="Give a report.json, summary.json or baseline")\
            from None


def _report(raw: Any, path: Path) -> BuildReport:
    try:
        return BuildReport.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"not a report this edgepipe reads ({where}: {first['msg']})", path=path,
                        fix="Rebuild it, or write the baseline again with `edgepipe baseline update`") from None


def _from_folder(folder: Path) -> dict[str, BuildReport]:
    for name in (REPORT_JSON, SUMMARY_JSON):
        if (folder / name).is_file():
            return load_reports(folder / name)
    found = sorted(folder.glob(f"*/{REPORT_JSON}"))
    if not found:
        raise UserError("no report.json or summary.json here", path=folder,
                        fix="Give the build folder (build/<model>) or a report file")
    return {r.target: r for r in (_report(_read_json(p), p) for p in found)}


def load_reports(path: Path) -> dict[str, BuildReport]:
    """The reports in ``path`` by target name (see the module docstring for what ``path`` may be)."""
    if path.is_dir():
        return _from_folder(path)
    raw = _read_json(path)
    if isinstance(raw, dict) and "baseline_version" in raw:
        return {name: _report(report, path) for name, report in (raw.get("reports") or {}).items()}
    if isinstance(raw, dict) and "summary_version" in raw:
        reports = {}
        for line in raw.get("targets") or []:
            report_path = path.parent / line["report"]
            reports[line["target"]] = _report(_read_json(report_path), report_path)
        return reports
    report = _report(raw, path)
    return {report.target: report}


def write_baseline(reports: dict[str, BuildReport], path: Path, *, replace: bool = False) -> dict[str, BuildReport]:
    """Write ``reports`` as the baseline at ``path``; targets already there are kept unless ``replace``.

    Returns the reports the baseline holds now, by target.
    """
    kept = load_reports(path) if path.is_file() and not replace else {}
    merged = {**kept, **reports}
    payload = {"baseline_version": BASELINE_VERSION,
               "reports": {name: merged[name].model_dump(mode="json") for name in sorted(merged)}}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    return merged
