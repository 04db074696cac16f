"""Label-free metrics: each formula on hand-checked values, the output matching, the thresholds."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.label_free import Thresholds, compare_outputs, match_outputs, topk_agreement
from edgepipe.metrics.similarity import SQNR_CAP_DB, cosine, sqnr_db


def test_cosine_values() -> None:
    a = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert cosine(a, a) == pytest.approx(1.0)
    assert cosine(a, -a) == pytest.approx(-1.0)
    assert cosine(np.array([1.0, 0.0]), np.array([1.0, 1.0])) == pytest.approx(1 / np.sqrt(2))
    assert cosine(np.zeros(3), np.zeros(3)) == 1.0 and cosine(np.zeros(3), np.ones(3)) == 0.0


def test_sqnr_is_signal_over_noise_in_db() -> None:
    ref = np.ones(100)
    assert sqnr_db(ref, ref + 0.1) == pytest.approx(20.0)  # 100 / (100 * 0.01) = 100 → 20 dB
    assert sqnr_db(ref, ref) == SQNR_CAP_DB


def test_topk_agreement_only_for_classifier_shapes() -> None:
    ref = np.array([[0.1, 0.9, 0.0, 0.0, 0.0, 0.0], [0.8, 0.1, 0.0, 0.0, 0.0, 0.1]])
    cand = np.array([[0.9, 0.5, 0.0, 0.0, 0.0, 0.0], [0.8, 0.1, 0.0, 0.0, 0.0, 0.1]])
    assert topk_agreement(ref, cand, 1) == 0.5
    assert topk_agreement(ref, cand, 5) == 1.0
    assert topk_agreement(ref[:, None, :], cand[:, None, :], 1) == 0.5  # (N, T, C): per-position class scores
    assert topk_agreement(ref[:, :3], cand[:, :3], 5) is None  # fewer than 5 classes


def test_compare_outputs_records_every_metric() -> None:
    rng = np.random.default_rng(0)
    ref = rng.normal(size=(20, 10)).astype(np.float32)
    cand = ref + rng.normal(0, 0.01, ref.shape).astype(np.float32)
    got = compare_outputs("logits", ref, cand)
    assert got.cosine > 0.999 and 35 < got.sqnr_db < 45 and got.max_abs_error < 0.05
    assert got.top1_agreement == 1.0 and got.top5_agreement == 1.0


def test_compare_outputs_accepts_other_layout_of_same_size() -> None:
    ref = np.arange(12, dtype=np.float32).reshape(2, 6)
    assert compare_outputs("y", ref, ref.reshape(2, 2, 3)).cosine == 1.0
    with pytest.raises(ValueError, match="differ in size"):
        compare_outputs("y", ref, ref[:, :3])


def test_match_outputs_by_name_then_position_then_size() -> None:
    assert match_outputs([("a", 4), ("b", 8)], [("b", 8), ("a", 4)]) == [(0, 1), (1, 0)]
    assert match_outputs([("a", 4), ("b", 8)], [("Identity", 4), ("Identity_1", 8)]) == [(0, 0), (1, 1)]
    assert match_outputs([("a", 4), ("b", 8)], [("x", 8), ("y", 4)]) == [(0, 1), (1, 0)]
    assert match_outputs([("a", 4)], [("x", 5)]) == []


def test_outputs_sharing_a_size_pair_in_declared_order_when_one_was_left_out() -> None:
    """MarbleNet: two [1, 51, 1] scores renamed by onnx2tf, its constant signal length left out."""
    reference = [("score_silence", 51), ("score_active", 51), ("signal_len", 1)]
    assert match_outputs(reference, [("Identity", 51), ("Identity_1", 51)]) == [(0, 0), (1, 1)]
    assert match_outputs(reference, [("Identity", 1), ("Identity_1", 51)]) == [(0, 1), (2, 0)]


def test_only_constant_outputs_may_be_missing_and_only_when_the_candidate_has_fewer() -> None:
    from edgepipe.metrics.compare import ModelOutputs

    scores = [np.ones((4, 51)), np.zeros((4, 51))]
    reference = ModelOutputs(["silence", "active", "signal_len"], [*scores, np.full((4, 1), 50.0)],
                             constant=("signal_len",))
    converted = ModelOutputs(["Identity", "Identity_1"], scores)
    agreements, missing = reference.agreements(converted)
    assert [a.output for a in agreements] == ["silence", "active"] and missing == []
    not_constant = ModelOutputs(reference.names, reference.arrays)
    assert not_constant.agreements(converted)[1] == ["signal_len"]
    renamed = ModelOutputs(["Identity", "Identity_1", "other"], [*scores, np.full((4, 2), 50.0)])
    assert reference.agreements(renamed)[1] == ["signal_len"]  # present but unmatched: not a left-out constant


def test_thresholds_name_each_failure() -> None:
    agreement = compare_outputs("score", np.ones((4, 1)), np.full((4, 1), 0.5))
    assert Thresholds(min_cosine=0.99, min_sqnr_db=None).failures(agreement) == []  # same direction: cosine 1
    assert Thresholds().failures(agreement) == ["score: SQNR 6.0 dB < 15 dB"]  # the default gate sees the scale error
    failures = Thresholds(min_cosine=0.99, min_sqnr_db=20, max_abs_error=0.1).failures(agreement)
    assert failures == ["score: SQNR 6.0 dB < 20 dB", "score: max abs error 0.5 > 0.1"]


def test_top1_only_for_class_score_outputs() -> None:
    """Softmax rows and score-named outputs get top-1; landmarks, boxes and maps get cosine/SQNR/error only."""
    from edgepipe.metrics.label_free import compare_outputs, output_kind

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(20, 7, 30))
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    landmarks = rng.normal(size=(20, 63))
    assert output_kind("softmax_11.tmp_0", probs) == "class-scores"
    assert output_kind("out", probs) == "class-scores"  # rows are distributions
    assert output_kind("Identity_1", landmarks) == "regression"
    assert output_kind("logits", landmarks) == "class-scores"  # the name says so
    assert output_kind("map", rng.uniform(size=(4, 1, 8, 8))) == "regression"
    noisy = probs + rng.normal(0, 1e-4, probs.shape)
    seq = compare_outputs("probs", probs, noisy)
    assert seq.kind == "class-scores" and seq.top1_agreement is not None and seq.top1_agreement > 0.9
    reg = compare_outputs("Identity_1", landmarks, landmarks * 1.01)
    assert reg.kind == "regression" and reg.top1_agreement is None and reg.top5_agreement is None
    assert reg.cosine > 0.999 and reg.max_abs_error > 0


def test_outputs_are_compared_by_name_when_a_quantizer_reorders_them() -> None:
    """PicoDet's int8 TFLite from ai-edge-quantizer lists its two outputs in the other order (a build ended in
    "internal error: output Identity: (32, 7600, 10) and (32, 7600, 32) differ in size")."""
    from edgepipe.metrics.compare import ModelOutputs

    rng = np.random.default_rng(0)
    scores, boxes = rng.normal(size=(2, 76, 10)).astype(np.float32), rng.normal(size=(2, 76, 32)).astype(np.float32)
    reference = ModelOutputs(["Identity", "Identity_1"], [scores, boxes])
    agreements, unmatched = reference.agreements(ModelOutputs(["Identity_1", "Identity"], [boxes, scores + 0.01]))
    assert [a.output for a in agreements] == ["Identity", "Identity_1"] and not unmatched
    assert min(a.cosine for a in agreements) > 0.999
    agreements, unmatched = reference.agreements(ModelOutputs(["x"], [rng.normal(size=(2, 5)).astype(np.float32)]))
    assert agreements == [] and unmatched == ["Identity", "Identity_1"]
