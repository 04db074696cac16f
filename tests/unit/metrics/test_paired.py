"""The paired confidence interval of an int8 drop and the evaluation set's resolution (edgepipe.metrics.paired)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.artifacts import Artifact
from edgepipe.metrics.paired import drops_by_format, paired_drop, resolution_warnings


def _pairs(n: int, float_only: int, int8_only: int, both_wrong: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample correctness with the given numbers of discordant pairs (shuffled, fixed seed)."""
    ref, cand = np.ones(n, bool), np.ones(n, bool)
    cand[:float_only] = False
    ref[float_only:float_only + int8_only] = False
    ref[float_only + int8_only:float_only + int8_only + both_wrong] = False
    cand[float_only + int8_only:float_only + int8_only + both_wrong] = False
    order = np.random.default_rng(1).permutation(n)
    return ref[order], cand[order]


def test_drop_counts_only_discordant_pairs_and_is_deterministic() -> None:
    ref, cand = _pairs(400, float_only=5, int8_only=1, both_wrong=7)
    drop = paired_drop(ref, cand)
    assert (drop.samples, drop.float_only, drop.int8_only) == (400, 5, 1)
    assert drop.drop_points == pytest.approx(1.0)  # (5 - 1) / 400 = 1 point; concordant errors do not count
    assert drop.low_points <= 1.0 <= drop.high_points
    assert drop == paired_drop(ref, cand), "fixed seed: same inputs, same interval"


def test_no_discordant_pair_gives_a_zero_width_interval() -> None:
    ref, cand = _pairs(400, 0, 0, both_wrong=8)
    drop = paired_drop(ref, cand)
    assert (drop.drop_points, drop.low_points, drop.high_points) == (0.0, 0.0, 0.0)


def test_interval_matches_the_normal_approximation_on_a_large_set() -> None:
    """n = 2000 with 60 / 20 discordant pairs: the bootstrap's half-width is the paired Wald one within 10%."""
    n, b, c = 2000, 60, 20
    drop = paired_drop(*_pairs(n, b, c))
    sd = np.sqrt((b + c) / n - ((b - c) / n) ** 2) / np.sqrt(n)
    assert drop.half_width_points == pytest.approx(100 * 1.96 * sd, rel=0.1)
    assert drop.low_points > 0, "2 points of drop on 2000 samples is resolved"


def test_mismatched_correctness_arrays_are_rejected() -> None:
    with pytest.raises(ValueError, match="one length"):
        paired_drop(np.ones(3, bool), np.ones(4, bool))


def test_too_few_samples_to_resolve_the_threshold_warns_with_the_size_needed() -> None:
    drop = paired_drop(*_pairs(50, 0, 0))
    warnings = resolution_warnings(50, 1.0, {"onnx": drop})
    assert len(warnings) == 1
    assert "one sample of 50 is 2.00 points" in warnings[0] and "at least 200 samples" in warnings[0]


def test_an_interval_wider_than_the_threshold_warns() -> None:
    drop = paired_drop(*_pairs(400, 6, 2))  # 1 point, half-width > 1 point
    warnings = resolution_warnings(400, 1.0, {"tflite": drop})
    assert drop.half_width_points > 1.0
    assert [w.split(":")[0] for w in warnings] == ["tflite"] and "wider" in warnings[0]


def test_an_interval_straddling_the_threshold_warns() -> None:
    drop = paired_drop(*_pairs(4000, 60, 20))  # 1.0 point, half-width ~0.44: the interval contains 1.2
    warnings = resolution_warnings(4000, 1.2, {"onnx": drop})
    assert drop.low_points < 1.2 < drop.high_points
    assert len(warnings) == 1 and "contains the 1.2-point threshold" in warnings[0]


def test_a_resolving_set_has_no_warning() -> None:
    drop = paired_drop(*_pairs(4000, 4, 4))
    assert resolution_warnings(4000, 1.0, {"onnx": drop}) == []


def test_each_int8_artifact_is_paired_with_the_float_of_its_format() -> None:
    artifacts = [Artifact(Path("model.onnx"), "onnx", "fp32"), Artifact(Path("model.tflite"), "tflite", "fp32"),
                 Artifact(Path("model_int8.onnx"), "onnx", "int8"),
                 Artifact(Path("model_int8.tflite"), "tflite", "int8")]
    ref, cand = _pairs(100, 3, 0)
    correct = {"model.onnx": ref, "model_int8.onnx": cand, "model.tflite": cand, "model_int8.tflite": cand}
    drops = drops_by_format(artifacts, correct)
    assert sorted(drops) == ["onnx", "tflite"]
    assert drops["onnx"].float_only == 3 and drops["tflite"].float_only == 0
