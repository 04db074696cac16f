"""Host benchmark of the reference model: fp32 and int8 side by side, all int8 forms, a load test.

    python benchmarks/host_bench.py [--json OUT] [--write]

Builds the bundled reference model's artifacts (``edgepipe quantize``) into a temporary folder, then
runs ``edgepipe bench`` on them with ``--int8-forms --concurrency 2``. Ratios from one interleaved run
are what holds on a shared machine. ``--write`` puts the tables into benchmarks/results/benchmarks.md between the
script's markers: every fp32 and int8 time and every ratio there comes from this one session.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from doc_sections import BENCHMARKS_MD, provenance, write_section  # noqa: E402

from edgepipe.report.bench import BenchReport, render_text  # noqa: E402


def section(report: BenchReport) -> str:
    """Markdown of one bench session: per artifact min / median / max with the median's CI, the ratios."""
    samples = sorted({t.stats.samples for t in report.artifacts})
    lines = [provenance("host_bench.py", f"{min(samples)}–{max(samples)} timed runs per artifact, interleaved, "
                        f"{report.settings.get('threads') or 'default'} thread(s)"), "",
             "| artifact | runtime | runs | min / p50 / max (ms) | p50 95% CI (ms) | p90 (ms) |",
             "|---|---|---|---|---|---|"]
    for t in report.artifacts:
        s = t.stats
        ci = ("–" if s.median_ci_low_ms is None or s.median_ci_high_ms is None
              else f"[{s.median_ci_low_ms:.4g}, {s.median_ci_high_ms:.4g}]")
        lines.append(f"| {t.artifact} | {t.runtime} | {s.samples} | {s.min_ms:.4g} / {s.p50_ms:.4g} / "
                     f"{s.max_ms:.4g} | {ci} | {s.p90_ms:.4g} |")
    lines += ["", *(f"- int8 ÷ fp32, {r.runtime}: p50 **{r.p50_ratio:.2f}×**, p90 {r.p90_ratio:.2f}×"
                    for r in report.ratios)]
    if report.int8_forms:
        lines += ["", "| int8 form | runtime | p50 (ms) | ÷ its fp32 (same session) |", "|---|---|---|---|"]
        lines += [f"| {f.artifact} | {f.runtime} | {f.p50_ms:.4g} | "
                  f"{'–' if f.ratio_to_fp32 is None else f'{f.ratio_to_fp32:.2f}×'} |" for f in report.int8_forms]
        lines += ["", f"Fastest int8 form in this session: `{report.fastest_int8}`."]
    if report.concurrent:
        lines += ["", "| artifact | concurrency | throughput (inf/s) | p50 / p99 (ms) |", "|---|---|---|---|"]
        lines += [f"| {c.artifact} | {c.concurrency} | {c.throughput_ips:,.0f} | {c.stats.p50_ms:.4g} / "
                  f"{c.stats.p99_ms:.4g} |" for c in report.concurrent]
    lines += ["", f"Peak RSS of the bench process: {report.peak_rss_bytes / 2**20:.0f} MiB."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="Also write the JSON result here.")
    parser.add_argument("--budget", type=float, default=10.0, help="Seconds of single-stream timing in all.")
    parser.add_argument("--write", action="store_true", help="Write the result into benchmarks/results/benchmarks.md.")
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("edgepipe"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "artifacts"
        subprocess.run([exe, "quantize", "--quiet", "-o", str(out)], check=True, capture_output=True)
        command = [exe, "bench", str(out), "--int8-forms", "--concurrency", "2", "--budget", str(args.budget),
                   "--samples", "1000", "--target", "host-cpu", "--json"]
        result = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    report = BenchReport.model_validate_json(result)
    print(render_text(report))
    if args.write:
        write_section(BENCHMARKS_MD, "host_bench.py", section(report))
    if args.json:
        args.json.write_text(result, encoding="utf-8")


if __name__ == "__main__":
    main()
