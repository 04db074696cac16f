"""Held-out EEG models: sleep spindles, seizures and the labelling of independent components
(tests/realmodels/models/biosignals_eeg.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.data.eeg import background, with_seizure, with_spindles
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.biosignals_eeg import (
    EEG_CAP,
    EEG_RATE,
    EEG_SECONDS,
    IC_CLASSES,
    IC_SOURCES,
    IC_VIEWS,
    component_views,
    eeg_recording,
    iclabel_labeller,
)


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_eeg_events_carry_their_rhythms() -> None:
    """A spindle adds power at 11-16 Hz, a seizure at its 3 Hz discharge rate, over the 1/f background."""
    rng = np.random.default_rng(0)
    quiet = background(30, 250.0, rng)

    def band(signal: np.ndarray, lo: float, hi: float) -> float:
        freqs = np.fft.rfftfreq(len(signal), 1 / 250.0)
        return float((np.abs(np.fft.rfft(signal)) ** 2)[(freqs >= lo) & (freqs <= hi)].sum())

    assert band(with_spindles(quiet, 250.0, rng, 5), 11, 16) > 2 * band(quiet, 11, 16)
    assert band(with_seizure(quiet, 250.0, rng), 2, 4) > 2 * band(quiet, 2, 4)


@pytest.mark.parametrize("name", ["eeg_spindles", "eeg_seizure"])
def test_eeg_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:] and np.array_equal(value, again[key])
    outputs = session.run(None, {key: value[:1] for key, value in first.items()})
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")


def test_ic_feed_is_what_the_packages_feature_code_makes() -> None:
    """The package's ONNX backend feeds four rows per component (the map, negated, mirrored left to right, both;
    the spectra repeated), component c's rows every 12th; the features are its ``get_iclabel_features`` scaled by
    0.99: maps of peak 0.99 and zero outside the head, PSDs of peak 0.99, autocorrelations from a lag of 10 ms
    (negative there for the mains, positive for alpha)."""
    raw, ica = eeg_recording(3)
    assert raw.get_data().shape == (len(EEG_CAP), EEG_RATE * EEG_SECONDS) and np.abs(raw.get_data()).max() < 1e-3
    with iclabel_labeller() as feed:
        fed = feed(raw, ica)
        topo, psd, autocorr = feed.modules["iclabel.features"].get_iclabel_features(raw, ica)
    count = len(IC_SOURCES)
    assert {key: value.shape for key, value in fed.items()} == {
        "topo": (IC_VIEWS * count, 1, 32, 32), "psds": (IC_VIEWS * count, 1, 1, 100),
        "autocorr": (IC_VIEWS * count, 1, 1, 100)}
    assert all(value.dtype == np.float32 for value in fed.values())
    maps = np.transpose(topo, (3, 2, 0, 1))
    np.testing.assert_array_equal(fed["topo"][:count], maps)
    np.testing.assert_array_equal(fed["topo"][count : 2 * count], -maps)
    np.testing.assert_array_equal(fed["topo"][2 * count : 3 * count], maps[..., ::-1])
    np.testing.assert_array_equal(fed["topo"][3 * count :], -maps[..., ::-1])
    for view in range(IC_VIEWS):
        np.testing.assert_array_equal(fed["psds"][view * count : (view + 1) * count], np.transpose(psd, (3, 2, 0, 1)))
        np.testing.assert_array_equal(fed["autocorr"][view * count : (view + 1) * count],
                                      np.transpose(autocorr, (3, 2, 0, 1)))
    np.testing.assert_allclose(np.abs(fed["topo"]).max(axis=(1, 2, 3)), 0.99, rtol=1e-6)
    assert fed["topo"][0, 0, 0, 0] == 0 and fed["topo"][0, 0, 16, 16] != 0  # the corners lie outside the head
    np.testing.assert_allclose(np.abs(fed["psds"]).max(axis=(1, 2, 3)), 0.99, rtol=1e-6)
    lag_10ms = fed["autocorr"][:count, 0, 0, 0]  # mains: half a 50 Hz (or 0.6 of a 60 Hz) cycle; alpha: a tenth
    assert np.abs(fed["autocorr"]).max() < 1.2 and lag_10ms[3] < 0 < lag_10ms[6]
    views = component_views(fed, 2)
    np.testing.assert_array_equal(views["topo"], fed["topo"][2::count])


def test_iclabel_labels_the_components_by_what_made_them() -> None:
    """On six recordings: the blinks and the saccades are eye, the mains line noise, the temporalis muscle, each
    with probability above 0.8; the ECG is heart in at least five; at least 90 % of the cortical components are
    brain; and the loose electrode's channel-noise probability is the highest of the twelve in at least four, the
    second highest at worst (its label itself wavers: ICLabel calls a lone electrode's drift and pops channel noise,
    other, brain or muscle, so the label is not asserted)."""
    session = _session("iclabel")
    kinds = [kind for kind, _ in IC_SOURCES]
    heart = brain = brains = loose_first = 0
    with iclabel_labeller() as feed:
        for seed in range(40, 46):
            fed = feed(*eeg_recording(seed))
            probs = np.concatenate([session.run(["labels"], component_views(fed, c))[0]
                                    for c in range(len(IC_SOURCES))])
            for component, kind in enumerate(kinds):
                if kind in ("eye", "line_noise", "muscle"):
                    assert probs[component, IC_CLASSES.index(kind)] > 0.8, (seed, IC_SOURCES[component])
            heart += int(probs[kinds.index("heart")].argmax() == IC_CLASSES.index("heart"))
            cortical = [c for c, kind in enumerate(kinds) if kind == "brain"]
            brain += int((probs[cortical].argmax(axis=1) == 0).sum())
            brains += len(cortical)
            noise = probs[:, IC_CLASSES.index("channel_noise")]
            above = int((noise > noise[kinds.index("channel_noise")]).sum())
            assert above <= 1, (seed, noise)
            loose_first += int(above == 0)
    assert heart >= 5 and brain / brains >= 0.9 and loose_first >= 4, (heart, brain, brains, loose_first)


def test_iclabel_batch_of_four_is_the_packages_mean_over_views() -> None:
    """The network takes a component's four views and answers one row: the package's whole feed (12 components,
    48 rows) gives the rows the per-component (4, ...) inputs give."""
    session = _session("iclabel")
    with iclabel_labeller() as feed:
        fed = feed(*eeg_recording(7))
    whole = session.run(["labels"], fed)[0]
    single = np.concatenate([session.run(["labels"], component_views(fed, c))[0] for c in range(len(IC_SOURCES))])
    assert whole.shape == (len(IC_SOURCES), len(IC_CLASSES))
    np.testing.assert_allclose(single, whole, atol=1e-6)
    np.testing.assert_allclose(whole.sum(axis=1), 1, atol=1e-5)


@pytest.mark.parametrize("name", ["iclabel"])
def test_iclabel_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
        assert np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) == set(specs)
    # each sample is a whole (4, ...) input: one component's four views
    for key, value in first.items():
        assert value.dtype == np.float32 and list(value.shape[1:]) == shapes[key], (key, value.shape)
    np.testing.assert_array_equal(first["topo"][:, 1], -first["topo"][:, 0])
    outputs = [np.concatenate([session.run(None, {key: value[k] for key, value in first.items()})[0]
                               for k in range(len(first["topo"]))])]
    assert outputs[0].shape == (zoo.SMALL.evaluation, len(IC_CLASSES))
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)
