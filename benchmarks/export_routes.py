"""How many real models get a faithful float artifact in the other format: ONNX -> TFLite and TFLite -> ONNX.

Each model of the zoo (tests/realmodels/zoo.py) and of the held-out set (tests/realmodels/heldout*.py) whose
prepared file is ONNX or TFLite goes through edgepipe's own export stage (``edgepipe.stages.export``), in its own
subprocess with a timeout, for a target that deploys the other format (ONNX -> ``ethos-u55``, TFLite ->
``mobile-npu``). Per model the JSON records whether a file came out, whether it computes the source's function
(the export stage's float check, :mod:`edgepipe.export.float_match`: the worst output cosine on calibration
samples), the route that made it, the error otherwise, and the stage's wall time (s).

    python benchmarks/export_routes.py prepare WORK                       # WORK/<name>/: model, data, edgepipe.toml
    nice -n 10 python benchmarks/export_routes.py run WORK --jobs 2      # -> benchmarks/results/export_routes.json
    python benchmarks/export_routes.py run WORK --label onnx2tf-2.6.9 --python /path/to/other/venv/bin/python
    python benchmarks/export_routes.py run WORK --label tflite-sources --source tflite   # one direction, one commit
    python benchmarks/export_routes.py render                             # -> docs/reference/export_routes.md

``--python`` runs the conversions with another environment's interpreter (e.g. one with another onnx2tf);
``--onnx2tf-args`` appends options to every onnx2tf command line. Wall times are of a shared 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.provenance import Provenance, commit, now  # noqa: E402
from edgepipe.export.float_match import ATOL, MIN_COSINE  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "reference" / "export_routes.md"
#: Targets that make the export stage convert: one that deploys TFLite (for ONNX sources), one that deploys ONNX.
TARGET_FOR = {".onnx": "ethos-u55", ".tflite": "mobile-npu"}
RECORD = "export_routes.json"


# ----------------------------------------------------------------------------------------------------- prepare


def _models() -> dict[str, tuple[str, Any]]:
    from tests.realmodels import heldout, zoo

    return {**{m.name: ("zoo", m) for m in zoo.ZOO}, **{m.name: ("heldout", m) for m in heldout.HELDOUT}}


def prepare(work: Path, only: list[str] | None) -> None:
    """Write ``work/<name>/`` for each model (small data sizes); a model that cannot be prepared is listed in
    ``work/prepare_failures.json``."""
    from tests.realmodels import heldout, zoo

    failures: dict[str, str] = {}
    for name, (suite, model) in _models().items():
        if only and name not in only:
            continue
        if (work / name / "edgepipe.toml").is_file():
            continue
        try:
            (zoo.prepare if suite == "zoo" else heldout.prepare)(model, work, zoo.SMALL)
            print(f"prepared {name}", flush=True)
        except Exception as exc:  # noqa: BLE001 - a model that cannot be prepared is reported, the others go on
            failures[name] = f"{type(exc).__name__}: {str(exc)[:300]}"
            print(f"could not prepare {name}: {failures[name]}", flush=True)
    path = work / "prepare_failures.json"
    known = json.loads(path.read_text()) if path.is_file() else {}
    path.write_text(json.dumps({**{k: v for k, v in known.items() if k not in _models() or k in failures},
                                **failures}, indent=1))


def prepared(work: Path) -> list[tuple[str, Path]]:
    """(name, config) of every prepared model whose file is ONNX or TFLite, in the order of the model lists."""
    import tomllib

    found = []
    for name in _models():
        config = work / name / "edgepipe.toml"
        if config.is_file() and Path(tomllib.loads(config.read_text())["model"]).suffix in TARGET_FOR:
            found.append((name, config))
    return found


# ------------------------------------------------------------------------------------------- one conversion

_COSINE = re.compile(r"cosine (-?[0-9.]+)")


def _outcome(produced: bool, message: str, skipped: str | None) -> str:
    """faithful | unfaithful (the float check refused it) | unrunnable (LiteRT/ONNX Runtime refused it) | failed |
    skipped (the export stage made no conversion: an already-quantized source, dynamic shapes); a source edgepipe
    refuses to load (a TFLite with a custom op LiteRT lacks) is "unloadable" (:func:`convert_one`)."""
    if produced:
        return "faithful"
    if not message and skipped:
        return "skipped"
    if "does not compute" in message or "differs from LiteRT" in message or "has another size" in message:
        return "unfaithful"
    if "cannot run" in message or "cannot load" in message or "takes inputs" in message:
        return "unrunnable"
    return "failed"


def convert_one(config_path: Path, onnx2tf_args: list[str]) -> dict[str, Any]:
    """Run edgepipe's export stage on the prepared model at ``config_path`` and describe what came out."""
    import tomllib

    from edgepipe.config import load_config
    from edgepipe.errors import ModelLoadError
    from edgepipe.export import onnx_to_tflite
    from edgepipe.export.float_match import float_agreement
    from edgepipe.stage_log import StageLog
    from edgepipe.stages.export import export_stage
    from edgepipe.stages.inputs import validate_inputs

    if onnx2tf_args:
        plain = onnx_to_tflite.command
        onnx_to_tflite.command = lambda *a, **k: [*plain(*a, **k), *onnx2tf_args]  # type: ignore[assignment]
    suffix = Path(tomllib.loads(config_path.read_text())["model"]).suffix
    wanted = "tflite" if suffix == ".onnx" else "onnx"
    with tempfile.TemporaryDirectory(prefix="export_routes_") as tmp:
        config = load_config(config_path, overrides={"targets": [TARGET_FOR[suffix]],
                                                      "output": str(Path(tmp) / "build")})
        stages = StageLog()
        try:
            inputs = validate_inputs(config, stages)
        except ModelLoadError as refused:  # edgepipe's own clear refusal (a custom op LiteRT lacks), not a crash
            return {"source": suffix.lstrip("."), "converted_to": wanted, "outcome": "unloadable", "route": None,
                    "source_route": None, "cosine": None, "error": str(refused), "seconds": 0.0, "stages": [],
                    "skipped": None}
        folder = Path(tmp) / "artifacts"
        folder.mkdir()
        start = time.perf_counter()
        artifacts, _ = export_stage(inputs, folder, Path(tmp), stages)
        seconds = time.perf_counter() - start
        made = next((a for a in artifacts if a.format == wanted and a.precision == "fp32"), None)
        details = [f"{r.status}: {r.detail}" for r in stages.records if r.name == "export"]
        message = "; ".join(f.message for f in stages.failures if f.stage == "export")
        cosine: float | None = None
        shipped_int8 = any(a.format == suffix.lstrip(".") and a.precision == "int8" for a in artifacts)
        reference = next((a.path for a in artifacts if shipped_int8 and a.format == suffix.lstrip(".")
                          and a.precision == "fp32"), inputs.model.path)  # a shipped QDQ file's float reference
        if made is not None and inputs.calibration is not None:
            cosine = float_agreement(reference, made.path, inputs.calibration).cosine
        elif _COSINE.search(message):
            cosine = float(_COSINE.search(message).group(1))  # type: ignore[union-attr]
        source = next((a for a in artifacts if a.format == suffix.lstrip(".") and a.route), None)
        skipped = next((r.detail for r in stages.records if r.status == "skipped"), None)
        return {"source": suffix.lstrip("."), "converted_to": wanted,
                "outcome": _outcome(made is not None, message, skipped),
                "route": made.route if made is not None else None, "source_route": source.route if source else None,
                "cosine": cosine, "error": message or None,
                "seconds": round(seconds, 1), "stages": details, "skipped": skipped}


