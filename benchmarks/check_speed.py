"""How fast `edgepipe check` answers on models of a few hundred to ~1300 nodes.

    python benchmarks/check_speed.py [--work build/agreement] [--runs 20] [--write]

In-process: median wall time (ms) of reading the graph and placing every node (read_graph + check_graph),
per model and target. Cold: the whole `edgepipe check MODEL --target X` command, Python start-up included.
Uses the QDQ light models benchmarks/agreement.py prepares (it builds them if missing) and a generated
int8 TFLite of ~300 ops. ``--write`` puts the table into benchmarks/results/check_speed.md between the script's markers.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from doc_sections import provenance, spread, write_section  # noqa: E402

TARGETS_MD = ROOT / "benchmarks" / "results" / "check_speed.md"


def deep_tflite(path: Path, blocks: int = 60) -> Path:
    """An int8 TFLite of ``blocks`` conv/depthwise/add/relu blocks (about 5 ops each)."""
    if path.exists():
        return path
    from tests.models.nets import _keras, to_int8_tflite

    k = _keras()
    k.utils.set_random_seed(0)
    inputs = k.Input((16, 16, 8), batch_size=1)
    x = inputs
    for _ in range(blocks):
        y = k.layers.Conv2D(8, 1, activation="relu")(x)
        y = k.layers.DepthwiseConv2D(3, padding="same")(y)
        y = k.layers.Conv2D(8, 1)(y)
        x = k.layers.ReLU()(k.layers.Add()([x, y]))
    return to_int8_tflite(k.Model(inputs, x), path)


def timed(fn, runs: int) -> list[float]:  # noqa: ANN001 - a zero-argument callable
    """Wall time of each of ``runs`` calls (ms)."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(1000 * (time.perf_counter() - start))
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "agreement")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--write", action="store_true", help="Write the table into benchmarks/results/check_speed.md.")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    from benchmarks.agreement import light_qdq
    from edgepipe.support import check_graph, read_graph
    from edgepipe.targets import load_profile

    cases = [(light_qdq(n, args.work), t) for n in ("resnet50", "shufflenet", "densenet121")
             for t in ("mobile-npu", "gpu-reference")]
    cases.append((deep_tflite(args.work / "deep_int8.tflite"), "ethos-u55"))
    cases.append((deep_tflite(args.work / "deep_int8.tflite"), "edge-tpu"))
    cold_runs = max(3, args.runs // 5)
    lines = [provenance("check_speed.py", f"{args.runs} in-process and {cold_runs} cold runs per case"), "",
             "| model | target | nodes | read + check min / median / max (ms) | `edgepipe check` cold min / median / "
             "max (ms) |", "|---|---|---|---|---|"]
    exe = Path(sys.executable).with_name("edgepipe")
    for model, target in cases:
        profile = load_profile(target)
        nodes = check_graph(read_graph(model), profile).nodes
        warm = timed(lambda m=model, p=profile: check_graph(read_graph(m), p), args.runs)
        cold = timed(lambda m=model, t=target: subprocess.run(
            [str(exe), "check", str(m), "--target", t, "-o", str(args.work / "speed")], check=True,
            capture_output=True), cold_runs)
        lines.append(f"| {model.name} | {target} | {nodes} | {spread(warm, '{:.1f}')} | {spread(cold, '{:.0f}')} |")
    print("\n".join(lines))
    if args.write:
        write_section(TARGETS_MD, "check_speed.py", "\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
