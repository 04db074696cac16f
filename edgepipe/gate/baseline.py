"""Reading reports from what CI has at hand, and writing baselines.

Accepted everywhere a report set is expected: a target's ``report.json``, a
build's ``summary.json``, a baseline file, or a folder holding any of those
(``build/<model>/`` or ``build/<model>/<target>/``).

A build's own reports are read strictly (:func:`load_reports`). A baseline is
read as plain data (:func:`load_baseline`): it may come from an older edgepipe
whose optional sections looked different, and the checks read only the fields
they compare; only a different major schema version is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from edgepipe.errors import UserError
from edgepipe.output import write_text_atomic
from edgepipe.report.schema import SCHEMA_VERSION, BuildReport
from edgepipe.report.summary import SUMMARY_JSON
from edgepipe.report.writer import REPORT_JSON

BASELINE_VERSION = "1"
_REQUIRED = ("schema_version", "target", "artifacts", "accuracy", "latency")
_FIX = "Rebuild it, or write the baseline again with `edgepipe baseline update`"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError("file not found", path=path, fix="Give a report.json, summary.json, baseline or build folder")\
            from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"not valid JSON ({exc})", path=path, fix="Give a report.json, summary.json or baseline")\
            from None


def _raw_from_folder(folder: Path) -> dict[str, tuple[Any, Path]]:
    for name in (REPORT_JSON, SUMMARY_JSON):
        if (folder / name).is_file():
            return _raw_reports(folder / name)
    found = sorted(folder.glob(f"*/{REPORT_JSON}"))
    if not found:
        raise UserError("no report.json or summary.json here", path=folder,
                        fix="Give the build folder (build/<model>) or a report file")
    raws = [(_read_json(p), p) for p in found]
    return {str(raw.get("target") if isinstance(raw, dict) else p.parent.name): (raw, p) for raw, p in raws}


def _raw_reports(path: Path) -> dict[str, tuple[Any, Path]]:
    """Every report in ``path`` as parsed JSON, with the file it came from, by target."""
    if path.is_dir():
        return _raw_from_folder(path)
    raw = _read_json(path)
    if isinstance(raw, dict) and "baseline_version" in raw:
        return {name: (report, path) for name, report in (raw.get("reports") or {}).items()}
    if isinstance(raw, dict) and "summary_version" in raw:
        reports = {}
        for line in raw.get("targets") or []:
            report_path = path.parent / line["report"]
            reports[line["target"]] = (_read_json(report_path), report_path)
        return reports
    target = raw.get("target") if isinstance(raw, dict) else None
    return {str(target): (raw, path)}


def _strict(raw: Any, path: Path) -> BuildReport:
    try:
        return BuildReport.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise UserError(f"not a report this edgepipe reads ({where}: {first['msg']})", path=path, fix=_FIX) from None


def _lenient(raw: Any, path: Path) -> dict[str, Any]:
    missing = [key for key in _REQUIRED if not isinstance(raw, dict) or key not in raw]
    if missing:
        raise UserError(f"not an edgepipe report (no {', '.join(missing)})", path=path, fix=_FIX)
    major, current = str(raw["schema_version"]).split(".")[0], SCHEMA_VERSION.split(".")[0]
    if major != current:
        raise UserError(f"report schema {raw['schema_version']}, this edgepipe reads {SCHEMA_VERSION}", path=path,
                        fix=_FIX)
    return raw


def load_reports(path: Path) -> dict[str, BuildReport]:
    """The reports in ``path`` by target, validated against this edgepipe's report schema."""
    return {name: _strict(raw, source) for name, (raw, source) in _raw_reports(path).items()}


def load_baseline(path: Path) -> dict[str, dict[str, Any]]:
    """The reports in ``path`` by target, as plain data (older optional sections are fine)."""
    return {name: _lenient(raw, source) for name, (raw, source) in _raw_reports(path).items()}


def write_baseline(reports: dict[str, BuildReport], path: Path, *,
                   replace: bool = False) -> dict[str, dict[str, Any]]:
    """Write ``reports`` as the baseline at ``path``; targets already there are kept unless ``replace``.

    Returns the reports the baseline holds now, by target.
    """
    kept = load_baseline(path) if path.is_file() and not replace else {}
    merged = {**kept, **{name: report.model_dump(mode="json") for name, report in reports.items()}}
    payload = {"baseline_version": BASELINE_VERSION, "reports": {name: merged[name] for name in sorted(merged)}}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    return merged