# -------------------------------------------------------------------------------------------------- run


def _versions(python: str) -> dict[str, str]:
    code = ("import importlib.metadata as m, json, platform; print(json.dumps({p: m.version(p) for p in "
            "('onnx2tf', 'tensorflow', 'onnx', 'onnxruntime', 'tf2onnx', 'numpy', 'ai-edge-litert')}))")
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def record_path(label: str) -> Path:
    """The result file of run ``label`` (``main``: the pinned environment, the one the docs page leads with)."""
    return RESULTS / (RECORD if label == "main" else f"export_routes_{label}.json")


def _convert_in_subprocess(name: str, config: Path, args: argparse.Namespace) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    with tempfile.NamedTemporaryFile(suffix=".json") as record:
        command = [args.python, str(Path(__file__).resolve()), "one", str(config), record.name,
                   *(["--onnx2tf-args", args.onnx2tf_args] if args.onnx2tf_args else [])]
        start = time.perf_counter()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, env=env)
            text = Path(record.name).read_text()
            row = json.loads(text) if text else {"outcome": "crashed", "error": _tail(done.stderr)}
        except subprocess.TimeoutExpired:
            row = {"outcome": "timeout", "error": f"no result within {args.timeout:.0f} s"}
    row.setdefault("source", _source_format(config))
    return {"model": name, "suite": _models()[name][0], **row, "wall_s": round(time.perf_counter() - start, 1)}


