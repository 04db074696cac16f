"""Write the bundled digits splits to calib/digits/ (deterministic; no download).

Source: scikit-learn's bundled copy of the UCI handwritten digits (1,797 real 8x8
images, 16 grey levels). Preprocessing: pixel / 16.0 as float32, layout NHWC
(N, 8, 8, 1). Four disjoint, class-stratified splits:

- train (1,000): training the float model, and QAT fine-tuning;
- calibration (200): PTQ calibration;
- selection (197): choosing among calibration settings (never the gate's data);
- evaluation (400): the accuracy gate, with labels.

Run: ``python models/digits_cnn/make_data.py`` (rewrites calib/digits/ and its manifest).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

OUT = Path(__file__).resolve().parents[2] / "calib" / "digits"
SEED = 0
SIZES = {"evaluation": 400, "selection": 197, "calibration": 200}  # the rest (1,000) is train


def split_digits() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The four disjoint splits as (images NHWC float32 in [0, 1], labels int64)."""
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0)[..., np.newaxis]
    y = digits.target.astype(np.int64)
    splits: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    rest_x, rest_y = x, y
    for name, size in SIZES.items():
        rest_x, part_x, rest_y, part_y = train_test_split(
            rest_x, rest_y, test_size=size, random_state=SEED, stratify=rest_y
        )
        splits[name] = (part_x, part_y)
    splits["train"] = (rest_x, rest_y)
    return splits


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = {
        "source": "sklearn.datasets.load_digits (UCI ML hand-written digits, 1,797 images)",
        "preprocessing": "pixel / 16.0, float32, range [0, 1]",
        "layout": "NHWC",
        "seed": SEED,
        "splits": {},
    }
    for name, (x, y) in split_digits().items():
        path = OUT / f"{name}.npz"
        np.savez(path, input=x, labels=y)
        manifest["splits"][name] = {
            "file": path.name,
            "arrays": {"input": {"shape": list(x.shape), "dtype": str(x.dtype)},
                       "labels": {"shape": list(y.shape), "dtype": str(y.dtype)}},
            "count": int(len(x)),
            "sha256": sha256(path),
        }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps({k: v["count"] for k, v in manifest["splits"].items()}))


if __name__ == "__main__":
    main()
