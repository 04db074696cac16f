"""edgepipe's fallback ladder side by side with the anchors: NNCF (plain PTQ, and PTQ with accuracy control) and
AIMET-ONNX's PTQ recipe, on real models, with the same data and the same fidelity measure.

Every method starts from the same float ONNX, prepared for quantization by edgepipe (opset upgrade, fused
HardSwish: what ONNX Runtime's quantizer gets; the anchors get it too, which only helps them), calibrates on the
same calibration split, decides (where it decides anything) on the same selection split, and writes a QDQ ONNX.
Each runs in a fresh process, so its wall time (s, its library's import included) and its peak resident memory
(MiB, the whole process: Python, edgepipe and the data too) are its own. The result is then judged on the
evaluation split the way a build judges it: with labels, the top-1 drop against the float model (points); without,
edgepipe's label-free gate (``[accuracy]`` thresholds on every output, whole and by part, and the task check).

- **edgepipe**: the ladder's steps ptq, calibration, equalize (AIMET-ONNX CLE), nncf (NNCF's bias correction and
  SmoothQuant) and mixed (QAT is left out: it trains for minutes) with the model's ``[quantization]`` settings; it
  stops at the first step that holds.
- **edgepipe, own steps**: the same without the steps that call the anchors (equalize, nncf).
- **NNCF PTQ**: ``nncf.quantize`` with its defaults (fast bias correction, the performance preset).
- **NNCF accuracy control**: ``nncf.quantize_with_accuracy_control`` reverting layers to float until the
  selection split holds by edgepipe's rule: with labels, top-1 changes against the float model within
  ``accuracy.max_drop_points`` (the metric is top-1 agreement with the float model); without, the lowest output
  cosine within the ladder's decision margin (0.995 for a 0.99 gate; NNCF takes one scalar metric, so SQNR, parts
  and tasks are not part of its rule).
- **AIMET PTQ**: AIMET-ONNX's recipe without training: batch-norm folding and cross-layer equalization, per-channel
  int8 weights (its ``default_config_per_channel``), Sequential MSE weight scales on up to 32 calibration samples,
  min-max activation ranges, exported as QDQ with signed activations. (AdaRound is left out: 10,000 iterations per
  layer by default, hours on a 2-core CPU.)

    python -m benchmarks.ladder_vs_anchors run --work DIR    # prepare the models, measure, write JSON and page
    python -m benchmarks.ladder_vs_anchors render            # the page again from the committed JSON

Needs AIMET-ONNX beside edgepipe (NNCF is one of its dependencies): ``pip install -e '.[aimet]'``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import queue
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "ladder_vs_anchors.json"
DOC = ROOT / "docs" / "reference" / "anchors.md"
#: The models: the bundled one plain PTQ breaks, and zoo models that quantize in minutes on 2 cores.
BUNDLED = ("digits_nobn",)
ZOO = ("ppocr_v4_cls", "magika", "oww_embedding", "akiki_vad")
METHODS = ("edgepipe", "edgepipe, own steps", "NNCF PTQ", "NNCF accuracy control", "AIMET PTQ")
#: Label-free evaluation samples at most (a build's evaluation stage uses the same number).
LABEL_FREE_SAMPLES = 100


class Case:
    """One model: its config, its float ONNX, its splits and the ladder context every method reads its data from."""

    def __init__(self, folder: Path, work: Path, scratch: Path):
        from edgepipe.config import load_config
        from edgepipe.data.dataset import load_dataset
        from edgepipe.load import load_model
        from edgepipe.quantize.ladder import LadderContext
        from edgepipe.quantize.onnx_qdq import preprocess
        from edgepipe.quantize.settings import ladder_settings, prepare_float_onnx
        from edgepipe.runtimes import open_runner
        from edgepipe.stages.evaluate import thresholds_of

        self.name, self.work = folder.name, work
        self.config = load_config(folder / "edgepipe.toml")
        self.float_path = work / "export" / "model.onnx"
        with open_runner(self.float_path) as runner:
            signature = runner.signature
        def split(name: str) -> Any:
            path = getattr(self.config.data, name)
            return None if path is None else load_dataset(folder / path, signature, role=name, need_labels=False,
                                                          preprocess=self.config.preprocess)

        self.calibration, self.selection = split("calibration"), split("selection")
        self.evaluation = split("evaluation")
        if self.evaluation.labels is None and self.selection is not None and self.selection.labels is not None:
            self.selection = _unlabelled(self.selection)  # a label-free build decides label-free
        scratch.mkdir(parents=True, exist_ok=True)
        settings, notes = prepare_float_onnx({"onnx": self.float_path}, self.calibration,
                                             ladder_settings(self.config), scratch)
        self.context = LadderContext(
            model=load_model(self.float_path), graph=None, floats={"onnx": self.float_path},
            calibration=self.calibration, selection=self.selection, evaluation=self.evaluation, train=None,
            threshold=self.config.accuracy.max_drop_points, settings=settings, work=scratch,
            thresholds=thresholds_of(self.config.accuracy), preparation=notes, task=self.config.accuracy.task)
        self.prepared = preprocess(self.float_path, scratch / "model_prep.onnx")

    def feeds(self, dataset: Any, count: int | None = None) -> list[dict[str, np.ndarray]]:
        """``count`` samples of ``dataset`` (all by default) as ONNX Runtime feeds of the float model."""
        import onnx

        model = onnx.load(str(self.float_path))
        constants = {i.name for i in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in constants]
        return [dict(zip(names, sample)) for sample in dataset.samples(count or len(dataset))]


def _unlabelled(dataset: Any) -> Any:
    from edgepipe.data.dataset import Dataset

    return Dataset(dataset.path, dataset.inputs, None, dataset.sha256, dataset.whole)


def prepare(name: str, work: Path) -> Path:
    """The model's folder (``edgepipe.toml`` with data) and its float ONNX exported under ``work/<name>/export``."""
    from edgepipe.config import load_config
    from edgepipe.pipeline import run_artifacts_only

    if name in BUNDLED:
        folder = ROOT / "models" / name
    else:
        from tests.realmodels import zoo

        folder = zoo.prepare(zoo.BY_NAME[name], work / "zoo").parent
    config = load_config(folder / "edgepipe.toml").model_copy(update={"targets": ["mobile-npu"]})
    if not (work / name / "export" / "model.onnx").is_file():
        run_artifacts_only(config, work / name / "export", quantize=False)
    return folder


