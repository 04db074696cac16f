"""edgepipe beside each vendor's own documented path, on the same models: compile success and int8 fidelity.

For each model, one ``edgepipe build`` for every target with a vendor toolchain here runs in a subprocess (each
target's report.json gives its verdict, vendor compile and accuracy evidence), and so does each vendor's own path
(``one``), from the same source model and the same calibration and evaluation data:

- ethos-u55: onnx2tf's own full-integer quantization (``onnx2tf -i M.onnx -o OUT -oiqt -n -cind NAME CALIB.npy 0 1``,
  calibration in TF's NHWC order) of an ONNX source, or TensorFlow's converter (SavedModel, representative dataset,
  int8 in and out) of a Keras or SavedModel source; then ``vela --accelerator-config ethos-u55-128``.
- rk3588: rknn-toolkit2 from ONNX with its own quantizer (``config``, ``load_onnx``, ``build(do_quantization=True,
  dataset=...)``), run on its simulator (``init_runtime()``, ``inference``), in the toolkit's own environment
  (benchmarks/vendor_paths_rknn.py).
- mobile-npu: ONNX Runtime's QNN flow (``qnn_preprocess_model``, ``get_qnn_qdq_config`` with its 8-bit default
  activation and weight types, ``quantize``), compiled on the QNN HTP emulator.

Every vendor path starts from the source model with static input shapes (the config's ``input_shapes``, batch 1),
as each of them requires; a Keras source becomes ONNX by Keras's own ``export(format="onnx")``, a SavedModel by
tf2onnx; a TFLite or PyTorch source has no vendor path here ("n/a"). Both sides are judged by edgepipe's own
gate (:func:`edgepipe.metrics.compare.compare`, the build's thresholds: top-1 drop with labels, label-free cosine,
SQNR whole and per part and task checks without) on the evaluation samples against the float ONNX, and by the
profile's placement requirements (accelerator MAC share, partitions, CPU ops) on the vendor compiler's own
placement. A vendor path that fails is a row outcome with its message.

    nice -n 10 python benchmarks/vendor_paths.py run --work /tmp/vendor-paths
    python benchmarks/vendor_paths.py run --models digits_cnn --targets mobile-npu --out /tmp/vp.json
    python benchmarks/vendor_paths.py render    # docs/reference/vendor_paths.md from the committed JSON
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.provenance import Provenance, now  # noqa: E402
from benchmarks.vendor_paths_flows import (  # noqa: E402
    Source,
    VendorPathFailed,
    channels_last,
    ethos_u55,
    mobile_npu,
    rk3588,
    step_of,
)
from benchmarks.vendor_paths_page import render  # noqa: E402

RESULT = ROOT / "benchmarks" / "results" / "vendor_paths.json"
DOC = ROOT / "docs" / "reference" / "vendor_paths.md"
TARGETS = ("ethos-u55", "rk3588", "mobile-npu")
BUNDLED = "digits_cnn"
MODELS = (BUNDLED, "ppocr_v4_cls", "ppocr_v2_cls", "oww_embedding", "akiki_vad", "ddddocr_det")
VENDOR_PATHS = {
    "ethos-u55": "onnx2tf -oiqt (ONNX) or TF converter (Keras, SavedModel), full int8; Vela ethos-u55-128",
    "rk3588": "rknn-toolkit2 load_onnx, build with its quantizer on the calibration data; simulator inference",
    "mobile-npu": "ORT qnn_preprocess_model, get_qnn_qdq_config, quantize; QNN HTP emulator",
}



# ---------------------------------------------------------------------------------- judged as edgepipe judges


def placement(graph: Any, result: Any, profile: Any) -> dict[str, Any]:
    """The vendor compiler's own placement against the profile's requirements (what edgepipe's compatibility
    evidence asks of its own placement): accelerator MAC share, partitions, CPU ops."""
    from collections import Counter

    from edgepipe.support.placement import partitions
    from edgepipe.support.report import NodeVerdict

    if result.status != "compiled":
        return {"compiled": False, "accepted": False, "detail": f"{result.status}: {result.detail}"[:400]}
    nodes = [n for n in graph.nodes if n.op != "Constant"]  # folded into initializers (the profiles ignore them)
    placed = [NodeVerdict(index=n.index, name=n.name, op=n.op, placement=result.placement[n.name], macs=n.macs)
              for n in nodes if n.name in result.placement]
    macs = sum(v.macs for v in placed)
    share = sum(v.macs for v in placed if v.placement == "accelerator") / macs if macs else 1.0
    cpu = Counter(v.op for v in placed if v.placement == "cpu")
    cpu.update({"(unmatched)": sum(1 for p in result.unmatched.values() if p == "cpu")})
    cpu_ops = {op: n for op, n in sorted(cpu.items()) if n}
    parts = sum(1 for run in partitions(placed) if run.device == "accelerator")
    required, broken = profile.required(), []
    if required.min_accelerator_mac_share is not None and share < required.min_accelerator_mac_share:
        broken.append(f"{100 * share:.1f}% of MACs on the accelerator < {100 * required.min_accelerator_mac_share:g}%")
    if required.max_partitions is not None and parts > required.max_partitions:
        broken.append(f"{parts} accelerator partitions > {required.max_partitions}")
    if required.max_cpu_ops is not None and sum(cpu_ops.values()) > required.max_cpu_ops:
        broken.append(f"{sum(cpu_ops.values())} CPU ops > {required.max_cpu_ops}")
    return {"compiled": True, "accepted": not broken, "tool": result.tool, "nodes": len(nodes),
            "npu_ops": sum(1 for v in placed if v.placement == "accelerator"), "cpu_ops": cpu_ops,
            "unplaced": len(nodes) - len(placed), "mac_share": round(share, 4), "partitions": parts,
            "detail": "; ".join(broken), "estimate": dict(result.estimate)}


def _fitted_inputs(data: Any, model: Path) -> Any:
    """``data`` with each batch-first input moved channels-last where the TFLite ``model`` takes it so (onnx2tf)."""
    from edgepipe.runtimes.litert_runner import read_signature

    specs = read_signature(model.read_bytes()).inputs
    inputs = []
    for array, spec, whole in zip(data.inputs, specs, data.whole or (False,) * len(specs)):
        moved = channels_last(array)
        takes = tuple(d or 1 for d in spec.shape[1:])
        inputs.append(moved if not whole and takes == moved.shape[1:] != array.shape[1:] else array)
    return dataclasses.replace(data, inputs=tuple(inputs))


def _reference_layout(reference: Any, got: Any) -> Any:
    """``got``'s outputs moved back channels-first where only that makes them the shape of a reference output."""
    import numpy as np

    from edgepipe.metrics.compare import ModelOutputs

    shapes = {a.shape for a in reference.arrays}
    arrays = [np.moveaxis(a, -1, 1) if a.ndim >= 3 and a.shape not in shapes and np.moveaxis(a, -1, 1).shape in shapes
              else a for a in got.arrays]
    return ModelOutputs(got.names, arrays)


