"""Held-out batch 16 (tests/thirdparty/heldout_batch16.py): registered and held out on every target, its data made
as each package feeds its model (musicnn: its ``batch_data`` with NumPy 1's arithmetic), deterministic and shaped as
each model reads them, and each model doing its job on them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch16 import (
    BATCH16_MODELS,
    MUSIC_KINDS,
    MUSICNN_FRAMES,
    MUSICNN_MELS,
    SPLICE_CONTEXT,
    SPLICE_DISTANCE,
    SPLICE_LENGTH,
    STYLE_COUNT,
    STYLE_SIDE,
    cispliceai_modules,
    cispliceai_predictor,
    gene_like,
    music_clip,
    musicnn_graph,
    musicnn_labels,
    musicnn_modules,
    musicnn_patches,
    splice_feeds,
    splice_variant,
    square_view,
    style_core,
    style_feed,
    style_photos,
    tensorflow_stand_in,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]

#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {
    "musicnn_mtt": ["rk3588", "rk3576"],
    "cispliceai": ["rk3588", "rk3576"],
    "styletransfer_26": ["mobile-npu", "rk3588", "rk3576"],
}


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported or shipped) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_batch16_is_registered_held_out_on_every_target() -> None:
    for model in BATCH16_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


# --------------------------------------------------------------------------------------------- musicnn


def test_music_patches_are_what_the_packages_extractor_cuts() -> None:
    """The wheel's ``batch_data`` (librosa's load and Mel spectrogram as here) cuts 187-frame patches of a clip
    every 187 frames: on quiet audio, where float16 holds ``10000 x``, they are ours to float16's resolution; at an
    ordinary level NumPy 2 makes its product overflow to inf, which ours (NumPy 1's float32 product) does not."""
    with musicnn_modules(tensorflow_stand_in(), ("configuration", "extractor")) as modules:
        extractor = modules["extractor"]
        frames = extractor.librosa.time_to_frames(3, sr=16000, n_fft=512, hop_length=256) + 1
        assert frames == MUSICNN_FRAMES
        clip = music_clip("band", 3)
        theirs, _ = extractor.batch_data(0.05 * clip, frames, frames)
        ours = musicnn_patches(0.05 * clip)
        assert ours.shape == theirs.shape == (2, MUSICNN_FRAMES, MUSICNN_MELS) and ours.dtype == np.float32
        np.testing.assert_allclose(ours, theirs.astype(np.float32), atol=5e-3)
        with np.errstate(over="ignore"):
            loud, _ = extractor.batch_data(clip, frames, frames)
    assert np.isinf(loud).any() and np.isfinite(musicnn_patches(clip)).all()


def test_musicnn_export_is_the_packages_graph() -> None:
    """The ONNX export gives the tags the package's graph (its checkpoint restored, run by TensorFlow) gives."""
    import tensorflow as tf

    patch = musicnn_patches(music_clip("piano", 5))[:1]
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(musicnn_graph(), name="")
        with tf.compat.v1.Session(graph=graph) as session:
            want = session.run("model/tags:0", {"model/log_mel:0": patch})
    got = _session("musicnn_mtt").run(["tags"], {"log_mel": patch})[0]
    np.testing.assert_allclose(got, want, atol=1e-5)


#: The tags each kind of clip should bring out.
KIND_TAGS = {"band": ("beat", "drums", "electronic", "techno"), "piano": ("piano",), "strings": ("strings", "violin")}


def test_musicnn_tags_each_kind_of_music_as_it_sounds() -> None:
    """Averaged over both patches of four clips of each kind, the strongest of a kind's own tags (beat, drums,
    electronic or techno for the band; piano; strings or violin) scores above 0.15 on it and more than three times
    what it scores on either other kind."""
    session, labels = _session("musicnn_mtt"), musicnn_labels()
    means = {}
    for kind in MUSIC_KINDS:
        patches = np.concatenate([musicnn_patches(music_clip(kind, seed)) for seed in range(100, 104)])
        means[kind] = np.mean([session.run(["tags"], {"log_mel": p[None]})[0][0] for p in patches], axis=0)
    for kind, tags in KIND_TAGS.items():
        columns = [labels.index(tag) for tag in tags]
        score = {other: float(means[other][columns].max()) for other in MUSIC_KINDS}
        others = max(value for other, value in score.items() if other != kind)
        assert score[kind] > 0.15 and score[kind] > 3 * others, (kind, score)


# --------------------------------------------------------------------------------------------- CI-SpliceAI


def test_splice_windows_are_what_the_packages_annotator_cuts() -> None:
    """REF and ALT windows of 10102 one-hot rows differ only at the variant; rows outside the gene are N (all
    zero); the minus-strand window, reverse-complemented by the package, is the plus-strand one starting one base
    earlier on the gene (the base that makes the 10101 nt even is taken at the chromosome's right end)."""
    gene = gene_like(11)
    index, alt = splice_variant(gene, "donor_loss", np.random.default_rng(0))
    with cispliceai_modules() as modules:
        plus, minus = (splice_feeds(modules, gene, strand, index, alt) for strand in "+-")
    for (ref, var), row in (
        (plus, SPLICE_DISTANCE + SPLICE_CONTEXT // 2),
        (minus, SPLICE_DISTANCE + SPLICE_CONTEXT // 2 + 1),
    ):
        assert ref.shape == var.shape == (SPLICE_LENGTH, 4) and ref.dtype == np.float32
        assert list(np.flatnonzero((ref != var).any(axis=1))) == [row]
        assert var[row].argmax() == "ACGT".index(alt)
    start = index - SPLICE_CONTEXT // 2 - SPLICE_DISTANCE  # gene index of the plus window's first row
    inside = (np.arange(SPLICE_LENGTH) + start >= gene.start) & (np.arange(SPLICE_LENGTH) + start < gene.end)
    np.testing.assert_array_equal(plus[0].sum(axis=1), inside.astype(np.float32))
    np.testing.assert_array_equal(minus[0][1:], plus[0][:-1])


def test_cispliceai_export_is_what_the_package_predicts() -> None:
    """The export on a REF and ALT pair gives what the package's own ``CISpliceAI.predict`` (its frozen graph run
    by TensorFlow) gives for the pair."""
    gene = gene_like(12)
    with cispliceai_modules() as modules:
        feeds = splice_feeds(modules, gene, "+", *splice_variant(gene, "acceptor_loss", np.random.default_rng(1)))
    want = cispliceai_predictor().predict(feeds)
    session = _session("cispliceai")
    for feed, theirs in zip(feeds, want):
        got = session.run(["splice_probs"], {"one_hot": feed[None]})[0][0]
        assert got.shape == theirs.shape == (2 * SPLICE_DISTANCE + 2, 3)
        np.testing.assert_allclose(got, theirs, atol=1e-5)


def test_cispliceai_finds_the_planted_sites_and_loses_them_with_their_gt_or_ag() -> None:
    """On three synthetic genes (the strands alternating), the planted donor (acceptor) whose GT (AG) a variant
    breaks is the window's top donor (acceptor) on REF, above 0.5 in at least two of the three; with the G changed its
    probability there falls below 0.25 in all."""
    session, rng = _session("cispliceai"), np.random.default_rng(2)
    with cispliceai_modules() as modules:
        for kind, column, offset in (("donor_loss", 2, -1), ("acceptor_loss", 1, 1)):
            before = []
            for seed in range(20, 23):
                gene, strand = gene_like(seed), "+-"[seed % 2]
                ref, var = splice_feeds(modules, gene, strand, *splice_variant(gene, kind, rng))
                site = SPLICE_DISTANCE + offset + (strand == "-")
                probs = [session.run(["splice_probs"], {"one_hot": x[None]})[0][0, :, column] for x in (ref, var)]
                assert probs[0].argmax() == site and probs[1][site] < 0.25, (kind, seed, probs[0][site], probs[1][site])
                before.append(probs[0][site])
            assert sum(p > 0.5 for p in before) >= 2, (kind, before)


# --------------------------------------------------------------------------------------------- style transfer


def test_style_feed_is_what_the_packages_stylize_feeds() -> None:
    """A 256-px view goes in as itself over 255 in NCHW; a larger one is fitted to 256 px; a blend's weights are
    normalized to sum to 1 on its two styles."""
    from PIL import Image

    core, photo = style_core(), style_photos()[0]
    view = photo.crop((0, 0, STYLE_SIDE, STYLE_SIDE))
    feed = style_feed(core, view, "7")
    np.testing.assert_array_equal(feed["image"][0], np.asarray(view, np.float32).transpose(2, 0, 1) / 255)
    assert feed["style_weights"].shape == (STYLE_COUNT,) and feed["style_weights"][7] == 1
    big = style_feed(core, photo, "3:1,12:3")
    fitted = photo.resize((STYLE_SIDE, STYLE_SIDE), Image.Resampling.LANCZOS)
    np.testing.assert_array_equal(big["image"][0], np.asarray(fitted, np.float32).transpose(2, 0, 1) / 255)
    assert np.flatnonzero(big["style_weights"]).tolist() == [3, 12] and big["style_weights"][12] == 0.75


def _luminance(image: np.ndarray) -> np.ndarray:
    """(32, 32) box-filtered mean of the channels of a (1, 3, H, W) image."""
    from PIL import Image

    return np.asarray(Image.fromarray(image[0].mean(axis=0)).resize((32, 32), Image.Resampling.BOX))


def test_styletransfer_keeps_the_content_and_paints_each_styles_palette() -> None:
    """On four photographs and three styles the output keeps the photo's layout (the 32 x 32 luminance correlates
    above 0.5) but not its colours: each style gives every photo nearly the same mean colour (within 0.03, where
    the photos' own differ by more than 0.1), and the styles' colours differ by more than 0.1. A 50/50 blend of two
    styles is nearer each of them than they are to each other."""
    session, core, photos, rng = _session("styletransfer_26"), style_core(), style_photos(), np.random.default_rng(0)
    views = [square_view(photos[i], rng) for i in (0, 1, 2, 4)]
    outputs, colours = {}, {}
    for style in ("0", "7", "19", "7:0.5,19:0.5"):
        for k, view in enumerate(views):
            feed = style_feed(core, view, style)
            outputs[style, k] = out = session.run(["stylized"], feed)[0]
            assert 0 <= out.min() and out.max() <= 1 and out.shape == feed["image"].shape
            assert np.corrcoef(_luminance(feed["image"]).ravel(), _luminance(out).ravel())[0, 1] > 0.5, (style, k)
            colours.setdefault(style, []).append(out[0].mean(axis=(1, 2)))
            colours.setdefault("photo", []).append(feed["image"][0].mean(axis=(1, 2)))
    spread = {key: float(np.abs(np.array(value) - np.mean(value, axis=0)).max()) for key, value in colours.items()}
    assert spread["photo"] > 0.1 and max(spread[style] for style in ("0", "7", "19")) < 0.03, spread
    means = {style: np.mean(colours[style], axis=0) for style in ("0", "7", "19")}
    assert min(np.abs(means[a] - means[b]).max() for a, b in (("0", "7"), ("0", "19"), ("7", "19"))) > 0.1, means
    for k in range(len(views)):
        apart = np.abs(outputs["7", k] - outputs["19", k]).mean()
        assert max(np.abs(outputs["7:0.5,19:0.5", k] - outputs[style, k]).mean() for style in ("7", "19")) < apart


# --------------------------------------------------------------------------------------------- all three


@pytest.mark.parametrize("name", [model.name for model in BATCH16_MODELS])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / f"model{model.suffix}"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    for key, value in first.items():
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key]) and np.isfinite(value).all()
        assert value.dtype == np.float32 and np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) <= set(specs)
    for key, value in first.items():
        want = shapes[key][1:] if key in shapes else specs[key].shape
        assert list(value.shape[1:]) == want, (key, value.shape)
    if name == "musicnn_mtt":  # log10(10000 x + 1) of a power: non-negative, up to a few
        assert 0 <= first["log_mel"].min() and 2 < first["log_mel"].max() < 8
    elif name == "cispliceai":  # one-hot bases, N rows all zero, every REF/ALT pair one base apart
        rows = first["one_hot"].sum(axis=2)
        assert set(np.unique(first["one_hot"])) <= {0, 1} and set(np.unique(rows)) <= {0, 1} and rows.mean() > 0.5
        assert all((first["one_hot"][k] != first["one_hot"][k + 1]).any(axis=1).sum() == 1 for k in range(0, 8, 2))
    else:  # photographs in [0, 1] and style weights summing to 1, one style or a blend of two
        weights = first["style_weights"]
        assert 0 <= first["image"].min() < first["image"].max() <= 1
        np.testing.assert_allclose(weights.sum(axis=1), 1, rtol=1e-6)
        assert [int((w > 0).sum()) for w in weights] == [1, 2] * (len(weights) // 2)
    feed = {
        key: value[0] if key not in shapes and value.ndim == len(specs[key].shape) + 1 else value[:1]
        for key, value in first.items()
    }
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)
