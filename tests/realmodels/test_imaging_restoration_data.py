"""Held-out image restoration models: super-resolution, style transfer and camera raw demosaicking
(tests/realmodels/models/imaging_restoration.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.imaging_restoration import (
    BORDER,
    CUNET_PAD,
    PATTERNS,
    SIDE,
    SR_WINDOW,
    STYLE_COUNT,
    STYLE_SIDE,
    colour_photos,
    demo_feeder,
    demosaicnet_modules,
    drawing,
    export_bayer,
    export_xtrans,
    mosaics_with_truth,
    photo_cut,
    square_view,
    sr_windows,
    style_core,
    style_feed,
    style_photos,
)


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported or shipped) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def _luminance(image: np.ndarray) -> np.ndarray:
    """(32, 32) box-filtered mean of the channels of a (1, 3, H, W) image."""
    from PIL import Image

    return np.asarray(Image.fromarray(image[0].mean(axis=0)).resize((32, 32), Image.Resampling.BOX))


def _bilinear(mosaic: np.ndarray) -> np.ndarray:
    """A classical baseline: each channel's missing pixels by normalized convolution with a 3x3 bilinear kernel."""
    from scipy.ndimage import convolve

    kernel = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32)
    planes = []
    for channel in mosaic:
        weight = convolve((channel != 0).astype(np.float32), kernel, mode="mirror")
        planes.append(convolve(channel, kernel, mode="mirror") / np.maximum(weight, 1e-6))
    return np.stack(planes)


def test_waifu2x_windows_are_padded_as_its_output_lines_up() -> None:
    """``SR.run`` adds each window's 2x output at twice its place: with the right padding (18 for CUNet) the
    output is the window itself, upscaled, and matches a nearest-neighbour 2x of it far better than a copy moved by
    one pixel does; the windows cover the whole image."""
    import onnxruntime as ort

    bgr = np.ascontiguousarray(drawing(np.random.default_rng(3), (300, 260))[:, :, ::-1])
    windows = sr_windows(bgr, CUNET_PAD)
    assert len(windows) == 4 and all(w.shape == (1, 3, SR_WINDOW + 2 * CUNET_PAD, SR_WINDOW + 2 * CUNET_PAD)
                                     for w in windows)
    session = ort.InferenceSession(str(BY_NAME["waifu2x_cunet"].fetch()), providers=["CPUExecutionProvider"])
    out = session.run(None, {"image": windows[0]})[0][0]
    assert out.shape == (3, 2 * SR_WINDOW, 2 * SR_WINDOW)
    inner = windows[0][0, :, CUNET_PAD:-CUNET_PAD, CUNET_PAD:-CUNET_PAD]
    nearest = np.repeat(np.repeat(inner, 2, axis=1), 2, axis=2)
    aligned = np.abs(out - nearest).mean()
    assert aligned < 0.02 and aligned < 0.5 * np.abs(out[:, 2:, 2:] - nearest[:, :-2, :-2]).mean()


@pytest.mark.parametrize("name", ["waifu2x_cunet", "waifu2x_upconv7"])
def test_waifu2x_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(spec.name for spec in session.get_inputs()) == sorted(shapes)
    feed = {}
    for key, value in first.items():
        # Batch-major inputs hold (N, *shape[1:]); recurrent states and caches whose first dimension is not a batch
        # hold the whole tensor per sample, (N, *shape).
        whole = list(value.shape[1:]) == shapes[key]
        assert whole or list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key])
        feed[key] = value[0] if whole else value[:1]
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")


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


@pytest.mark.parametrize("name", ["styletransfer_26"])
def test_styletransfer_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    # photographs in [0, 1] and style weights summing to 1, one style or a blend of two
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


def test_feed_is_what_the_packages_demo_feeds() -> None:
    """The demo cuts the image to a multiple of 6, scales it to [0, 1], makes it channel-first and keeps each
    channel's pixels of the Bayer (``G r / b G``) and X-Trans patterns, a batch of one; the mosaics are the
    package's own masks times the image."""
    photo = colour_photos()["astronaut"]
    with demo_feeder() as feed:
        fed = feed(photo[:130, :200])
    with demosaicnet_modules() as modules:
        image = photo[:126, :198].transpose(2, 0, 1).astype(np.float32) / 255
        bayer_mask = modules["mosaic"].bayer(np.ones_like(image), return_mask=True)
        xtrans_mask = modules["mosaic"].xtrans(np.ones_like(image), return_mask=True)
    assert fed["bayer"].shape == fed["xtrans"].shape == (1, 3, 126, 198)
    assert fed["bayer"].dtype == fed["xtrans"].dtype == np.float32
    np.testing.assert_array_equal(fed["bayer"][0], image * bayer_mask)
    np.testing.assert_array_equal(fed["xtrans"][0], image * xtrans_mask)
    # one colour per pixel: green on the Bayer diagonal (half the pixels), 20 of 36 green in an X-Trans cell
    assert (bayer_mask.sum(axis=0) == 1).all() and (xtrans_mask.sum(axis=0) == 1).all()
    assert bayer_mask[1].mean() == 0.5 and bayer_mask[1, 0, 0] == 1 and bayer_mask[0, 0, 1] == 1
    assert xtrans_mask[1, :6, :6].sum() == 20 and xtrans_mask[0, :6, :6].sum() == xtrans_mask[2, :6, :6].sum() == 8