def fidelity(reference: Any, got: Any, source: Source) -> dict[str, Any]:
    """The int8 outputs against the float ONNX's by the build's accuracy gate: the top-1 drop on labelled data,
    else the label-free thresholds (cosine, SQNR whole and per part) and task checks."""
    from edgepipe.artifacts import Artifact
    from edgepipe.metrics.accuracy import top1_accuracy
    from edgepipe.metrics.compare import compare
    from edgepipe.metrics.task_plan import plan_tasks
    from edgepipe.stages.evaluate import thresholds_of

    accuracy, got = source.config.accuracy, _reference_layout(reference, got)
    plans = plan_tasks(reference.names, reference.arrays, accuracy.task)
    info = compare(Artifact(Path("vendor_int8"), "onnx", "int8"), Artifact(Path("float.onnx"), "onnx", "fp32"), got,
                   reference, thresholds_of(accuracy), plans)
    figures = {"samples": len(reference.arrays[0]), "label_free_failures": info.failures[:3],
               "min_cosine": min((o.cosine for o in info.outputs), default=None),
               "min_sqnr_db": min((o.sqnr_db for o in info.outputs), default=None)}
    labels = source.data.labels
    if labels is None:
        return {**figures, "metric": "label_free", "met": not info.failures, "failures": info.failures[:3]}
    first = reference.paired(got).get(reference.names[0])
    if first is None:
        return {**figures, "metric": "top1", "met": False, "failures": [f"no output pairs with {reference.names[0]}"]}
    float_top1, int8_top1 = top1_accuracy(reference.arrays[0], labels), top1_accuracy(first, labels)
    drop, limit = round(100 * (float_top1 - int8_top1), 4), accuracy.max_drop_points
    met = drop <= limit + 1e-9
    return {**figures, "metric": "top1", "float_top1": float_top1, "int8_top1": int8_top1, "drop_points": drop,
            "max_drop_points": limit, "met": met, "failures": [] if met else [f"top-1 drop {drop:.2f} > {limit:g}"]}


