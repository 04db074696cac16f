"""``edgepipe bench``: host latency statistics of fp32 and int8 side by side, load tests, target estimates."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from edgepipe.cli.options import CalibOpt

if TYPE_CHECKING:
    from edgepipe.latency.measure import BenchSettings
    from edgepipe.perf.report import Int8Form, PerformanceReport

_SUFFIX = {"onnxruntime": ".onnx", "litert": ".tflite"}


def _artifacts(models: list[Path], runtime: str | None, scratch: Path, calib: Path | None) -> list[Path]:
    """Model files to time: folders expand to their artifacts; a lone file brings its fp32/int8 sibling."""
    from edgepipe.errors import ModelLoadError

    found: list[Path] = []
    for model in models:
        if model.is_dir() and not (model / "saved_model.pb").is_file():
            found += sorted(p for p in model.iterdir() if p.suffix in (".onnx", ".tflite") and "_prep" not in p.stem)
        elif model.suffix in (".onnx", ".tflite"):
            if not model.is_file():
                raise ModelLoadError("model file not found", path=model, fix="Check the path")
            twin = model.with_name(model.stem.removesuffix("_int8") + model.suffix if "_int8" in model.stem
                                   else f"{model.stem}_int8{model.suffix}")
            found += [model] + ([twin] if twin.is_file() and len(models) == 1 else [])
        else:
            found += _export(model, scratch, calib)
    if runtime:
        found = [p for p in found if p.suffix == _SUFFIX[runtime]]
    if not found:
        raise ModelLoadError("nothing to benchmark", path=models[0],
                             fix="Give .onnx/.tflite files, a build folder, or a .keras/SavedModel model")
    return list(dict.fromkeys(found))


def _export(model: Path, scratch: Path, calib: Path | None) -> list[Path]:
    """Export and quantize a Keras/SavedModel model into ``scratch`` (the bundled model needs no data)."""
    from edgepipe.cli.options import data_overrides
    from edgepipe.config import load_config
    from edgepipe.pipeline import run_artifacts_only

    cfg = load_config(None, data_overrides(model, calib, None))
    cfg = cfg.model_copy(update={"data": cfg.data.model_copy(update={"evaluation": None})})
    return run_artifacts_only(cfg, scratch / "artifacts", quantize=cfg.data.calibration is not None)


def bench(
    models: list[Path] = typer.Argument(..., help=".onnx/.tflite files, a build output folder, or a .keras model."),
    runtime: str | None = typer.Option(None, "--runtime", help="Only this runtime: onnxruntime | litert."),
    target: str | None = typer.Option(None, "--target", help="Also estimate the model on this target profile."),
    power_mode: str | None = typer.Option(None, "--power-mode", help="Power mode of --target (default: its own)."),
    concurrency: int = typer.Option(1, "--concurrency", min=1, help="Also run N requests in flight per artifact."),
    samples: int = typer.Option(300, "--samples", min=1, help="Timed runs per artifact (at most)."),
    budget: float = typer.Option(10.0, "--budget", min=0.1, help="Seconds of timed runs in all (at most)."),
    warmup: int = typer.Option(10, "--warmup", min=0, help="Untimed runs per artifact first."),
    threads: int | None = typer.Option(None, "--threads", min=1, help="Runtime threads (default: runtime's own)."),
    int8_forms: bool = typer.Option(False, "--int8-forms", help="Also make the ONNX QOperator form (and "
                                    "model_int8.onnx with uint8 activations) and find the fastest int8 form (needs "
                                    "the float .onnx)."),
    calib: Path | None = CalibOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Time MODEL(s) on this host: statistics per artifact, int8 ÷ fp32 from the same run, optional load test."""
    from edgepipe.errors import ConfigError
    from edgepipe.latency.measure import BenchSettings, concurrent, single_stream
    from edgepipe.latency.system import host_info, peak_rss_bytes
    from edgepipe.report.bench import BenchReport, ratios, render_text

    if runtime is not None and runtime not in _SUFFIX:
        raise ConfigError(f"unknown runtime '{runtime}'", fix="Use --runtime onnxruntime or --runtime litert")
    if power_mode and not target:
        raise ConfigError("--power-mode needs --target", fix="Give --target NAME as well")
    if target:  # a bad target or power mode fails before any timing
        from edgepipe.perf.predict import require_performance
        from edgepipe.targets import load_profile

        spec = require_performance(load_profile(target))
        if power_mode and power_mode not in [m.name for m in spec.power_modes]:
            raise ConfigError(f"target '{target}' has no power mode '{power_mode}'",
                              fix=f"Use one of: {', '.join(m.name for m in spec.power_modes)}")
    settings = BenchSettings(warmup=warmup, max_samples=samples, budget_s=budget, threads=threads)
    host = host_info()
    with tempfile.TemporaryDirectory(prefix="edgepipe-bench-") as tmp:
        paths = _artifacts(models, runtime, Path(tmp), calib)
        timings = single_stream(paths, settings)
        loads = [concurrent(p, concurrency, min(budget, 5.0), threads=threads)
                 for p in paths] if concurrency > 1 else []
        forms, fastest = _int8_forms(paths, settings, Path(tmp), calib) if int8_forms else ([], None)
        estimate = _estimate(target, power_mode, paths) if target else None
    report = BenchReport(host=host, settings={"warmup": warmup, "max_samples": samples, "budget_s": budget,
                                              "threads": threads, "concurrency": concurrency},
                         artifacts=timings, ratios=ratios(timings),
                         headline={t.artifact: t.stats.p90_ms for t in timings}, peak_rss_bytes=peak_rss_bytes(),
                         concurrent=loads, int8_forms=forms, fastest_int8=fastest, estimate=estimate)
    typer.echo(report.model_dump_json(indent=2) if as_json else render_text(report))


