"""The ``report.md`` section of a :class:`PerformanceReport`: latency per power mode, energy per inference."""

from __future__ import annotations

from edgepipe.perf.report import PerformanceReport


def render_performance_markdown(report: PerformanceReport) -> list[str]:
    """Markdown lines: modes table, Vela comparison, int8 forms, notes."""
    source = {"vela": "Vela's estimate", "cost-model": "edgepipe cost model"}[report.estimator]
    lines = [f"## Performance on {report.target} ({source}: {report.kind}; error: {report.error})", "",
             f"Artifact: `{report.artifact}`", "",
             "| power mode | clock (MHz) | latency (ms) | latency is | energy / inference (mJ) | inferences / J | "
             "sustained (inf/s) |", "|---|---|---|---|---|---|---|"]
    for mode in report.modes:
        marker = " (default)" if mode.mode == report.default_mode else ""
        lines.append(f"| {mode.mode}{marker} | {mode.clock_mhz:g} | {mode.latency_ms:.4g} | {mode.kind} | "
                     f"{mode.energy_mj:.4g} (model estimate) | {mode.inferences_per_j:,.0f} | "
                     f"{mode.sustained_ips:,.0f} |")
    if report.delegate is not None:
        d = report.delegate
        lines += ["", f"Emulated delegate: accelerator {d.accelerator_ms:.4g} ms, CPU fallback {d.cpu_ms:.4g} ms "
                      f"({d.cpu_ops} ops), transfers {d.transfer_ms:.4g} ms ({len(d.transfers)})."]
    if report.vela is not None:
        v = report.vela
        lines += ["", f"Vela ({v.kind}; {v.accelerator}, {v.system_config}, {v.clock_mhz:g} MHz): "
                      f"{v.cycles:,} cycles = {v.vela_ms:.4g} ms; edgepipe cost model {v.edgepipe_ms:.4g} ms; "
                      f"ratio edgepipe ÷ Vela **{v.ratio:.2f}**."]
    if report.int8_forms:
        lines += ["", "| int8 form | runtime | p50 (ms) | p90 (ms) | ÷ fp32 | output cosine (host / exact int8) "
                      "| figures are | why |", "|---|---|---|---|---|---|---|---|"]
        for form in report.int8_forms:
            ratio = "–" if form.ratio_to_fp32 is None else f"{form.ratio_to_fp32:.2f}×"
            cosine = " / ".join("–" if c is None else f"{c:.4f}" for c in (form.output_cosine, form.reference_cosine))
            lines.append(f"| {form.artifact} | {form.runtime} | {form.p50_ms:.4g} | {form.p90_ms:.4g} | {ratio} | "
                         f"{cosine} | {form.kind} | {'; '.join(form.slow_ops[:3])} |")
    if report.deployment_candidates:
        lines += ["", "| deployable form | precision | runtime | p50 (ms) | ÷ fastest fp32 | faithful on this host "
                      "| evidence |", "|---|---|---|---|---|---|---|"]
        for c in report.deployment_candidates:
            ratio = "–" if c.ratio_to_fastest_fp32 is None else f"{c.ratio_to_fastest_fp32:.2f}×"
            lines.append(f"| {c.artifact} | {c.precision} | {c.runtime} | {c.p50_ms:.4g} | {ratio} | "
                         f"{'yes' if c.faithful else 'no'} | {c.evidence} |")
        chosen = f"`{report.deployment_artifact}`" if report.deployment_artifact else "none (no form is faithful)"
        lines += ["", f"Deployment artifact (fastest faithful form on this host): {chosen}"]
    if report.host_cpu is not None:
        lines += ["", f"Host CPU: {report.host_cpu.summary()}."]
    lines += [f"- {note}" for note in report.notes]
    return [*lines, ""]
