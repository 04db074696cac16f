"""Time a cached rebuild of the reference model against a full build.

In a fresh folder: one ``edgepipe build`` fills the build cache (cold), then
``--runs`` rebuilds with nothing changed (each must say "from cache") and
``--runs`` full builds with ``--no-cache``. Every run is a fresh process, so the
cached time includes Python start-up and edgepipe's imports. Prints the median
wall times (s) and, with ``--write``, puts them into benchmarks/results/benchmarks.md.
Run: ``python benchmarks/cache_rebuild.py --runs 5 --write``.

The cache key includes a digest of edgepipe's own source files: edit the
checkout between the runs and the rebuild is (rightly) a miss.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from doc_sections import BENCHMARKS_MD, provenance, spread, write_section  # noqa: E402


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _build(cwd: Path, *extra: str) -> tuple[float, float, str]:
    """One ``edgepipe build`` in ``cwd``: wall time (s), CPU time (s, user + system) and its stdout."""
    exe = Path(sys.executable).with_name("edgepipe")
    env = {**os.environ, "EDGEPIPE_CACHE_DIR": str(cwd / "cache")}
    cpu, start = _cpu_seconds(), time.perf_counter()
    proc = subprocess.run([str(exe), "build", "--quiet", *extra], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"edgepipe build failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return seconds, cpu, proc.stdout


def measure(runs: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of every run: the cold build, the cached rebuilds, the full builds without the cache."""
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        cold = _build(cwd)
        cached = []
        for _ in range(runs):
            wall, cpu, out = _build(cwd)
            if "(from cache)" not in out:
                raise SystemExit("the rebuild was not a cache hit (was the checkout edited meanwhile?)")
            cached.append((wall, cpu))
        full = [_build(cwd, "--no-cache")[:2] for _ in range(runs)]
    return {"cold": [cold[:2]], "cached": cached, "full": full}


def _section(result: dict[str, list[tuple[float, float]]], runs: int) -> str:
    rows = [("first build (fills the cache)", "cold"),
            ("rebuild, nothing changed (cache hit, TensorFlow not imported)", "cached"),
            ("rebuild with `--no-cache`", "full")]
    table = "".join(f"| {label} | {len(result[key])} | {spread([r[0] for r in result[key]], '{:.2f}')} | "
                    f"{spread([r[1] for r in result[key]], '{:.2f}')} |\n" for label, key in rows)
    speedup = statistics.median(r[0] for r in result["full"]) / statistics.median(r[0] for r in result["cached"])
    return (provenance("cache_rebuild.py", f"1 cold build, then {runs} cached and {runs} uncached rebuilds, "
                       "each a fresh process") + "\n\n"
            "| run | runs | wall time min / median / max (s) | CPU time min / median / max (s) |\n"
            "|---|---|---|---|\n" + table +
            f"\nA cache hit is {speedup:.0f}× faster than a full build (medians of the wall time). On a busy machine "
            "the wall time of a hit is mostly waiting for a CPU; its CPU time is what it costs.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="Put the result into benchmarks/results/benchmarks.md.")
    args = parser.parse_args()
    result = measure(args.runs)
    section = _section(result, args.runs)
    sys.stdout.write(section)
    if args.write:
        write_section(BENCHMARKS_MD, "cache_rebuild.py", section)


if __name__ == "__main__":
    main()
