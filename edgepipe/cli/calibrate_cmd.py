"""``edgepipe calibrate host-cpu``: measure this machine and write the local profile override predictions use."""

from __future__ import annotations

import json
from dataclasses import asdict

import typer

from edgepipe.errors import ConfigError
from edgepipe.perf.calibration import measure_host, write_override
from edgepipe.targets import load_profile


def calibrate(
    target: str = typer.Argument("host-cpu", help="Target to calibrate; only host-cpu can be measured here."),
    threads: int | None = typer.Option(None, "--threads", help="ONNX Runtime intra-op threads (default: all)."),
    as_json: bool = typer.Option(False, "--json", help="Print the measurement as JSON."),
) -> None:
    """Run a short GEMM/convolution/bandwidth microbenchmark and write the override file (path printed)."""
    profile = load_profile(target)
    if profile.device_class != "cpu":
        raise ConfigError(f"'{target}' is not this machine", fix="Only host-cpu can be calibrated here")
    measured = measure_host(threads=threads)
    path = write_override(target, measured)
    if as_json:
        typer.echo(json.dumps({"target": target, "override": str(path), **asdict(measured)}, indent=2))
        return
    typer.echo(f"{target}: conv {measured.conv_gmacs:.1f} GMAC/s, matmul {measured.gemm_gmacs:.1f} GMAC/s, "
               f"depthwise {measured.depthwise_gmacs:.1f} GMAC/s, bandwidth {measured.bandwidth_gbps:.1f} GB/s, "
               f"per-op {measured.per_op_overhead_us:.1f} µs, per-run {measured.per_run_overhead_us:.1f} µs")
    typer.echo(f"  override: {path}")
    typer.echo("  predictions stay 'unvalidated' until an error is measured on held-out models on this host "
               "(benchmarks/predict_vs_measure.py --write-error)")


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate)
