"""Host benchmark of the reference model: fp32 and int8 side by side, all int8 forms, a load test.

    python benchmarks/host_bench.py [--json OUT]

Builds the bundled reference model's artifacts (``edgepipe quantize``) into a temporary folder, then
runs ``edgepipe bench`` on them with ``--int8-forms --concurrency 2``. Ratios from one interleaved run
are what holds on a shared machine; record the output with the date, CPU and load it prints.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from edgepipe.bench.report import BenchReport, render_text  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="Also write the JSON result here.")
    parser.add_argument("--budget", type=float, default=10.0, help="Seconds of single-stream timing in all.")
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("edgepipe"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "artifacts"
        subprocess.run([exe, "quantize", "--quiet", "-o", str(out)], check=True, capture_output=True)
        command = [exe, "bench", str(out), "--int8-forms", "--concurrency", "2", "--budget", str(args.budget),
                   "--samples", "1000", "--target", "host-cpu", "--json"]
        result = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    print(render_text(BenchReport.model_validate_json(result)))
    if args.json:
        args.json.write_text(result, encoding="utf-8")


if __name__ == "__main__":
    main()
