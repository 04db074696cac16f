"""One test per rewrite: on a generated graph whose op the test target runs on its CPU, the rewrite is kept, the
rewritten model gives the original's outputs (ONNX Runtime, within 1e-5 of their range) and the op is gone."""

from __future__ import annotations

import onnx
import pytest
from onnx import numpy_helper

from edgepipe.legalize.equivalence import TOLERANCE
from tests.unit.legalize import graphs
from tests.unit.legalize.conftest import Legalize


def _kept(run, name: str) -> None:  # type: ignore[no-untyped-def]
    assert run.outcomes == {name: "kept"}, run.result.report.rewrites
    assert run.error() <= TOLERANCE
    report = run.result.report
    assert report.after.cpu_nodes < report.before.cpu_nodes or report.after.partitions < report.before.partitions


@pytest.mark.parametrize("opset", [10, 13])
def test_hard_sigmoid_becomes_mul_add_clip(legalize: Legalize, opset: int) -> None:
    run = legalize(graphs.hard_sigmoid(opset), graphs.profile())
    _kept(run, "hard-sigmoid")
    assert run.ops["HardSigmoid"] == 0 and run.ops["Clip"] == 1 and run.ops["Mul"] == 2 and run.ops["Add"] == 1
    assert run.result.report.before.cpu_ops == {"HardSigmoid": 1} and run.result.report.after.cpu_nodes == 0
    clip = next(n for n in run.model().graph.node if n.op_type == "Clip")
    assert len(clip.input) == (3 if opset >= 11 else 1)  # min/max as inputs from opset 11, attributes before


def test_hard_swish_becomes_mul_add_clip_mul(legalize: Legalize) -> None:
    run = legalize(graphs.hard_swish(), graphs.profile())
    _kept(run, "hard-swish")
    assert run.ops == {"Mul": 2, "Add": 1, "Clip": 1}


def test_tiling_average_pool_becomes_a_cascade_split_until_it_fits(legalize: Legalize) -> None:
    run = legalize(graphs.pool("AveragePool", 16, 16), graphs.profile(AveragePool={"kernel_max": 2}))
    _kept(run, "pool-cascade")
    kernels = [list(onnx.helper.get_attribute_value(a)) for n in run.model().graph.node for a in n.attribute
               if a.name == "kernel_shape"]
    assert kernels == [[2, 2]] * 4  # 16 = 4 x 4, then each 4 = 2 x 2 in the next round


def test_stride_one_max_pool_with_padding_becomes_two_smaller_ones(legalize: Legalize) -> None:
    run = legalize(graphs.pool("MaxPool", 13, 1, pad=6), graphs.profile(MaxPool={"kernel_max": 7}))
    _kept(run, "pool-cascade")
    assert run.ops == {"MaxPool": 2} and run.result.report.after.cpu_nodes == 0


def test_global_pool_of_a_large_map_pools_locally_first(legalize: Legalize) -> None:
    run = legalize(graphs.global_pool("GlobalAveragePool", 36), graphs.profile(GlobalAveragePool={"kernel_max": 16}))
    _kept(run, "pool-cascade")
    assert run.ops == {"AveragePool": 1, "GlobalAveragePool": 1}


def test_prime_kernel_is_left_alone(legalize: Legalize) -> None:
    run = legalize(graphs.pool("AveragePool", 7, 7, size=28), graphs.profile(AveragePool={"kernel_max": 4}))
    assert run.outcomes == {"pool-cascade": "refused"} and run.result.path is None


def test_focus_slices_become_a_fixed_weight_conv(legalize: Legalize) -> None:
    run = legalize(graphs.focus(), graphs.profile(without=("Slice",)))
    _kept(run, "focus")
    assert run.ops == {"Conv": 2} and run.error() == 0.0  # a one-hot kernel copies pixels exactly


def test_focus_in_space_to_depth_order_becomes_space_to_depth(legalize: Legalize) -> None:
    order = ((0, 0), (0, 1), (1, 0), (1, 1))
    run = legalize(graphs.focus(order, chained=False), graphs.profile(without=("Slice",)))
    _kept(run, "focus")
    assert run.ops == {"SpaceToDepth": 1, "Conv": 1}
    without = legalize(graphs.focus(order, chained=False), graphs.profile(without=("Slice", "SpaceToDepth")))
    assert without.ops == {"Conv": 2}


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_is_written_out(legalize: Legalize, approximate: str) -> None:
    run = legalize(graphs.gelu(approximate), graphs.profile())
    _kept(run, "gelu")
    assert run.ops["Gelu"] == 0 and run.ops["Erf" if approximate == "none" else "Tanh"] == 1


def test_gelu_takes_erf_s_formula_when_the_target_has_neither(legalize: Legalize) -> None:
    run = legalize(graphs.gelu(), graphs.profile(without=("Erf",)))
    _kept(run, "gelu")
    assert run.ops["Gelu"] == 0 and run.ops["Erf"] == 0 and run.ops["Exp"] == 1


def test_erf_becomes_an_exponential_formula(legalize: Legalize) -> None:
    run = legalize(graphs.erf_gelu(), graphs.profile(without=("Erf",)))
    _kept(run, "erf")
    assert run.ops["Erf"] == 0 and run.ops["Exp"] == 1 and run.ops["Reciprocal"] == 1


@pytest.mark.parametrize("bias", [True, False])
def test_layer_norm_is_written_out(legalize: Legalize, bias: bool) -> None:
    run = legalize(graphs.layer_norm(bias), graphs.profile())
    _kept(run, "layer-norm")
    assert run.ops["LayerNormalization"] == 0 and run.ops["ReduceMean"] == 2 and run.ops["Sqrt"] == 1


def test_softmax_on_a_middle_axis_moves_to_the_last(legalize: Legalize) -> None:
    run = legalize(graphs.softmax(axis=1), graphs.profile(Softmax={"axis_in": [-1]}))
    _kept(run, "softmax-axis")
    assert run.ops == {"Transpose": 2, "Softmax": 1}


def test_rank_five_channel_shuffle_folds_to_rank_four(legalize: Legalize) -> None:
    profile = graphs.profile(Reshape={"max_rank": 4}, Transpose={"max_rank": 4})
    run = legalize(graphs.channel_shuffle(), profile)
    _kept(run, "reshape-rank")
    assert run.ops == {"Reshape": 2, "Transpose": 1} and run.error() == 0.0
    shapes = [numpy_helper.to_array(t).tolist() for t in run.model().graph.initializer]
    assert sorted(shapes) == [[1, 8, 4, 4], [2, 4, 16]] and run.result.report.after.cpu_nodes == 0


def test_div_by_a_constant_becomes_mul_by_its_reciprocal(legalize: Legalize) -> None:
    run = legalize(graphs.div_by_constant(), graphs.profile(without=("Div",)))
    _kept(run, "div-constant")
    assert run.ops == {"Mul": 1}
