"""Image folders as calibration or evaluation data: the ``[preprocess]`` spec applied with Pillow.

Each image file is read, converted to RGB (or grayscale), resized to the model's
input size, scaled to 0..1, normalised with ``(x - mean) / std`` per channel, laid
out NHWC or NCHW and cast to the input's dtype. Files are taken in sorted name
order, so the same folder always gives the same array.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from edgepipe.errors import DataError
from edgepipe.tensors import TensorSpec

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
Layout = Literal["NHWC", "NCHW"]


@dataclass(frozen=True)
class ImageSpec:
    """How one image becomes one model input sample.

    ``size`` is (height, width) in pixels; ``mean``/``std`` apply to values scaled to 0..1
    (one value, or one per channel); ``dtype`` is the array's dtype (``uint8`` keeps 0..255).
    """

    size: tuple[int, int]
    layout: Layout = "NHWC"
    channels: int = 3
    mean: tuple[float, ...] = (0.0,)
    std: tuple[float, ...] = (1.0,)
    dtype: str = "float32"
    limit: int | None = None


def infer_layout(spec: TensorSpec) -> tuple[Layout, tuple[int, int], int]:
    """Layout, (height, width) and channels of a 4-D image input, from its shape (channels are 1, 3 or 4)."""
    shape = spec.shape
    if len(shape) != 4:
        raise ValueError(f"input {spec.name} has shape {shape}, not an image batch (N, H, W, C) or (N, C, H, W)")
    height: int | None
    width: int | None
    channels: int | None
    if shape[1] in (1, 3, 4) and shape[3] not in (1, 3, 4):
        layout: Layout = "NCHW"
        channels, height, width = shape[1], shape[2], shape[3]
    else:
        layout = "NHWC"
        height, width, channels = shape[1], shape[2], shape[3]
    if not (isinstance(height, int) and isinstance(width, int) and isinstance(channels, int)):
        raise ValueError(f"input {spec.name} has dynamic image dimensions {shape}; give preprocess.size")
    return layout, (height, width), channels


def image_files(folder: Path) -> list[Path]:
    """The image files directly in ``folder``, sorted by name."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


def load_image(path: Path, spec: ImageSpec) -> np.ndarray:
    """One preprocessed sample, shaped (H, W, C) or (C, H, W)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            converted = image.convert("L" if spec.channels == 1 else "RGB")
            resized = converted.resize((spec.size[1], spec.size[0]), Image.Resampling.BILINEAR)
            pixels = np.asarray(resized, dtype=np.float32)
    except (OSError, UnidentifiedImageError) as exc:
        raise DataError(f"cannot read image ({exc})", path=path, fix="Remove or replace the file") from None
    pixels = pixels.reshape(spec.size[0], spec.size[1], spec.channels)
    sample: np.ndarray
    if np.dtype(spec.dtype) == np.uint8:
        sample = pixels.astype(np.uint8)
    else:
        scaled = pixels / 255.0
        sample = ((scaled - np.asarray(spec.mean, np.float32)) / np.asarray(spec.std, np.float32))
        sample = sample.astype(spec.dtype)
    return np.transpose(sample, (2, 0, 1)) if spec.layout == "NCHW" else sample


def load_image_folder(folder: Path, spec: ImageSpec) -> np.ndarray:
    """Every image in ``folder`` preprocessed by ``spec``, stacked sample-major: (N, …)."""
    files = image_files(folder)[: spec.limit]
    if not files:
        raise DataError("folder holds no images (" + ", ".join(IMAGE_SUFFIXES) + ")", path=folder,
                        fix="Put the calibration images in the folder, or give a .npz")
    return np.stack([load_image(path, spec) for path in files])


def image_spec_for(spec: TensorSpec, config: Any) -> ImageSpec:
    """The :class:`ImageSpec` for model input ``spec``: the ``[preprocess]`` table, the rest from the input's shape."""
    layout, size, channels = infer_layout(spec)
    return ImageSpec(size=tuple(config.size) if config.size else size, layout=config.layout or layout,
                     channels=channels, mean=tuple(config.mean), std=tuple(config.std),
                     dtype=config.dtype or np.dtype(spec.dtype).name, limit=config.limit)
