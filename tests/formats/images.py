"""Real photographs for calibration and evaluation: scikit-image's bundled sample images (offline).

``write_sample_images(folder)`` writes them as PNG files, the way a user hands edgepipe
a folder of images; tests then let ``[preprocess]`` turn the folder into model inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: Bundled colour and grey photographs (grey ones are stacked to RGB by Pillow on load).
SAMPLE_IMAGES = ("astronaut", "coffee", "chelsea", "rocket", "cat", "immunohistochemistry", "hubble_deep_field",
                 "retina", "colorwheel", "camera", "page", "brick", "coins", "moon", "clock", "text")


def sample_images() -> dict[str, np.ndarray]:
    """Name → uint8 image (H, W) or (H, W, 3)."""
    from skimage import data

    images = {}
    for name in SAMPLE_IMAGES:
        image = np.asarray(getattr(data, name)())
        images[name] = image[..., :3] if image.ndim == 3 else image
    return images


def write_sample_images(folder: Path) -> Path:
    """Write every sample image to ``folder`` as ``<name>.png``; returns the folder."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for name, image in sample_images().items():
        Image.fromarray(image).save(folder / f"{name}.png")
    return folder