def edgepipe_ladder(case: Case, out: Path, steps: tuple[str, ...]) -> str:
    """edgepipe's ladder with ``steps``; the kept artifact copied to ``out``; returns the trail in one line."""
    from dataclasses import replace

    from edgepipe.quantize.ladder import run_ladder

    case.context.settings = replace(case.context.settings, steps=steps)
    kept, report = run_ladder(case.context)
    shutil.copyfile(kept[0].path, out)
    trail = ", ".join(f"{s.step} {s.status}" for s in report.steps)
    said = "".join(f"; {s.step}: {s.note[:240]}" for s in report.steps if s.step in ("equalize", "nncf") and s.note)
    return f"kept {report.final_step} ({trail}){said}"


def _decision_feeds(case: Case) -> tuple[list[dict[str, np.ndarray]], Any]:
    """The samples every ladder decision reads (as the ladder takes them) and the float model's outputs on them."""
    context = case.context
    split = context.decision_split
    count = len(split) if split.labels is not None else min(len(split), context.settings.selection_samples)
    return case.feeds(split, count), context.float_outputs("onnx")


def _session_outputs(model: Any, feeds: list[dict[str, np.ndarray]]) -> list[np.ndarray]:
    """Every output of ``model`` (an ``onnx.ModelProto``) on ``feeds``, sample-major, one thread."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    runs = [session.run(None, feed) for feed in feeds]
    return [np.concatenate([np.asarray(run[i]).reshape(1, -1) for run in runs]) for i in range(len(runs[0]))]


def _nncf_rule(case: Case) -> tuple[Any, float]:
    """NNCF's validation function for edgepipe's stopping rule on the decision split, and its largest drop."""
    feeds, reference = _decision_feeds(case)
    floats = [a.reshape(len(a), -1) for a in reference.arrays]
    context = case.context

    if context.labelled:  # agreement with the float model's top-1: a drop of `threshold` points = that many flips
        answers = floats[0].argmax(1)

        def agreement(model: Any, indices: Any) -> tuple[float, list[float]]:
            indices = list(indices)
            got = _session_outputs(model, [feeds[i] for i in indices])[0].argmax(1)
            same = [float(g == answers[i]) for g, i in zip(got, indices)]
            return float(np.mean(same)), same

        return agreement, context.threshold / 100

    def cosine(model: Any, indices: Any) -> tuple[float, list[float]]:
        indices = list(indices)
        outputs = _session_outputs(model, [feeds[i] for i in indices])
        whole, each = [], np.ones(len(indices))
        for ref, got in zip(floats, outputs):
            ref = ref[indices]
            whole.append(float(np.sum(ref * got) / max(np.linalg.norm(ref) * np.linalg.norm(got), 1e-30)))
            each = np.minimum(each, np.sum(ref * got, 1) / np.maximum(np.linalg.norm(ref, axis=1)
                                                                       * np.linalg.norm(got, axis=1), 1e-30))
        return min(whole), [float(v) for v in each]

    return cosine, 1.0 - (context.decision_thresholds.min_cosine or 0.99)


def nncf_ptq(case: Case, out: Path, accuracy_control: bool) -> str:
    """NNCF's PTQ of the prepared float ONNX (defaults), with accuracy control on the decision split if asked."""
    import nncf
    import onnx

    model = onnx.load(str(case.prepared))
    feeds = case.feeds(case.calibration)
    calibration = nncf.Dataset(feeds)
    if not accuracy_control:
        onnx.save(nncf.quantize(model, calibration, subset_size=len(feeds)), str(out))
        return f"nncf.quantize on {len(feeds)} calibration samples"
    rule, max_drop = _nncf_rule(case)
    count = len(_decision_feeds(case)[0])
    quantized = nncf.quantize_with_accuracy_control(
        model, calibration, nncf.Dataset(list(range(count))), rule, max_drop=max_drop, subset_size=len(feeds))
    onnx.save(quantized, str(out))
    return f"max drop {max_drop:.4g} of {'top-1 agreement' if case.context.labelled else 'lowest cosine'}"