def vendor_path(config: Path, target: str, work: Path) -> dict[str, Any]:
    """One vendor path on one model: what it made, whether its compiler placed it as the profile requires, and its
    fidelity; a step that failed is the outcome, with its message."""
    from edgepipe.graph.onnx_reader import read_onnx
    from edgepipe.graph.tflite_reader import read_tflite
    from edgepipe.metrics.compare import run_outputs
    from edgepipe.targets.registry import load_profile
    from edgepipe.vendors.registry import toolchain_for

    profile, start = load_profile(target), time.perf_counter()
    work.mkdir(parents=True, exist_ok=True)
    source = Source.load(config, target, work)
    row: dict[str, Any] = {"path": VENDOR_PATHS[target], "source_format": source.format}
    try:
        if target == "rk3588":
            result, got = rk3588(source)
            graph = read_onnx(source.onnx())
        else:
            artifact = ethos_u55(source) if target == "ethos-u55" else mobile_npu(source)
            graph = read_tflite(artifact) if artifact.suffix == ".tflite" else read_onnx(artifact)
            tool, options = toolchain_for(profile)  # type: ignore[misc]
            result = tool.compile(artifact, graph, options, work / "compile")
            data = _fitted_inputs(source.data, artifact) if artifact.suffix == ".tflite" else source.data
            with step_of("running the int8 model"):
                got = run_outputs(artifact, data, source.limit())
        reference = run_outputs(source.onnx(), source.data, source.limit())
    except VendorPathFailed as exc:
        status = "n/a" if exc.step == "n/a" else "failed"
        return {**row, "status": status, "step": exc.step, "detail": str(exc)[:500], "passes": False,
                "seconds": round(time.perf_counter() - start, 1)}
    row["placement"] = placement(graph, result, profile)
    row["fidelity"] = fidelity(reference, got, source) if not isinstance(got, (str, type(None))) else {
        "met": False, "failures": [got or "no outputs: the model did not compile"]}
    row["passes"] = bool(row["placement"]["accepted"] and row["fidelity"]["met"])
    return {**row, "status": "ran", "seconds": round(time.perf_counter() - start, 1)}


# ------------------------------------------------------------------------------------------- the edgepipe side


