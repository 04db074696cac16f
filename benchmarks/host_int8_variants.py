"""Which ONNX Runtime int8 form is fastest on this host, and what each costs in fidelity: the exploration behind
host-cpu's deployment form, per real model.

For each model folder (``edgepipe.toml`` + model + data, e.g. /work/zoo/<name>) edgepipe's own loader
makes the static float ONNX and the calibration arrays; then ``onnxruntime.quantization`` makes, from
the same pre-processed model (constant divisions as products) and the same calibration samples (min/max):

- ``QDQ s8s8``: int8 activations × int8 per-channel weights (the build's ``model_int8.onnx`` recipe), run
  with ORT's x86 default (int8-activation QDQ groups are not fused);
- ``QDQ s8s8 + qdqisint8allowed``: the same file with ``session.qdqisint8allowed=1`` (fused to int8 × int8);
- ``QDQ u8 (shifted)``: the s8s8 file with uint8 activations (:mod:`edgepipe.quantize.host.qdq_uint8`, what a
  host-cpu build deploys: the same integers, fused to U8S8);
- ``QOperator u8s8``, ``QOperator u8s8 reduce_range`` (7-bit weights: no VPMADDUBSW saturation on AVX2),
  ``QOperator u8u8``.

Each is timed in one interleaved session with the fp32 model (1 intra-op thread, blocks of 3 runs until
the budget is spent), p50 and min; output cosine against fp32 on the last 4 calibration samples as this
host computes it, and with exact int8 semantics (``session.disable_quant_qdq=1``).

Run: ``python benchmarks/host_int8_variants.py --write /work/zoo/ddddocr_det /work/zoo/picodet_layout``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "benchmarks" / "results" / "performance.md"
BEGIN, END = "<!-- host_int8_variants.py:begin -->", "<!-- host_int8_variants.py:end -->"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_overhead import _DUMP_CALIB  # noqa: E402 - the same static float ONNX and calibration arrays
from host_int8 import machine  # noqa: E402

from edgepipe.quantize.host.forms import divisions_as_products  # noqa: E402
from edgepipe.quantize.host.qdq_uint8 import uint8_activations  # noqa: E402
from edgepipe.quantize.onnx_qdq import preprocess  # noqa: E402

CALIBRATION, FIDELITY = 16, 4
INT8_ALLOWED = "session.qdqisint8allowed"


def _variants() -> dict[str, dict]:
    from onnxruntime.quantization import QuantFormat, QuantType  # heavy optional dependency

    qop, qdq = QuantFormat.QOperator, QuantFormat.QDQ
    u8, s8 = QuantType.QUInt8, QuantType.QInt8
    return {"QDQ s8s8": dict(quant_format=qdq, activation_type=s8, weight_type=s8),
            "QOperator u8s8": dict(quant_format=qop, activation_type=u8, weight_type=s8),
            "QOperator u8s8 reduce_range": dict(quant_format=qop, activation_type=u8, weight_type=s8,
                                                reduce_range=True),
            "QOperator u8u8": dict(quant_format=qop, activation_type=u8, weight_type=u8)}


def make_forms(work: Path, arrays: dict[str, np.ndarray]) -> dict[str, tuple[Path, dict[str, str]]]:
    """Every form: name → (file, session config entries)."""
    from onnxruntime.quantization import CalibrationDataReader, quantize_static  # heavy optional dependency

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.i = 0

        def get_next(self) -> dict[str, np.ndarray] | None:
            self.i += 1
            return None if self.i > CALIBRATION else {n: a[self.i - 1:self.i] for n, a in arrays.items()}

    prepared = preprocess(work / "model.onnx", work / "prep.onnx")
    source = divisions_as_products(prepared, work / "products.onnx")
    forms: dict[str, tuple[Path, dict[str, str]]] = {"fp32": (work / "model.onnx", {})}
    for name, options in _variants().items():
        out = work / (re.sub(r"\W+", "_", name) + ".onnx")
        with contextlib.redirect_stdout(io.StringIO()):
            quantize_static(str(source), str(out), Reader(), per_channel=True,
                            extra_options={"WeightSymmetric": True}, **options)
        forms[name] = (out, {})
    s8 = forms["QDQ s8s8"][0]
    forms["QDQ s8s8 + qdqisint8allowed"] = (s8, {INT8_ALLOWED: "1"})
    shifted = uint8_activations(s8, work / "qdq_u8.onnx")
    if shifted is not None:
        forms["QDQ u8 (shifted)"] = (shifted, {})
    return forms


def _session(path: Path, entries: dict[str, str], exact: bool = False):  # noqa: ANN202 - an ORT session
    import onnxruntime as ort  # heavy optional dependency

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    for key, value in entries.items():
        options.add_session_config_entry(key, value)
    if exact:
        options.add_session_config_entry("session.disable_quant_qdq", "1")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _flat(session, feeds: list[dict[str, np.ndarray]]) -> np.ndarray:  # noqa: ANN001
    return np.concatenate([o.astype(np.float64).ravel() for f in feeds for o in session.run(None, f)])


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def measure(model: Path, budget: float) -> list[str]:
    """Table rows for one model."""
    with tempfile.TemporaryDirectory(prefix="int8-variants-") as name:
        work = Path(name)
        subprocess.run([sys.executable, "-c", _DUMP_CALIB, str(model / "edgepipe.toml"), str(work)], check=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
        arrays = {p.stem: np.load(p) for p in work.glob("*.npy")}
        forms = make_forms(work, arrays)
        sessions = {k: _session(p, e) for k, (p, e) in forms.items()}
        feeds = [{n: a[len(a) - 1 - i:len(a) - i] for n, a in arrays.items()} for i in range(FIDELITY)]
        ref = _flat(sessions["fp32"], feeds)
        cosine = {k: (_cos(ref, _flat(s, feeds)), _cos(ref, _flat(_session(*forms[k], exact=True), feeds)))
                  for k, s in sessions.items() if k != "fp32"}
        times: dict[str, list[float]] = {k: [] for k in sessions}
        for s in sessions.values():
            s.run(None, feeds[0])
        start = time.perf_counter()
        while time.perf_counter() - start < budget or len(times["fp32"]) < 15:
            for key, s in sessions.items():
                for _ in range(3):
                    t = time.perf_counter()
                    s.run(None, feeds[0])
                    times[key].append(1000 * (time.perf_counter() - t))
    fp32 = statistics.median(times["fp32"])
    rows = []
    for key, values in times.items():
        host, exact = cosine.get(key, (1.0, 1.0))
        p50 = statistics.median(values)
        rows.append(f"| {model.name} | {key} | {p50:.3g} | {min(values):.3g} | {p50 / fp32:.2f} | "
                    f"{host:.4f} / {exact:.4f} | {len(values)} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--budget", type=float, default=30.0, help="seconds of interleaved timing per model")
    parser.add_argument("--write", action="store_true", help="update benchmarks/results/performance.md")
    args = parser.parse_args()
    head = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()}, **shared with other "
            f"jobs** (ratios from one interleaved session per model, 1 thread, {args.budget:g} s budget; min/max "
            f"calibration on {CALIBRATION} samples, cosine on {FIDELITY} others).", "",
            "| model | form | p50 (ms) | min (ms) | p50 ÷ fp32 | output cosine (host / exact int8) | runs |",
            "|---|---|---|---|---|---|---|"]
    rows: list[str] = []
    for model in args.models:
        rows += measure(model, args.budget)
        text = "\n".join(head + rows)
        print(text, flush=True)
        if args.write:
            doc = DOC.read_text(encoding="utf-8")
            block = f"{BEGIN}\n{text}\n{END}"
            if BEGIN in doc:
                doc = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _, b=block: b, doc, flags=re.S)
            else:
                doc += f"\n### Int8 forms compared (`benchmarks/host_int8_variants.py`)\n\n{block}\n"
            DOC.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    main()