def aimet_ptq(case: Case, out: Path) -> str:
    """AIMET-ONNX's PTQ recipe: CLE, per-channel int8 weights by Sequential MSE, min-max activations, QDQ."""
    import aimet_onnx
    import onnx
    from aimet_onnx.cross_layer_equalization import equalize_model
    from aimet_onnx.quantsim import QuantizationSimModel, compute_encodings

    model = onnx.load(str(case.prepared))
    equalize_model(model)
    config = Path(aimet_onnx.__file__).parent / "common" / "quantsim_config" / "default_config_per_channel.json"
    sim = QuantizationSimModel(model, param_type="int8", activation_type="int8", quant_scheme="min_max",
                               config_file=str(config))
    feeds = case.feeds(case.calibration)
    aimet_onnx.apply_seq_mse(sim, feeds[:32])
    with compute_encodings(sim):
        for feed in feeds:
            sim.session.run(None, feed)
    onnx.save(sim.to_onnx_qdq(prequantize_constants=True, force_activation_as="signed"), str(out))
    return f"CLE, SeqMSE on {min(32, len(feeds))} samples, min-max ranges on {len(feeds)}"


def quantize_with(method: str, case: Case, out: Path) -> str:
    """Run ``method`` on ``case``, writing its QDQ ONNX to ``out``; returns a note on what it did."""
    if method == "edgepipe":
        return edgepipe_ladder(case, out, ("ptq", "calibration", "equalize", "nncf", "mixed"))
    if method == "edgepipe, own steps":
        return edgepipe_ladder(case, out, ("ptq", "calibration", "mixed"))
    if method in ("NNCF PTQ", "NNCF accuracy control"):
        return nncf_ptq(case, out, accuracy_control=method == "NNCF accuracy control")
    if method == "AIMET PTQ":
        return aimet_ptq(case, out)
    raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")


