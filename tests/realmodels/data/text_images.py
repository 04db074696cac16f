"""Rendered text for the OCR models of the zoo: text lines, rotated lines with honest labels, document pages.

Everything is drawn with Pillow's bundled font (``ImageFont.load_default(size)``), so the
images are the same on every machine and nothing is downloaded. The words are real English
prose (the docstrings of Python's standard library modules, read from disk).

- ``write_text_lines``: one line of dark text on a light, slightly textured background per file;
- ``write_rotated_lines``: the same lines upright (class 0) and turned 180° (class 1), one
  sub-folder per class: what the PP-OCR direction classifiers decide;
- ``write_pages``: document pages (a title, paragraphs, a photograph, a table grid) for text
  detectors and layout models.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import textwrap
from pathlib import Path

import numpy as np

#: Standard-library modules whose docstrings give the words (plain English prose, present on every Python).
_MODULES = ("json", "csv", "wave", "zipfile", "textwrap", "difflib", "statistics", "fractions", "argparse",
            "logging", "shutil", "pathlib", "tarfile", "calendar", "heapq")


@functools.cache
def _prose_words() -> tuple[str, ...]:
    words: list[str] = []
    for name in _MODULES:
        source = inspect.getsource(importlib.import_module(name))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 40:
                words.extend(w for w in node.value.split() if w.isprintable() and len(w) < 16)
    return tuple(words)


@functools.cache
def _wrapped(width: int) -> tuple[str, ...]:
    return tuple(line for line in textwrap.wrap(" ".join(_prose_words()), width) if len(line) > width // 2)


def prose_lines(count: int, width: int = 28, seed: int = 0) -> list[str]:
    """``count`` lines of at most ``width`` characters from standard-library docstrings, in a seeded order."""
    lines = _wrapped(width)
    rng = np.random.default_rng(seed)
    return [lines[i] for i in rng.choice(len(lines), size=count, replace=False)]


def _chars_per_line(size: tuple[int, int]) -> int:
    """How many characters of a line fit an image of ``size`` = (height, width) at ~0.65 height font size."""
    return max(8, int(size[1] / (size[0] * 0.36)))


def _font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def _background(size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A light paper-like RGB background (H, W, 3): a tint plus faint noise."""
    height, width = size
    tint = rng.integers(200, 256, size=3)
    noise = rng.normal(0, 6, size=(height, width, 1))
    return np.clip(tint + noise, 0, 255).astype(np.uint8)


def text_line(text: str, size: tuple[int, int], rng: np.random.Generator):
    """One PIL image (RGB) of ``size`` = (height, width) pixels holding ``text`` in dark ink, left-aligned."""
    from PIL import Image, ImageDraw

    height, width = size
    image = Image.fromarray(_background(size, rng))
    draw = ImageDraw.Draw(image)
    font_size = int(height * rng.uniform(0.55, 0.75))
    font = _font(font_size)
    while font_size > 8 and draw.textlength(text, font=font) > width - 8:
        font_size -= 2
        font = _font(font_size)
    ink = tuple(int(v) for v in rng.integers(0, 70, size=3))
    top = (height - font_size) // 2 - 2
    draw.text((4 + int(rng.integers(0, 6)), top), text, fill=ink, font=font)
    return image


def write_text_lines(folder: Path, count: int, size: tuple[int, int], seed: int = 0) -> Path:
    """``count`` rendered text lines as ``line_NNN.png`` in ``folder``; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    for i, text in enumerate(prose_lines(count, width=_chars_per_line(size), seed=seed)):
        text_line(text, size, rng).save(folder / f"line_{i:03d}.png")
    return folder


def write_rotated_lines(folder: Path, count: int, size: tuple[int, int], seed: int = 0) -> Path:
    """Labelled folders for a direction classifier: ``0/`` upright lines and ``180/`` the same turned over.

    Half of the ``count`` lines go to each class; the class id is the folder's position in
    sorted order (``0`` → 0, ``180`` → 1), which is PP-OCR's label order (``['0', '180']``).
    """
    rng = np.random.default_rng(seed)
    texts = prose_lines(count, width=_chars_per_line(size), seed=seed + 100)
    for i, text in enumerate(texts):
        image = text_line(text, size, rng)
        label = "0" if i % 2 == 0 else "180"
        if label == "180":
            image = image.rotate(180)
        (folder / label).mkdir(parents=True, exist_ok=True)
        image.save(folder / label / f"line_{i:03d}.png")
    return folder


def page(size: tuple[int, int], photo: np.ndarray, rng: np.random.Generator):
    """A document page (RGB, ``size`` = (height, width)): a title, paragraphs, a photograph and a table."""
    from PIL import Image, ImageDraw

    height, width = size
    image = Image.new("RGB", (width, height), tuple(int(v) for v in rng.integers(235, 256, size=3)))
    draw = ImageDraw.Draw(image)
    margin, y = width // 12, height // 16
    draw.text((margin, y), prose_lines(1, width=24, seed=int(rng.integers(1 << 30)))[0].title(),
              fill=(10, 10, 10), font=_font(max(12, height // 28)))
    y += height // 12
    body = _font(max(9, height // 48))
    lines = prose_lines(40, width=max(20, width // max(6, height // 90)), seed=int(rng.integers(1 << 30)))
    photo_box = (width // 2, y + height // 8, width - margin, y + height // 8 + height // 4)
    thumb = Image.fromarray(photo).convert("RGB").resize((photo_box[2] - photo_box[0], photo_box[3] - photo_box[1]))
    image.paste(thumb, photo_box[:2])
    for line in lines:
        if y > height * 0.72:
            break
        right = photo_box[0] - 8 if photo_box[1] - 10 <= y <= photo_box[3] else width - margin
        text = line
        while text and draw.textlength(text, font=body) > right - margin:
            text = text[:-1]
        draw.text((margin, y), text, fill=(20, 20, 20), font=body)
        y += int(body.size * 1.6)
    rows, cols, top = 4, 3, int(height * 0.76)
    cell_h, cell_w = (height - top - margin) // rows, (width - 2 * margin) // cols
    for r in range(rows + 1):
        draw.line((margin, top + r * cell_h, margin + cols * cell_w, top + r * cell_h), fill=(0, 0, 0), width=1)
    for c in range(cols + 1):
        draw.line((margin + c * cell_w, top, margin + c * cell_w, top + rows * cell_h), fill=(0, 0, 0), width=1)
    for r in range(rows):
        for c in range(cols):
            draw.text((margin + c * cell_w + 4, top + r * cell_h + 3), f"{rng.integers(0, 1000)}",
                      fill=(0, 0, 0), font=body)
    return image


def write_pages(folder: Path, count: int, size: tuple[int, int], seed: int = 0) -> Path:
    """``count`` rendered document pages as ``page_NNN.png``, each with a different scikit-image photograph."""
    from tests.fixtures.images import sample_images

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    photos = list(sample_images().values())
    for i in range(count):
        page(size, photos[i % len(photos)], rng).save(folder / f"page_{i:03d}.png")
    return folder
