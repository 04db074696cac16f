"""Outputs judged part by part: channels of very different ranges are not hidden behind the large ones."""

from __future__ import annotations

import numpy as np

from edgepipe.metrics.label_free import Thresholds, compare_outputs
from edgepipe.metrics.parts import describe_channels, feature_axis, has_small_range_channels, split_parts, worst_channel
from edgepipe.metrics.similarity import cosine


def _head(samples: int = 8, anchors: int = 400, seed: int = 0) -> np.ndarray:
    """A YOLO-style ``[N, 4+C, A]``: four box channels in pixels (0..320) and three score channels (0..1)."""
    rng = np.random.default_rng(seed)
    boxes = rng.uniform(0, 320, (samples, 4, anchors))
    scores = rng.beta(0.3, 3.0, (samples, 3, anchors))
    return np.concatenate([boxes, scores], axis=1).astype(np.float32)


def _per_tensor_int8(values: np.ndarray) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    scale = (high - low) / 255
    return (np.round((values - low) / scale) * scale + low).astype(np.float32)


def test_feature_axis_is_the_axis_whose_channels_differ_most() -> None:
    assert feature_axis(_head()) == 1
    assert feature_axis(np.ones((4, 1))) is None  # one value per sample: nothing to split


def test_per_tensor_int8_loses_the_scores_that_flattened_cosine_hides() -> None:
    reference = _head()
    candidate = _per_tensor_int8(reference)
    assert cosine(reference, candidate) > 0.999  # the flattened view the gate read before
    parts = split_parts(reference, candidate)
    assert [p.part for p in parts] == ["channels 0–3", "channels 4–6"]
    scores = parts[1]
    assert scores.sqnr_db < 10 and parts[0].sqnr_db > 30
    agreement = compare_outputs("output0", reference, candidate)
    failures = Thresholds().failures(agreement)
    assert any(f.startswith("output0 channels 4–6: SQNR") for f in failures)


def test_an_output_of_similar_channels_is_judged_whole() -> None:
    rng = np.random.default_rng(1)
    reference = rng.standard_normal((4, 16, 8, 8)).astype(np.float32)
    assert split_parts(reference, reference) == []
    assert not has_small_range_channels(reference)
    worst = worst_channel(reference, reference + 0.01)
    assert worst is not None and worst.channels == 1 and worst.sqnr_db > 30


def test_a_scale_error_fails_on_sqnr_though_cosine_is_high() -> None:
    rng = np.random.default_rng(2)
    reference = rng.standard_normal((16, 10)).astype(np.float32)
    agreement = compare_outputs("logits", reference, reference * 1.6)
    assert agreement.cosine > 0.999
    assert any("SQNR" in line for line in Thresholds().failures(agreement))


def test_channels_are_described_as_runs() -> None:
    assert describe_channels(np.array([4, 5, 6, 9])) == "channels 4–6, 9"
    assert describe_channels(np.array([2])) == "channel 2"