def _peak_mib() -> float:
    """This process's peak resident set (MiB): VmHWM of its address space. Not ``ru_maxrss``: Linux carries that
    over an exec, so a spawned child would report its parent's peak at the fork."""
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _measure(folder: Path, work: Path, method: str, out: Path, answer: Any) -> None:
    """In a fresh process: ``method`` on the model, timed (s) and its peak resident memory (MiB)."""
    import logging

    logging.basicConfig(level=logging.WARNING)
    try:
        # its own scratch: the ladder caches calibration ranges on disk, and one method must not reuse another's
        scratch = work / "scratch" / out.stem
        shutil.rmtree(scratch, ignore_errors=True)
        case = Case(folder, work, scratch)
        start = time.perf_counter()
        note = quantize_with(method, case, out)
        seconds = time.perf_counter() - start
        peak = _peak_mib()
        answer.put({"seconds": round(seconds, 2), "peak_mib": round(peak), "note": note})
    except Exception as exc:  # noqa: BLE001 - a method that fails is a row that says so
        answer.put({"error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300] if str(exc) else ''}"})


def measure(folder: Path, work: Path, method: str, out: Path) -> dict[str, Any]:
    """:func:`_measure` in a spawned process (its own memory and imports)."""
    spawn = multiprocessing.get_context("spawn")
    answer = spawn.Queue()
    child = spawn.Process(target=_measure, args=(folder, work, method, out, answer))
    child.start()
    child.join()
    try:
        return answer.get(timeout=10)
    except queue.Empty:
        return {"error": f"the process ended with code {child.exitcode}"}


#: Recurrent ops: gates per hidden unit (their MACs per step are the weights W and R, times the sequence length).
_RECURRENT = {"GRU": 3, "LSTM": 4, "RNN": 1}


def _node_macs(op: Any) -> int:
    """MACs of one operator: edgepipe's count (convolutions, matrix products), and a recurrent op's weights times its
    sequence length."""
    if op.op not in _RECURRENT:
        return int(op.macs)
    shapes = [t.shape for t in op.inputs[:3]]
    if any(s is None or None in s for s in shapes):
        return 0
    x, w, r = shapes
    return int(x[0]) * (int(np.prod(w)) + int(np.prod(r)))  # type: ignore[arg-type]


def mac_shares(path: Path) -> tuple[float, float]:
    """Share of the model's MACs computed in float, and with int16 activations, in the QDQ ONNX at ``path``.

    A weight layer computes in integers when every input it multiplies (its data and its weights) is a
    DequantizeLinear output; int16 when one of those is a 16-bit tensor."""
    import onnx

    from edgepipe.graph.onnx_reader import read_onnx

    model = onnx.load(str(path))
    nodes = {n.name: n for n in model.graph.node}
    producer = {o: n for n in model.graph.node for o in n.output}
    initializers = {i.name: i for i in model.graph.initializer}
    wide_types = {onnx.TensorProto.INT16, onnx.TensorProto.UINT16}

    def dequantized(name: str) -> tuple[bool, bool]:
        node = producer.get(name)
        if node is None or node.op_type != "DequantizeLinear":
            return False, False
        point = initializers.get(node.input[2]) if len(node.input) > 2 else None
        return True, point is not None and point.data_type in wide_types

    total = floats = wide = 0
    for position, op in enumerate(read_onnx(path).nodes):
        macs = _node_macs(op)
        if not macs:
            continue
        node = nodes.get(op.name) or model.graph.node[position]
        reads = [dequantized(n) for n in node.input[:3 if op.op in _RECURRENT else 2] if n]
        total += macs
        if not all(integer for integer, _ in reads):
            floats += macs
        elif any(sixteen for _, sixteen in reads):
            wide += macs
    return (floats / total, wide / total) if total else (0.0, 0.0)