def edgepipe_side(report: Any) -> dict[str, Any]:
    """What one target's report.json says: the verdict, the vendor compile, compatibility and the accuracy."""
    from edgepipe.targets.registry import load_profile

    evidence = {e.requirement: e for e in report.evidence}
    formats = load_profile(report.target).deploy_formats
    int8 = {a.path for a in report.artifacts if a.precision != "fp32" and a.format in formats}
    outputs = [o for c in (report.accuracy.label_free.comparisons if report.accuracy and report.accuracy.label_free
                           else []) if c.artifact in int8 for o in c.outputs]
    drops = report.accuracy.drop_points if report.accuracy else {}
    return {"verdict": report.verdict, "verdict_reason": report.verdict_reason[:400],
            **{key: {"outcome": evidence[name].outcome, "detail": evidence[name].detail[:300]} if name in evidence
               else None for key, name in (("vendor_compile", "vendor compile"), ("compatibility", "compatibility"),
                                           ("accuracy", "accuracy"))},
            "drop_points": {f: d for f, d in drops.items() if f in formats},
            "min_cosine": min((o.cosine for o in outputs), default=None),
            "min_sqnr_db": min((o.sqnr_db for o in outputs), default=None), "passes": report.verdict == "pass"}


def edgepipe_build(config: Path, targets: list[str], out: Path, timeout: float) -> dict[str, dict[str, Any]]:
    """``edgepipe build`` of ``config`` for ``targets`` in a subprocess: per target, its report's side."""
    from edgepipe.report.schema import BuildReport

    exe = Path(sys.executable).with_name("edgepipe")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    start = time.perf_counter()
    command = [str(exe), "build", "-c", str(config), *[w for t in targets for w in ("-t", t)], "-o", str(out),
               "--no-cache", "-q"]
    shutil.rmtree(out, ignore_errors=True)  # an earlier run's reports must not stand for this build
    try:
        code: int | None = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env,
                                          check=False).returncode
    except subprocess.TimeoutExpired:
        code = None
    seconds = round(time.perf_counter() - start, 1)
    sides = {}
    for target in targets:
        reports = sorted(out.glob(f"*/{target}/report.json"))
        side = edgepipe_side(BuildReport.model_validate_json(reports[0].read_text())) if reports else {
            "verdict": None, "verdict_reason": f"no report (exit {code})", "passes": False}
        sides[target] = {**side, "exit": code, "seconds": seconds}
    return sides


# ------------------------------------------------------------------------------------------------------- run


def prepare(name: str, work: Path, small: bool) -> Path:
    """The config of model ``name``: the bundled digits model with its splits, or a zoo model prepared afresh."""
    if name == BUNDLED:
        folder = work / name
        folder.mkdir(parents=True, exist_ok=True)
        data = ROOT / "calib" / "digits"
        (folder / "edgepipe.toml").write_text(
            f'model = "{ROOT / "models" / BUNDLED / "digits_cnn.keras"}"\n[data]\n'
            + "".join(f'{split} = "{data / f"{split}.npz"}"\n' for split in ("calibration", "evaluation", "selection",
                                                                              "train")), encoding="utf-8")
        return folder / "edgepipe.toml"
    from tests.realmodels import zoo

    return zoo.prepare(zoo.BY_NAME[name], work, zoo.SMALL if small else zoo.DataSize())


def _vendor_in_subprocess(config: Path, target: str, work: Path, timeout: float) -> dict[str, Any]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    shutil.rmtree(work, ignore_errors=True)  # an earlier run's record must not stand for this one
    work.mkdir(parents=True)
    record = work / "vendor.json"
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "one", str(config), target, str(work),
                               str(record)], capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"path": VENDOR_PATHS[target], "status": "timeout", "detail": f"no result within {timeout:.0f} s",
                "passes": False, "seconds": round(time.perf_counter() - start, 1)}
    if record.is_file():
        return dict(json.loads(record.read_text()))
    tail = " | ".join([line for line in done.stderr.splitlines() if line.strip()][-3:])[-500:]
    return {"path": VENDOR_PATHS[target], "status": "crashed", "detail": f"exit {done.returncode}: {tail}",
            "passes": False, "seconds": round(time.perf_counter() - start, 1)}


