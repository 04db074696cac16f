"""Generate the regressions the gate tests inject: the reference model with damaged weights.

Run as a script (``python tests/e2e/make_regressions.py OUT.keras``) so that the
test process itself does not import TensorFlow. The damage is Gaussian noise
(half the weights' standard deviation, fixed seed) on the classifier's weights:
float and int8 accuracy both fall by several points, so the build's own
float→int8 gate still passes and only a baseline comparison can catch it.
"""

from __future__ import annotations

import sys
from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[2] / "models" / "digits_cnn" / "digits_cnn.keras"
NOISE = 0.5
SEED = 0


def damaged_model(out: Path) -> Path:
    """Write the reference model with noisy classifier weights to ``out`` (a ``.keras`` file)."""
    import keras
    import numpy as np

    model = keras.saving.load_model(REFERENCE, compile=False, safe_mode=True)
    logits = model.get_layer("logits")
    weights = logits.get_weights()
    rng = np.random.default_rng(SEED)
    weights[0] = weights[0] + rng.normal(0.0, NOISE * weights[0].std(), weights[0].shape).astype(weights[0].dtype)
    logits.set_weights(weights)
    model.save(out)
    return out


if __name__ == "__main__":
    damaged_model(Path(sys.argv[1]))