def run(args: argparse.Namespace) -> Path:
    """Convert every prepared model (or ``--only``), each in its own subprocess, ``--jobs`` at a time; the file is
    rewritten as rows finish, so a stopped run goes on with ``--resume`` at the same commit."""
    out = record_path(args.label)
    old = json.loads(out.read_text()) if args.resume and out.is_file() else {}
    if old and old["provenance"]["commit"] != commit():
        raise SystemExit(f"{out.name} was measured at {old['provenance']['commit']}, HEAD is {commit()}: "
                         "a result file holds one commit's rows, so start it again without --resume")
    rows = {r["model"]: r for r in old.get("rows", [])}
    started = old.get("provenance", {}).get("started") or now()
    tools = _versions(args.python)
    todo = [(n, c) for n, c in prepared(args.work) if (not args.only or n in args.only) and n not in rows
            and (not args.source or _source_format(c) == args.source)]
    order = [n for n, _ in prepared(args.work)]

    def write() -> None:
        provenance = Provenance.here(started, tools=tools, besides=out)
        document = {"provenance": provenance.as_dict(), "runs": 1, "label": args.label,
                    "command": "python benchmarks/export_routes.py " + " ".join(sys.argv[1:]),
                    "timeout_s": args.timeout, "onnx2tf_args": args.onnx2tf_args,
                    "rows": [rows[n] | {"commit": provenance.commit} for n in order if n in rows]}
        out.write_text(json.dumps(document, indent=1) + "\n")

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(_convert_in_subprocess, name, config, args) for name, config in todo]
        for future in as_completed(futures):
            row = future.result()
            rows[row["model"]] = row
            write()
            print(f"{row['model']}: {row['outcome']} {row.get('route') or ''} cos={row.get('cosine')} "
                  f"{row['wall_s']} s {(row.get('error') or '')[:160]}", flush=True)
    write()
    return out


def _source_format(config: Path) -> str:
    import tomllib

    return Path(tomllib.loads(config.read_text())["model"]).suffix.lstrip(".")


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-3:])[-600:] or "no output"


# ------------------------------------------------------------------------------------------------ page


def _rows(data: dict[str, Any], source: str) -> list[dict[str, Any]]:
    return [r for r in data["rows"] if r.get("source", source) == source]


def share(rows: list[dict[str, Any]]) -> tuple[int, int, int]:
    """(faithful, converted, all): a converted artifact the float check refused is converted, not faithful."""
    faithful = sum(r["outcome"] == "faithful" for r in rows)
    return faithful, sum(r["outcome"] in ("faithful", "unfaithful") for r in rows), len(rows)


def _counts(rows: list[dict[str, Any]]) -> str:
    faithful, converted, total = share(rows)
    return (f"**{faithful}/{total} faithful ({100 * faithful / total:.1f} %)**, {converted}/{total} converted"
            if rows else "—")


def _route_of(row: dict[str, Any]) -> str:
    """The route that made a faithful row's artifact, with the source's own route (a dequantized source)."""
    return " after ".join(r for r in (row.get("route") or "?", row.get("source_route")) if r)


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return "—"
    cos = f" cos {row['cosine']:.4f}" if row.get("cosine") is not None else ""
    if row["outcome"] == "faithful" and row.get("cosine") is not None and row["cosine"] < MIN_COSINE:
        cos = f" (outputs all but zero on the samples: equal within {ATOL:g}, cos {row['cosine']:.4f})"
    how = f" via {_route_of(row)}" if row["outcome"] == "faithful" else ""
    why = f": {(row.get('error') or row.get('skipped') or '')[:140]}" if row["outcome"] != "faithful" else ""
    return f"{row['outcome']}{how}{cos}, {row.get('seconds', row['wall_s'])} s{why}".replace("|", "/")