def winner(vendor: bool, edgepipe: bool) -> str:
    return {(True, True): "both", (False, True): "edgepipe", (True, False): "vendor", (False, False): "neither"}[
        (vendor, edgepipe)]


def run_model(name: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The rows of one model, one per target; a model that cannot be prepared is a row per target saying so."""
    try:
        config = prepare(name, args.work / "models", args.small)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError) as exc:  # a wheel or its data missing
        missing = {"status": "not prepared", "detail": f"{type(exc).__name__}: {str(exc)[:300]}", "passes": False}
        return [{"model": name, "target": t, "vendor": missing, "edgepipe": {"verdict": None, "passes": False},
                 "winner": "neither"} for t in args.targets]
    sides = edgepipe_build(config, args.targets, args.work / "edgepipe" / name, args.timeout)
    rows = []
    for target in args.targets:
        vendor = _vendor_in_subprocess(config, target, args.work / "vendor" / name / target, args.timeout)
        rows.append({"model": name, "target": target, "vendor": vendor, "edgepipe": sides[target],
                     "winner": winner(vendor["passes"], sides[target]["passes"])})
        print(f"{name} {target}: vendor {vendor['status']} passes={vendor['passes']} ({vendor.get('seconds')} s), "
              f"edgepipe {sides[target]['verdict']}", file=sys.stderr, flush=True)
    return rows


def _versions() -> dict[str, str]:
    from importlib import metadata

    from edgepipe.vendors.rknn.toolkit import Rknn

    found = {}
    for package in ("onnx2tf", "tensorflow", "keras", "ethos-u-vela", "onnxruntime", "onnxruntime-qnn", "tf2onnx"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return {**found, **({"rknn-toolkit2": version} if (version := Rknn().version()) else {})}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every model through edgepipe and the vendor paths; the result file is rewritten after each model."""
    started, rows, tools = now(), [], _versions()
    besides = args.out if args.out.resolve().is_relative_to(ROOT) else None
    for name in args.models:
        rows += run_model(name, args)
        provenance = Provenance.here(started, tools=tools, besides=besides)
        document = {"provenance": provenance.as_dict(), "runs": 1,
                    "command": "python benchmarks/vendor_paths.py " + " ".join(sys.argv[1:]), "targets": args.targets,
                    "small": args.small, "vendor_paths": {t: VENDOR_PATHS[t] for t in args.targets},
                    "rows": [row | {"commit": provenance.commit} for row in rows]}
        args.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return document


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="build and take every model through each vendor path")
    go.add_argument("--models", nargs="+", default=list(MODELS))
    go.add_argument("--targets", nargs="+", default=list(TARGETS), choices=TARGETS)
    go.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "vendor-paths")
    go.add_argument("--small", action="store_true", help="zoo models with 8 samples and plain PTQ (a quick check)")
    go.add_argument("--timeout", type=float, default=1800.0, help="seconds per build and per vendor path")
    go.add_argument("--out", type=Path, default=RESULT)
    one = sub.add_parser("one", help="one vendor path on one prepared model (run by `run` in a subprocess)")
    one.add_argument("config", type=Path)
    one.add_argument("target", choices=TARGETS)
    one.add_argument("work", type=Path)
    one.add_argument("record", type=Path)
    sub.add_parser("render", help=f"write {DOC.relative_to(ROOT)} from {RESULT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    if args.command == "one":
        args.record.write_text(json.dumps(vendor_path(args.config, args.target, args.work), indent=1))
    elif args.command == "run":
        document = run(args)
        if args.out == RESULT:
            DOC.write_text(render(document), encoding="utf-8")
    elif not RESULT.is_file():
        raise SystemExit(f"no {RESULT.relative_to(ROOT)} to render: run `python benchmarks/vendor_paths.py run` first")
    else:
        DOC.write_text(render(json.loads(RESULT.read_text(encoding="utf-8"))), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
