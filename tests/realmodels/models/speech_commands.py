"""Held-out speech-command models: a Teachable Machine keyword classifier on raw audio.

- word-activation-recognition 0.1.1: a Teachable Machine speech-commands model shipped as float TFLite
  (``star_trek_activation_phrase_v2.tflite``): 44,032 samples of raw 44.1 kHz audio in (about 1 s), its front end in
  the graph (framing by SLICE and PACK, RFFT2D, COMPLEX_ABS, LOG, a per-utterance normalisation by MEAN,
  SQUARED_DIFFERENCE and SQRT), four CONV_2D with MAX_POOL_2D, two FULLY_CONNECTED and a SOFTMAX over three classes
  (background noise, "annuler", "ordinateur"). On speech-like audio made at 16 kHz and resampled to 44.1 kHz, as
  the package's audio stream feeds its ring buffer.
"""

from __future__ import annotations

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.data.audio import RATE, waveform_windows

_npz = zoo._npz  # noqa: SLF001

_WAR = "word_activation_recognition/"
WORD_ACTIVATION = fetch.Wheel(
    requirement="word-activation-recognition==0.1.1",
    filename="word_activation_recognition-0.1.1-py3-none-any.whl",
    sha256="b49b40579f0edc3938269b336da1b5e62729702de7a6251d83ef46d8abf07ca2",
    members=(_WAR + "models/star_trek_activation_phrase_v2.tflite",),
)

#: The model's input: samples of 44.1 kHz audio.
COMMAND_SAMPLES, COMMAND_RATE = 44_032, 44_100


def command_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """audio_preproc_input (N, 44032) float32: windows of speech-like audio, resampled from 16 kHz to 44.1 kHz."""
    from scipy.signal import resample_poly

    need = int(np.ceil(COMMAND_SAMPLES * RATE / COMMAND_RATE)) + 16
    windows = waveform_windows(need, count, seed)
    rows = [resample_poly(w, COMMAND_RATE // 100, RATE // 100)[:COMMAND_SAMPLES] for w in windows]
    return {"audio_preproc_input": np.stack(rows).astype(np.float32)}


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("star_trek_command", WORD_ACTIVATION, _WAR + "models/star_trek_activation_phrase_v2.tflite",
                 "Teachable Machine speech-commands model (word-activation-recognition), float TFLite: raw 44.1 kHz "
                 "audio in, RFFT2D front end in the graph, 4 CONV_2D, 2 FULLY_CONNECTED, 3 classes; speech-like "
                 "audio", _npz(command_windows)),
)