def render(runs: dict[str, dict[str, Any]]) -> str:
    """The reference page of the runs (label -> result file): totals, routes, changed models, one row per model."""
    lines = ["# Conversion reach: ONNX -> TFLite and TFLite -> ONNX", "",
             "<!-- generated by benchmarks/export_routes.py render from benchmarks/results/export_routes*.json; "
             "do not edit -->", "",
             "Every model of the real-model zoo and of the held-out set whose file is ONNX or TFLite goes through "
             "edgepipe's export stage for a target that deploys the other format (ONNX sources for `ethos-u55`, "
             "TFLite sources for `mobile-npu`). *Faithful*: the artifact came out and passed the export stage's "
             "float check on calibration samples; *converted*: it came out; a skipped row is a source the stage "
             "does not convert (e.g. dynamic input shapes).", "",
             "| run | commit | onnx2tf | measured | CPU | ONNX -> TFLite | TFLite -> ONNX |", "|---" * 7 + "|"]
    for label, data in runs.items():
        p = data["provenance"]
        lines.append(f"| {label} | `{p['commit']}`{' (dirty)' if p['dirty'] else ''} | {p['tools']['onnx2tf']} "
                     f"| {p['started']} to {p['finished']} | {p['cpu']} ({p['cpus']} CPUs) "
                     f"| {_counts(_rows(data, 'onnx'))} | {_counts(_rows(data, 'tflite'))} |")
    lines += ["", "Faithful artifacts per route:", ""]
    for label, data in runs.items():
        routes = Counter(_route_of(r) for r in data["rows"] if r["outcome"] == "faithful")
        lines.append(f"- {label}: " + "; ".join(f"{route}: {count}" for route, count in routes.most_common()))
    by_name = {label: {r["model"]: r for r in data["rows"]} for label, data in runs.items()}
    names = list(dict.fromkeys(n for rows in by_name.values() for n in rows))
    if len(runs) > 1:
        first, *others = by_name.values()
        changed = [n for n in names if n in first and any(
            n in o and (o[n]["outcome"] == "faithful") != (first[n]["outcome"] == "faithful") for o in others)]
        lines += ["", f"Models whose outcome differs between the runs: {', '.join(changed) or 'none'}"]
    lines += ["", "| model | source | " + " | ".join(runs) + " |", "|---" * (2 + len(runs)) + "|"]
    for name in names:
        source = next((rows[name].get("source", "?") for rows in by_name.values() if name in rows), "?")
        lines.append(f"| `{name}` | {source} | " + " | ".join(_cell(rows.get(name)) for rows in by_name.values())
                     + " |")
    return "\n".join(lines) + "\n"


def committed_runs() -> dict[str, dict[str, Any]]:
    """The committed result files, ``main`` first."""
    paths = sorted(RESULTS.glob("export_routes*.json"), key=lambda p: (p.name != RECORD, p.name))
    return {("main" if p.name == RECORD else p.stem.removeprefix("export_routes_")): json.loads(p.read_text())
            for p in paths}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    prep = sub.add_parser("prepare")
    prep.add_argument("work", type=Path)
    prep.add_argument("--only", nargs="+")
    go = sub.add_parser("run")
    go.add_argument("work", type=Path)
    go.add_argument("--label", default="main")
    go.add_argument("--python", default=sys.executable)
    go.add_argument("--timeout", type=float, default=900.0)
    go.add_argument("--only", nargs="+")
    go.add_argument("--source", choices=["onnx", "tflite"], help="only the models whose file has this format")
    go.add_argument("--onnx2tf-args", default="")
    go.add_argument("--jobs", type=int, default=1, help="conversions at a time")
    go.add_argument("--resume", action="store_true", help="keep the rows already in the label's JSON")
    one = sub.add_parser("one")
    one.add_argument("config", type=Path)
    one.add_argument("record", type=Path)
    one.add_argument("--onnx2tf-args", default="")
    sub.add_parser("render", help=f"write {DOC.relative_to(ROOT)} from the committed result files")
    args = parser.parse_args(argv)
    if args.command == "prepare":
        prepare(args.work, args.only)
    elif args.command == "run":
        print(run(args))
    elif args.command == "one":
        args.record.write_text(json.dumps(convert_one(args.config, args.onnx2tf_args.split())))
    else:
        DOC.write_text(render(committed_runs()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