def test_cuts_are_textured_on_the_pattern_grid_and_deterministic() -> None:
    photos = colour_photos()
    assert len(photos) == 8 and all(p.dtype == np.uint8 and p.ndim == 3 for p in photos.values())
    for seed, name in enumerate(sorted(photos)):
        cut = photo_cut(photos[name], seed)
        assert cut.shape == (SIDE, SIDE, 3) and np.array_equal(cut, photo_cut(photos[name], seed))
    samples = mosaics_with_truth(8, 3)
    spreads = [s["rgb"].mean(axis=0).std() for s in samples]
    assert min(spreads) > 0.03 and np.median(spreads) > 0.05, spreads
    for sample in samples:
        for pattern in PATTERNS:
            assert sample[pattern].shape == (1, 3, SIDE, SIDE)
            # the mosaic is the truth where its pattern has the pixel, zero elsewhere
            kept = sample[pattern][0] != 0
            np.testing.assert_array_equal(sample[pattern][0][kept], sample["rgb"][kept])


@pytest.mark.parametrize("pattern", PATTERNS)
def test_demosaicking_rebuilds_the_photographs(pattern: str) -> None:
    """On 16 cuts (each photograph twice), the registered model's output is the centre of the photograph cut: PSNR
    above 30 dB on each (34-54 seen) and 5 dB above bilinear interpolation on average (6.9 X-Trans, 7.7 Bayer seen),
    which it beats on at least 12 of 16 (13 and 15 seen; it loses only on near-flat cuts, where both are above 46
    dB)."""
    session = _session(f"demosaicnet_{pattern}")
    border = BORDER[pattern]
    inner = (slice(None), slice(border, -border), slice(border, -border))
    ours, baseline = [], []
    for sample in mosaics_with_truth(16, 21):
        out = session.run(["rgb"], {"mosaic": sample[pattern]})[0]
        assert out.shape == (1, 3, SIDE - 2 * border, SIDE - 2 * border)
        truth = sample["rgb"][inner]
        ours.append(-10 * np.log10(((np.clip(out[0], 0, 1) - truth) ** 2).mean()))
        baseline.append(-10 * np.log10(((np.clip(_bilinear(sample[pattern][0])[inner], 0, 1) - truth) ** 2).mean()))
    ours_, baseline_ = np.array(ours), np.array(baseline)
    assert ours_.min() > 30, ours
    assert (ours_ - baseline_).mean() > 5, (ours, baseline)
    assert (ours_ > baseline_).sum() >= 12, (ours, baseline)


def test_exports_are_the_packages_networks() -> None:
    """The registered models compute what the package's own networks (built and loaded by its code) compute."""
    import torch

    sample = mosaics_with_truth(1, 5)[0]
    with demosaicnet_modules() as modules:
        networks = {"bayer": modules["modules"].BayerDemosaick(), "xtrans": modules["modules"].XTransDemosaick()}
    for pattern, network in networks.items():
        with torch.no_grad():
            expected = network.eval()(torch.from_numpy(sample[pattern])).numpy()
        got = _session(f"demosaicnet_{pattern}").run(["rgb"], {"mosaic": sample[pattern]})[0]
        np.testing.assert_allclose(got, expected, atol=1e-4)


@pytest.mark.parametrize("name", ["demosaicnet_bayer", "demosaicnet_xtrans"])
def test_demosaicnet_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / f"model{model.suffix}"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    calibration = dict(np.load(tmp_path / "a" / "calibration.npz"))
    for key, value in first.items():
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key]) and np.isfinite(value).all()
        assert len(calibration[key]) == zoo.SMALL.calibration and not np.array_equal(calibration[key], value)
        assert np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) == set(specs)
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
        assert value.dtype == np.float32 and value.min() == 0 and 0.5 < value.max() <= 1.0
        # a mosaic: one of three channels per pixel, the others zero
        assert ((value != 0).sum(axis=1) <= 1).all()
    rows = [{key: value[k : k + 1] for key, value in first.items()} for k in range(len(first[next(iter(first))]))]
    outputs = np.concatenate([session.run(None, row)[0] for row in rows[:2]])
    assert np.isfinite(outputs).all() and np.ptp(outputs) > 0


def test_cached_models_are_this_modules_exports(tmp_path: Path) -> None:
    """The registered files are the exports of this module (the cache holds what ``export`` wrote)."""
    import onnx

    for name, export in (("demosaicnet_bayer", export_bayer), ("demosaicnet_xtrans", export_xtrans)):
        export(tmp_path / f"{name}.onnx")
        fresh, registered = onnx.load(str(tmp_path / f"{name}.onnx")), onnx.load(str(BY_NAME[name].fetch()))
        assert [n.op_type for n in fresh.graph.node] == [n.op_type for n in registered.graph.node]
        assert [i.name for i in fresh.graph.input] == [i.name for i in registered.graph.input]