def judge(case: Case, path: Path) -> dict[str, Any]:
    """``path`` on the evaluation split as a build judges it: the top-1 drop with labels (points), else the label-free
    gate (every output whole and by part, and the task check); lowest cosine and SQNR (dB) in both cases."""
    from edgepipe.data.dataset import Dataset
    from edgepipe.metrics.accuracy import top1_accuracy
    from edgepipe.metrics.compare import run_outputs
    from edgepipe.metrics.task_plan import plan_tasks, task_failure

    data = case.evaluation
    labelled = data.labels is not None
    if not labelled and len(data) > LABEL_FREE_SAMPLES:
        data = Dataset(data.path, tuple(a[:LABEL_FREE_SAMPLES] for a in data.inputs), None, data.sha256, data.whole)
    reference, got = run_outputs(case.float_path, data), run_outputs(path, data)
    agreements, unmatched = reference.agreements(got)
    tasks = reference.task_scores(got, plan_tasks(reference.names, reference.arrays, case.config.accuracy.task))
    failures = ([f for a in agreements for f in case.context.thresholds.failures(a)] + unmatched
                + [line for task in tasks if (line := task_failure(task)) is not None])
    row: dict[str, Any] = {"samples": len(data), "cosine": round(min(a.cosine for a in agreements), 5),
                           "sqnr_db": round(min(a.sqnr_db for a in agreements), 2), "failures": failures[:3]}
    if labelled:
        first = reference.names[0]
        drop = 100 * (top1_accuracy(reference.arrays[0], data.labels)
                      - top1_accuracy(reference.paired(got)[first], data.labels))
        row |= {"drop_points": round(drop, 2), "holds": drop <= case.config.accuracy.max_drop_points + 1e-9}
    else:
        row |= {"drop_points": None, "holds": not failures}
    return row