def _int8_forms(paths: list[Path], settings: BenchSettings, scratch: Path,
                calib: Path | None) -> tuple[list[Int8Form], str | None]:
    import numpy as np

    from edgepipe.data.dataset import Dataset, load_dataset
    from edgepipe.errors import ConfigError
    from edgepipe.quantize.host.fastest import QOPERATOR_NAME, compare_int8_forms
    from edgepipe.quantize.host.forms import QDQ_U8_NAME, make_qoperator
    from edgepipe.quantize.host.qdq_uint8 import uint8_activations
    from edgepipe.runtimes import open_runner

    float_onnx = next((p for p in paths if p.suffix == ".onnx" and "int8" not in p.stem), None)
    if float_onnx is None:
        raise ConfigError("--int8-forms needs the float .onnx", fix="Bench a build folder or give model.onnx too")
    with open_runner(float_onnx) as runner:
        signature = runner.signature
    if calib is not None:
        data = load_dataset(calib, signature, role="calibration")
    else:  # latency does not depend on the calibration; accuracy would
        rng = np.random.default_rng(0)
        data = Dataset(path=Path("random inputs"), labels=None, sha256="", inputs=tuple(
            rng.random((16, *(d or 1 for d in s.shape[1:]))).astype(np.float32) for s in signature.inputs))
    qop = make_qoperator(float_onnx, scratch / QOPERATOR_NAME, data, scratch)
    forms = [*paths, qop]
    qdq = next((p for p in paths if p.name == "model_int8.onnx"), None)
    shifted = uint8_activations(qdq, scratch / QDQ_U8_NAME) if qdq is not None and all(
        p.name != QDQ_U8_NAME for p in paths) else None
    return compare_int8_forms({p.name: p for p in forms + ([shifted] if shifted else [])}, settings)


def _estimate(target: str, power_mode: str | None, paths: list[Path]) -> PerformanceReport:
    from edgepipe.errors import ModelLoadError
    from edgepipe.perf.predict import pick_artifact, predict
    from edgepipe.targets import load_profile

    profile = load_profile(target)
    path = pick_artifact(profile, paths)
    if path is None:
        raise ModelLoadError(f"no artifact fits target '{target}'", path=paths[0], fix="Bench the build folder")
    return predict(path, profile, power_mode)


def register(app: typer.Typer) -> None:
    app.command("bench")(bench)
