"""Time the ladder's per-layer analysis on real models, and record what it decides.

The analysis is what mixed precision ranks layers by: per-layer sensitivity (every weight layer's
accumulated and isolated SQNR, :mod:`edgepipe.quantize.sensitivity`) and the damage of every int8
node alone (:mod:`edgepipe.quantize.node_damage`). For each model of a prepared zoo folder
(``python -m tests.realmodels.zoo prepare DIR --only NAME ...``) the float ONNX is exported as a
build does, the ladder's context is made from the model's ``edgepipe.toml``, and, at plain PTQ:

- the wall and CPU seconds of the sensitivity and of the node-damage ranking (each once, on this machine), and
  of step (d), mixed precision, run on that sensitivity (its search, and the node-damage ranking when it needs
  one: measured again there, as a build does);
- what they decide: the five most sensitive layers, the nodes the ranking says hurt (in order), and the
  outcome of step (d) (held or not, its setting, the layers it keeps higher).

Run it on two versions of edgepipe (``PYTHONPATH`` at each checkout) to compare a change; ``--label`` names the
run and ``--out`` merges it into a JSON file with the CPU it ran on (a comparison of two commits, not a figure of
the results page)::

    PYTHONPATH=$PWD python benchmarks/ladder_analysis.py ZOO/ppocr_v4_cls ZOO/oww_embedding ZOO/magika \\
        models/digits_nobn --label after --out /tmp/ladder_analysis.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _context(config_path: Path, scratch: Path) -> Any:
    """The ladder's context for the model of ``config_path``, exported and prepared as a build does it."""
    from edgepipe.config import load_config
    from edgepipe.quantize.ladder import LadderContext
    from edgepipe.quantize.settings import ladder_settings, optional_split, prepare_float_onnx
    from edgepipe.stage_log import StageLog
    from edgepipe.stages.evaluate import thresholds_of
    from edgepipe.stages.export import export_stage
    from edgepipe.stages.inputs import validate_inputs

    config = load_config(config_path)
    config = config.model_copy(update={"output": scratch / "out"})
    stages = StageLog(None)
    inputs = validate_inputs(config, stages)
    folder = scratch / "artifacts"
    folder.mkdir()
    floats, graph = export_stage(inputs, folder, scratch, stages)
    paths = {a.format: a.path for a in floats if a.precision == "fp32" and a.format == "onnx"}
    work = scratch / "ladder"
    work.mkdir()
    assert inputs.calibration is not None
    settings, preparation = prepare_float_onnx(paths, inputs.calibration, ladder_settings(config, inputs.targets),
                                               work)
    labelled = inputs.evaluation is not None and inputs.evaluation.labels is not None
    return LadderContext(
        model=inputs.model, graph=None, floats=paths, calibration=inputs.calibration,
        selection=optional_split(config, inputs, "selection", need_labels=labelled), evaluation=None, train=None,
        threshold=config.accuracy.max_drop_points, settings=settings, work=work,
        thresholds=thresholds_of(config.accuracy), preparation=preparation, memo=inputs.memo,
        task=config.accuracy.task)


def _timed(call: Any) -> tuple[Any, float, float]:
    """``call()``, its wall seconds and this process's CPU seconds (every thread: ONNX Runtime's pool too); on a
    shared machine the CPU seconds move less with the other load."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = call()
    return value, round(time.perf_counter() - wall, 2), round(time.process_time() - cpu, 2)


def measure(config_path: Path) -> dict[str, Any]:
    """One model's analysis seconds and decisions (see the module docstring)."""
    from edgepipe.quantize.ladder import score
    from edgepipe.quantize.node_damage import measure_node_damage
    from edgepipe.quantize.report import worst_layers
    from edgepipe.quantize.sensitivity import measure_sensitivity
    from edgepipe.quantize.steps.mixed import mixed_step

    with tempfile.TemporaryDirectory(prefix="ladder-analysis-") as tmp:
        context = _context(config_path, Path(tmp))
        recipe = context.settings.start
        context.best_recipe = {"onnx": recipe}
        _, sensitivity_s, sensitivity_cpu_s = _timed(lambda: measure_sensitivity(context))
        damage, damage_s, damage_cpu_s = _timed(lambda: measure_node_damage(context, recipe))
        mixed, mixed_s, mixed_cpu_s = _timed(lambda: mixed_step(context))
        if mixed.artifacts:
            mixed = score(context, mixed)
    return {
        "model": config_path.parent.name,
        "decided_on": context.describe_decisions(),
        "sensitivity_s": sensitivity_s,
        "sensitivity_cpu_s": sensitivity_cpu_s,
        "node_damage_s": damage_s,
        "node_damage_cpu_s": damage_cpu_s,
        "mixed_step_s": mixed_s,
        "mixed_step_cpu_s": mixed_cpu_s,
        "layers": len(context.sensitivity),
        "isolated_measured": any(r.isolated_sqnr_db is not None for r in context.sensitivity),
        "most_sensitive": [r.layer for r in worst_layers(context.sensitivity, 5)],
        "nodes_ranked": len(damage),
        "nodes_hurting": [d.node for d in damage if d.hurts][:10],
        "mixed_recipe": mixed.outcome.recipe.get("onnx"),
        "mixed_kept": [k.layer for k in mixed.outcome.kept_layers.get("onnx", [])],
        "mixed_held": mixed.outcome.status == "met",
        "mixed_selection": {f: [s.min_cosine, s.min_sqnr_db, s.flips_points]
                            for f, s in mixed.outcome.selection.items()},
    }


def cpu_name() -> str:
    """This machine's CPU and the features that decide int8 speed (:mod:`edgepipe.latency.cpu_features`)."""
    from edgepipe.latency.cpu_features import host_cpu

    return host_cpu().summary()


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", type=Path, help="prepared zoo model folders (with edgepipe.toml)")
    parser.add_argument("--label", required=True, help="name of this run (e.g. before, after)")
    parser.add_argument("--out", type=Path, help="JSON file to merge this run into")
    parser.add_argument("--commit", help="the edgepipe commit measured (default: this checkout's HEAD)")
    args = parser.parse_args()
    rows = []
    for folder in args.models:
        row = measure(folder / "edgepipe.toml")
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.out is None:
        return
    document = json.loads(args.out.read_text()) if args.out.is_file() else {"runs": {}}
    document["cpu"] = cpu_name()
    document["runs"][args.label] = {"commit": args.commit or commit(), "command": " ".join(sys.argv),
                                    "models": rows}
    args.out.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