def run(models: list[str], work: Path, out: Path) -> dict[str, Any]:
    """Measure every method on every model; write the JSON record to ``out`` after each model (a run stopped early
    keeps the models it finished) and return it."""
    from benchmarks.provenance import now, tree_is_clean

    # whether the code measured is committed, read before this run writes its own results into the tree
    started, rows, dirty = now(), [], not tree_is_clean()
    record: dict[str, Any] = {}
    for name in models:
        try:
            folder = prepare(name, work)
            case = Case(folder, work / name, work / name / "scratch" / "judge")
        except Exception as exc:  # noqa: BLE001 - a model that cannot be prepared is a row that says so
            rows.append({"model": name, "method": "(preparation)", "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        for method in METHODS:
            path = work / name / f"{method.replace(' ', '_').replace('/', '')}.onnx"
            row: dict[str, Any] = {"model": name, "method": method, "labelled": case.evaluation.labels is not None}
            row |= measure(folder, work / name, method, path)
            if "error" not in row:
                floats, wide = mac_shares(path)
                row |= judge(case, path) | {"float_macs": round(floats, 4), "int16_macs": round(wide, 4)}
            print(json.dumps(row), file=sys.stderr, flush=True)  # noqa: T201 - progress of a long benchmark
            rows.append(row)
        record = _record(started, rows, dirty)
        out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def _record(started: str, rows: list[dict[str, Any]], dirty: bool) -> dict[str, Any]:
    from benchmarks.provenance import Provenance
    from edgepipe.versions import package_version

    tools = {p: package_version(p) for p in ("onnxruntime", "nncf", "aimet-onnx", "torch")}
    provenance = Provenance.here(started, tools)
    provenance.dirty = dirty
    return {"provenance": provenance.as_dict(), "runs": 1, "methods": list(METHODS),
            "rows": [r | {"commit": provenance.commit} for r in rows], "verdicts": verdicts(rows)}


def _rank(row: dict[str, Any]) -> tuple[float, ...]:
    """Better first: holds, then the higher lowest cosine, then SQNR (the ladder's own ranking: a top-1 drop on a few
    hundred samples moves by whole samples, so it decides whether a result holds, not which is better)."""
    if "error" in row:
        return (1.0, 2.0, 0.0)
    return (0.0 if row["holds"] else 1.0, -row["cosine"], -row["sqnr_db"])


def _named(row: dict[str, Any]) -> str:
    """The method, with the share of the MACs it left in float when there is one (a result that holds by not
    quantizing is not an int8 model)."""
    floats = row.get("float_macs") or 0.0
    return f"{row['method']} ({100 * floats:.0f} % of MACs in float)" if floats >= 0.005 else row["method"]


def verdicts(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Per model, one sentence: which methods hold, and whether an anchor beats edgepipe's ladder on fidelity."""
    out = {}
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        held = [_named(r) for r in mine if r.get("holds")]
        ours = next((r for r in mine if r["method"] == "edgepipe"), None)
        better = [_named(r) for r in mine if not r["method"].startswith("edgepipe")
                  and ours is not None and _rank(r) < _rank(ours)]
        best = _named(min(mine, key=_rank))
        sentence = (f"holds: {', '.join(held) if held else 'none'}; best fidelity: {best}; "
                    + (f"better than edgepipe's ladder: {', '.join(better)}" if better
                       else "no anchor is better than edgepipe's ladder"))
        out[model] = sentence
    return out


def _fidelity(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"failed: {row['error']}"
    mark = "holds" if row["holds"] else "fails"
    if row["drop_points"] is not None:
        return f"{mark}: drop {row['drop_points']:+.2f} pts (cos {row['cosine']:.4f})"
    return f"{mark}: cos {row['cosine']:.4f}, {row['sqnr_db']:.1f} dB"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def render(record: dict[str, Any]) -> str:
    """docs/reference/anchors.md from the JSON record."""
    from benchmarks.provenance import Provenance

    lines = ["# edgepipe's ladder and the anchors: NNCF and AIMET-ONNX", "",
             "<!-- generated by benchmarks/ladder_vs_anchors.py render from benchmarks/results/ladder_vs_anchors.json;"
             " do not edit -->", "",
             f"Measured at {Provenance(**record['provenance']).sentence()}.", "",
             "Every method quantizes the same float ONNX (prepared by edgepipe) to QDQ int8 with the same calibration "
             "split, decides on the same selection split, and is judged on the evaluation split the way a build "
             "judges it: the top-1 drop against the float model where the evaluation split has labels (gate: "
             "`accuracy.max_drop_points`), else edgepipe's label-free gate on every output (cosine, SQNR, parts, "
             "task). **Float MACs**: the share of the model's multiply-accumulates left in float (on an NPU: CPU "
             "fallback); "
             "**int16 MACs**: with int16 activations. Time: wall seconds of the method alone, in a fresh process, "
             "its library's import included (NNCF, AIMET-ONNX and PyTorch; edgepipe's own is not: every method's "
             "process imports it to read the data first); memory: that process's peak resident set (MiB), edgepipe "
             "and the data included. One run each, on a machine that may have been running other work: the times "
             "are indicative, not a benchmark of speed. How each method is run: "
             "`benchmarks/ladder_vs_anchors.py`."]
    lines += ["", "**Verdicts** (better: holds the gate, then the higher lowest cosine, then SQNR, on the "
              "evaluation split: the ladder's own ranking):", ""]
    lines += [f"- **{model}**: {sentence}" for model, sentence in record.get("verdicts", {}).items()]
    lines += ["", "| model | method | evaluation | float MACs | int16 MACs | time (s) | peak memory (MiB) | "
              "what it did |", "|---|---|---|---|---|---|---|---|"]
    for row in record["rows"]:
        lines.append(f"| {row['model']} | {row['method']} | {_fidelity(row)} | {_pct(row.get('float_macs'))} | "
                     f"{_pct(row.get('int16_macs'))} | {row.get('seconds', '–')} | {row.get('peak_mib', '–')} | "
                     f"{row.get('note', '–')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="prepare the models under WORK, measure every method, write the JSON and page")
    go.add_argument("--work", type=Path, help="Where the models, their data and the artifacts go (default: temp).")
    go.add_argument("--only", nargs="+", choices=BUNDLED + ZOO, help="These models only.")
    go.add_argument("--out", type=Path, default=RESULTS)
    sub.add_parser("render", help="write docs/reference/anchors.md from the JSON")
    args = parser.parse_args(argv)
    if args.command == "run":
        models = list(args.only or BUNDLED + ZOO)
        if args.work is None:
            with tempfile.TemporaryDirectory() as scratch:
                run(models, Path(scratch), args.out)
        else:
            run(models, args.work, args.out)
        if args.out != RESULTS:
            return 0
    DOC.write_text(render(json.loads(RESULTS.read_text(encoding="utf-8"))), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
