"""Bounded fuzzing of the ONNX and TFLite graph readers: mutated real model bytes → ``edgepipe.load.load_model``.

    python benchmarks/fuzz_readers.py --minutes 5 --seed 0 [--activate] [--findings DIR] [--json OUT]

Seeds are real models: the tiny ONNX of tests/models/make_models.py, the tiny
TFLite of tests/corpus/make_corpus.py, and every ``.onnx``/``.tflite`` the
bundled digits_cnn build wrote (``build/digits_cnn/*/``, if present; build it
first with ``edgepipe build``). Each case is a seed mutated a few times (bit
flips, interesting bytes and 32-bit words, truncation, deleted, duplicated or
spliced chunks, and for ONNX structure-aware edits: dims, dtypes, op types,
domains, opsets, external data). Every case runs in a forked child with a
time limit (``SIGALRM``) and an address-space limit, so a crash, a hang or a
runaway allocation cannot take the fuzzer down. The verdicts:

* ``refused``: an ``EdgepipeError`` (a clean user error), ``accepted``: it loaded;
* ``finding``: any other exception, or the child died of a signal, timed out or ran out of memory.

With ``--activate`` an accepted case is also opened by the runtime the build
would use (ONNX Runtime session / LiteRT ``allocate_tensors``). Findings are
written to ``--findings`` so each can become a corpus entry; docs/reference/reliability.md describes
the method.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import struct
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

INTERESTING_BYTES = [0x00, 0x01, 0x7F, 0x80, 0xFF]
INTERESTING_WORDS = [0, 1, 2, 4, 0x7F, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]
CASE_TIMEOUT_S = 20
ADDRESS_SPACE_BYTES = 8 * 1024**3


def seed_models(work: Path) -> dict[str, list[bytes]]:
    """Real model bytes to mutate, per format."""
    from tests.corpus.make_corpus import tiny_tflite
    from tests.models.make_models import tiny_onnx

    seeds: dict[str, list[bytes]] = {"onnx": [tiny_onnx(work / "tiny.onnx").read_bytes()], "tflite": [tiny_tflite()]}
    for path in sorted((ROOT / "build" / "digits_cnn").glob("*/model*.*")):
        if path.suffix in (".onnx", ".tflite"):
            seeds[path.suffix[1:]].append(path.read_bytes())
    return seeds


def _byte_mutation(rng: random.Random, data: bytearray, pool: list[bytes]) -> bytearray:
    if not data:
        return bytearray(rng.randbytes(rng.randint(1, 64)))
    kind = rng.randrange(7)
    pos = rng.randrange(len(data))
    if kind == 0:
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif kind == 1:
        data[pos] = rng.choice(INTERESTING_BYTES)
    elif kind == 2 and len(data) >= 4:
        pos = rng.randrange(len(data) - 3)
        data[pos:pos + 4] = struct.pack("<I", rng.choice(INTERESTING_WORDS + [len(data), rng.getrandbits(32)]))
    elif kind == 3:
        del data[rng.randrange(len(data)):]
    elif kind == 4:
        del data[pos:pos + rng.randint(1, 64)]
    elif kind == 5:
        chunk = data[pos:pos + rng.randint(1, 64)]
        insert = rng.randrange(len(data))
        data[insert:insert] = chunk
    else:
        other = rng.choice(pool)
        start = rng.randrange(len(other))
        data[pos:pos + rng.randint(1, 256)] = other[start:start + rng.randint(1, 256)]
    return data


def _onnx_mutation(rng: random.Random, content: bytes) -> bytes:
    """A structure-aware edit of a parseable ONNX model (falls back to the bytes unchanged)."""
    import onnx

    try:
        model = onnx.load_from_string(content)
    except Exception:  # noqa: BLE001 - not parseable any more: byte mutations only
        return content
    graph = model.graph
    kind = rng.randrange(6)
    if kind == 0 and graph.input:
        dims = rng.choice(graph.input).type.tensor_type.shape.dim
        if dims:
            rng.choice(dims).dim_value = rng.choice([0, 1, 7, 2**20, 2**31 - 1, 2**40, 2**62])
    elif kind == 1 and graph.node:
        rng.choice(graph.node).op_type = rng.choice(["Conv", "Gemm", "Loop", "If", "Reshape", "Foo", "", "Resize"])
    elif kind == 2 and graph.node:
        rng.choice(graph.node).domain = rng.choice(["", "ai.onnx.ml", "com.microsoft", "x.y", "ai.onnx"])
    elif kind == 3 and model.opset_import:
        rng.choice(model.opset_import).version = rng.choice([0, 1, 6, 13, 21, 28, 29, 1000, -1])
    elif kind == 4 and graph.initializer:
        tensor = rng.choice(graph.initializer)
        if tensor.dims:
            tensor.dims[rng.randrange(len(tensor.dims))] = rng.choice([0, 1, 3, 2**20, 2**40])
        else:
            tensor.data_type = rng.randrange(0, 26)
    elif graph.initializer:
        tensor = rng.choice(graph.initializer)
        tensor.data_location = onnx.TensorProto.EXTERNAL
        entry = tensor.external_data.add()
        entry.key, entry.value = "location", rng.choice(["w.bin", "../w.bin", "/etc/passwd", "", "a/../../b"])
    return model.SerializeToString()


def mutate(rng: random.Random, fmt: str, seeds: list[bytes]) -> bytes:
    """One fuzz case: a seed with 1-4 mutations (a structure-aware one first, for ONNX, now and then)."""
    content = rng.choice(seeds)
    structural = fmt == "onnx" and rng.random() < 0.3
    if structural:
        content = _onnx_mutation(rng, content)
    data = bytearray(content)
    for _ in range(rng.randint(0 if structural else 1, 4)):
        data = _byte_mutation(rng, data, seeds)
    return bytes(data)


def _activate(model: object) -> None:
    """Open the model with the runtime a build would use on it."""
    from edgepipe.load import SourceModel

    assert isinstance(model, SourceModel)
    if model.format == "onnx":
        import onnxruntime as ort

        # the loaded model (dynamic input dims fixed), as the build saves and runs it
        ort.InferenceSession(model.handle.SerializeToString(), providers=["CPUExecutionProvider"])
    else:
        from ai_edge_litert.interpreter import Interpreter

        Interpreter(model_content=model.handle).allocate_tensors()


def disable_prechecks() -> None:
    """Baseline mode: turn off edgepipe's own pre-load checks, so the libraries see the raw bytes."""
    from edgepipe.load import onnx_checks, tflite_checks

    def nothing(*args: object) -> None:
        return None

    for name in ("check_opsets", "check_domains", "check_external_data", "check_input_shapes"):
        setattr(onnx_checks, name, nothing)
    tflite_checks.check_tflite = nothing


