"""Held-out batch 11 (tests/thirdparty/heldout_batch11.py): registered and held out on every target, its data made
as each package feeds its model, deterministic and shaped as each model reads them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch11 import BATCH11_MODELS, CUNET_PAD, SR_WINDOW, drawing, dvector, sr_windows, voice

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]


#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {"gtcrn_enhancement": ["rk3588", "rk3576"], "voicefilter_embedder": ["mobile-npu"],
                               "voicefilter_mask": ["mobile-npu"]}


def test_batch11_is_registered_held_out_on_every_target() -> None:
    for model in BATCH11_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


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


def test_dvectors_tell_the_warped_voices_apart() -> None:
    """The package's d-vector of the mel windows made here: two utterances of one voice are closer than two voices
    (a front end the embedder did not learn on would not separate them)."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(BY_NAME["voicefilter_embedder"].fetch()), providers=["CPUExecutionProvider"])
    low = [dvector(session, voice(2.4, seed, 0.85)) for seed in (1, 11)]
    high = [dvector(session, voice(2.4, seed, 1.2)) for seed in (2, 12)]
    same = min(float(low[0] @ low[1]), float(high[0] @ high[1]))
    assert same > float(low[0] @ high[0]) + 0.1 and same > float(low[1] @ high[1]) + 0.1


@pytest.mark.parametrize("name", [model.name for model in BATCH11_MODELS])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
