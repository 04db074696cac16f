"""Vela's own estimate against edgepipe's cost model for the Ethos-U targets, on the reference models.

    python benchmarks/vela_vs_cost_model.py [--write]

Quantizes each reference model (``edgepipe quantize``), runs the Ethos-U prediction (Vela compiles the int8
TFLite; its cycle count is the vendor estimate) and prints edgepipe's cost model at the same clock beside it.
Vela and the cost model are deterministic, so one run per pair. ``--write`` puts the table into
benchmarks/results/performance.md between the script's markers.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from doc_sections import PERFORMANCE_MD, provenance, write_section  # noqa: E402

from edgepipe.perf.predict import predict  # noqa: E402
from edgepipe.targets import load_profile  # noqa: E402
from edgepipe.versions import package_version  # noqa: E402

MODELS = ("digits_cnn", "digits_nobn")
CALIBRATION = ROOT / "calib" / "digits" / "calibration.npz"
TARGETS = ("ethos-u55", "ethos-u85")


def rows(scratch: Path) -> list[str]:
    exe = Path(sys.executable).with_name("edgepipe")
    out = []
    for model in MODELS:
        folder = scratch / model
        subprocess.run([str(exe), "quantize", "--quiet", "--model", str(ROOT / "models" / model / f"{model}.keras"),
                        "--calib", str(CALIBRATION), "-o", str(folder)], check=True, capture_output=True)
        for target in TARGETS:
            vela = predict(folder / "model_int8.tflite", load_profile(target)).vela
            if vela is None:
                raise SystemExit(f"{target}: no Vela estimate (is the [vela] extra installed?)")
            out.append(f"| {model} | {target} ({vela.accelerator}, {vela.clock_mhz:g} MHz) | {vela.cycles:,} | "
                       f"{vela.vela_ms:.4g} | {vela.edgepipe_ms:.4g} | {vela.ratio:.2f} |")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="Write the table into benchmarks/results/performance.md.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        table = rows(Path(tmp))
    vela = package_version("ethos-u-vela")
    text = "\n".join([provenance("vela_vs_cost_model.py", f"1 per model × target (both deterministic); Vela {vela}"),
                      "", "| model | target | Vela cycles (vendor estimate) | Vela (ms) | "
                      "edgepipe (ms, model estimate) | edgepipe ÷ Vela |", "|---|---|---|---|---|---|", *table])
    print(text)
    if args.write:
        write_section(PERFORMANCE_MD, "vela_vs_cost_model.py", text)


if __name__ == "__main__":
    main()