def _child(case: Path, activate: bool, pipe: int) -> None:
    """Load ``case`` and report the verdict through ``pipe``; never returns."""
    signal.alarm(CASE_TIMEOUT_S)
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    from edgepipe.errors import EdgepipeError
    from edgepipe.load import load_model
    from edgepipe.load.rejections import is_expected_rejection

    verdict, detail = "accepted", ""
    try:
        model = load_model(case)
        if activate:
            try:
                _activate(model)
            except Exception as exc:  # noqa: BLE001 - a runtime's own clean refusal is not a finding
                verdict, detail = "runtime-refused", f"{type(exc).__name__}: {str(exc).strip()[:300]}"
    except EdgepipeError as exc:  # a refusal wrapping an unexpected exception is a bug dressed up: a finding
        verdict, detail = (("refused", type(exc).__name__) if is_expected_rejection(exc) else
                           ("finding", f"{type(exc).__name__} wrapping {exc.__cause__!r}"))
    except BaseException:  # noqa: BLE001 - anything else is what we look for
        verdict, detail = "finding", traceback.format_exc(limit=8)
    os.write(pipe, json.dumps({"verdict": verdict, "detail": detail}).encode())
    os._exit(0)


def run_case(content: bytes, fmt: str, work: Path, activate: bool) -> dict[str, str]:
    """Load one case in a forked child; a signal death or a timeout is a finding too."""
    case = work / f"case.{fmt}"
    case.write_bytes(content)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            _child(case, activate, write)
        finally:
            os._exit(70)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        kind = "timeout" if sig == signal.SIGALRM else f"signal {signal.Signals(sig).name}"
        return {"verdict": "finding", "detail": f"child died: {kind}"}
    if not chunks:
        return {"verdict": "finding", "detail": f"child exited {os.WEXITSTATUS(status)} without a verdict"}
    return json.loads(b"".join(chunks))


