"""The held-out sequence models' data makers (tests/thirdparty/music.py, speech_frontends.py), without the models.

madmom's networks fix the width of their input: the band counts of the filterbank written here must be the
ones they take (266 for the beat BLSTM, 314 downbeats, 482 notes, 81 TCN beats, 105 key/chroma, 162 online
beats, 236 online onsets, 144 piano-note CNN), which checks the filterbank against madmom's own.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.thirdparty import music
from tests.thirdparty.audio import speech_like
from tests.thirdparty.speech_frontends import flashvad_features, int16_windows


@pytest.mark.parametrize(("features", "width"), [
    (music.BEATS, 266), (music.DOWNBEATS, 314), (music.NOTES, 482), (music.TCN_BEATS, 81), (music.KEY, 105),
    (music.ONLINE_BEATS, 162), (music.ONLINE_ONSETS, 236), (music.PIANO_NOTES, 144)])
def test_madmom_features_have_the_width_its_networks_take(features: music.Features, width: int) -> None:
    windows = music.feature_windows(features, 20, 2, seed=3)
    assert windows.shape == (2, 20, width) and windows.dtype == np.float32
    assert np.isfinite(windows).all() and windows.max() > 0.5, "music-like audio gives a non-trivial spectrum"


def test_deep_chroma_stacks_fifteen_frames() -> None:
    assert music.feature_windows(music.CHROMA, 10, 1, context=7).shape == (1, 10, 15 * 105)


def test_music_is_deterministic_per_seed() -> None:
    assert np.array_equal(music.music_like(0.5, seed=1), music.music_like(0.5, seed=1))
    assert not np.array_equal(music.music_like(0.5, seed=1), music.music_like(0.5, seed=2))


def test_flashvad_features_separate_speech_from_silence() -> None:
    """43 features per 10 ms frame; the log RMS (feature 40) is higher in the vowels than in the pauses."""
    wave = speech_like(1.8, seed=0)  # 1.2 s of syllables, then 0.6 s of near-silence
    features = flashvad_features(wave)
    assert features.shape[1] == 43 and np.isfinite(features).all()
    assert features[20:100, 40].mean() > features[130:170, 40].mean() + 1.5


def test_int16_windows_use_the_full_range() -> None:
    windows = int16_windows(1600, 3, seed=0)
    assert windows.shape == (3, 1, 1, 1600) and windows.dtype == np.int16
    assert (np.abs(windows.reshape(3, -1)).max(axis=1) == 32767).all()
