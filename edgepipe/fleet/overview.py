"""Each model's own overview (``summary.{json,md}``, ``report.html``) over all its targets, after a fleet.

A model whose targets need several quantization groups is built by several
jobs, each writing the summary of its own group; afterwards the coordinator
rewrites them over all the model's targets, read back through the typed
``BuildReport``. The HTML page (matplotlib plots, seconds per model) is kept in
the build cache under the digest of the reports it shows, so an unchanged
model's page is copied, not redrawn.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections import Counter
from pathlib import Path

from edgepipe.cache import BuildCache, CacheKey, digest_of
from edgepipe.fleet.plan import FleetPlan
from edgepipe.fleet.report import FleetReport
from edgepipe.report import BuildReport
from edgepipe.report.summary import summarise, write_summary
from edgepipe.report.writer import REPORT_JSON

log = logging.getLogger(__name__)
REPORT_HTML = "report.html"


def _write_html(reports: dict[str, BuildReport], texts: dict[str, bytes], path: Path,
                cache: BuildCache | None) -> None:
    key = CacheKey(REPORT_HTML, digest_of({"fleet-model-html": {t: hashlib.sha256(b).hexdigest()
                                                               for t, b in texts.items()}}), {})
    entry = cache.lookup(key) if cache is not None else None
    if entry is not None and (entry / REPORT_HTML).is_file():
        shutil.copyfile(entry / REPORT_HTML, path)
        return
    from edgepipe.report.html import write_html  # matplotlib: only when the page is not in the cache

    write_html(list(reports.values()), path)
    if cache is not None:
        cache.store(key, [path])


def rewrite_model_overviews(output: Path, report: FleetReport, plan: FleetPlan, cache: BuildCache | None) -> None:
    """Rewrite summary.* and report.html of every model built by several jobs, over all its targets."""
    jobs = Counter(job.model for job in plan.jobs)
    for model in (m for m in report.models if jobs[m] > 1):
        cells = [c for c in report.cells if c.model == model and c.report]
        folders = [output / Path(str(c.report)).parent for c in cells]
        if not cells or not all((f / REPORT_JSON).is_file() for f in folders):
            log.info("%s: not every target folder is here; its summary covers one job's targets", model)
            continue
        texts = {c.target: (f / REPORT_JSON).read_bytes() for c, f in zip(cells, folders)}
        reports = {t: BuildReport.model_validate_json(b) for t, b in texts.items()}
        root = folders[0].parent
        write_summary(summarise(reports, {c.target: c.status == "restored" for c in cells}, {}), root)
        _write_html(reports, texts, root / REPORT_HTML, cache)