def fuzz(minutes: float, seed: int, activate: bool, findings_dir: Path) -> dict[str, object]:
    """Fuzz both readers in turn for ``minutes``; returns the counts of each outcome."""
    import onnx  # noqa: F401 - imported once in the parent, so each forked child starts warm
    from ai_edge_litert import interpreter, schema_py_generated  # noqa: F401

    import edgepipe.load.onnx_checks  # noqa: F401
    import edgepipe.load.onnx_loader  # noqa: F401
    import edgepipe.load.onnx_shapes  # noqa: F401
    import edgepipe.load.tflite_checks  # noqa: F401
    import edgepipe.load.tflite_loader  # noqa: F401
    import edgepipe.runtimes.litert_runner  # noqa: F401

    rng = random.Random(seed)
    counts: dict[str, Counter[str]] = {"onnx": Counter(), "tflite": Counter()}
    findings: list[dict[str, str]] = []
    refusals: dict[str, list[str]] = {"onnx": [], "tflite": []}
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        seeds = seed_models(work)
        n = 0
        while time.monotonic() - start < minutes * 60:
            fmt = "onnx" if n % 2 == 0 else "tflite"
            content = mutate(rng, fmt, seeds[fmt])
            result = run_case(content, fmt, work, activate)
            counts[fmt][result["verdict"]] += 1
            if result["verdict"] == "runtime-refused" and len(refusals[fmt]) < 10:
                refusals[fmt].append(result["detail"])
                findings_dir.mkdir(parents=True, exist_ok=True)
                (findings_dir / f"runtime-refused-{fmt}-{len(refusals[fmt]):03d}.{fmt}").write_bytes(content)
            if result["verdict"] == "finding":
                findings_dir.mkdir(parents=True, exist_ok=True)
                path = findings_dir / f"{fmt}-{len(findings):03d}.{fmt}"
                path.write_bytes(content)
                findings.append({"file": str(path), "detail": result["detail"]})
                print(f"FINDING {path}: {result['detail'][-400:]}", file=sys.stderr)
            n += 1
        seed_sizes = {fmt: [len(s) for s in items] for fmt, items in seeds.items()}
    elapsed = time.monotonic() - start
    return {"seed": seed, "minutes": round(elapsed / 60, 2), "cases": n, "cases_per_s": round(n / elapsed, 1),
            "activate": activate, "seeds_bytes": seed_sizes,
            "verdicts": {fmt: dict(sorted(c.items())) for fmt, c in counts.items()},
            "runtime_refusals_sample": refusals, "findings": findings}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--activate", action="store_true", help="also open accepted cases with their runtime")
    parser.add_argument("--findings", type=Path, default=Path(tempfile.gettempdir()) / "edgepipe-fuzz-findings")
    parser.add_argument("--json", type=Path, help="write the summary here too")
    parser.add_argument("--without-prechecks", action="store_true",
                        help="baseline: disable edgepipe's pre-load checks (onnx_checks, tflite_checks)")
    args = parser.parse_args()
    if args.without_prechecks:
        disable_prechecks()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    summary = fuzz(args.minutes, args.seed, args.activate, args.findings)
    summary["prechecks"] = not args.without_prechecks
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    sys.exit(1 if summary["findings"] else 0)


if __name__ == "__main__":
    main()
