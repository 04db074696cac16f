"""rknn-toolkit2 2.5.0's logs read as edgepipe reads them: the layer table, the rewrites, the accuracy rows, the
rules it advises disabling."""

from __future__ import annotations

from edgepipe.vendors.rknn import layers as rknn_layers
from edgepipe.vendors.rknn.runner import _advised_rules
from edgepipe.vendors.rknn.toolkit import accuracy_figures

LAYER_LOG = """\
D RKNN: [02:14:24.774] ID OpType DataType Target InputShape OutputShape Cycles(DDR/NPU/Total) RW(KB) FullName
D RKNN: [02:14:24.774] 0 InputOperator INT8 CPU \\ (1,3,48,192) 0/0/0 0 InputOperator:x
D RKNN: [02:14:24.774] 1 ConvHardSwish INT8 NPU (1,3,48,192),(8,3,3,3),(8) (1,8,24,96) 2787/20736/20736 28 Conv:conv1
D RKNN: [02:14:24.774] 2 ConvAdd INT8 NPU (1,8,24,96),(8,8,1,1),(8) (1,8,24,96) 3134/9216/9216 36 Conv:conv2_ConvAdd
D RKNN: [02:14:24.774] 3 Transpose INT8 CPU (1,8,24,96) (1,24,96,8) 0/0/0 0 Transpose:transpose
W RKNN: [02:14:24.700] Transpose will fallback to CPU, because input shape has exceeded the max limit
"""


def test_layer_table_and_rewrites_are_read() -> None:
    python_log = "D     fuse_bn_into_conv: remove node = ['bn'], add node = []\n" \
                 "D     convert_div_to_mul: remove node = ['div'], add node = ['div_2mul']\n"
    log = rknn_layers.parse(LAYER_LOG, python_log)
    assert [(layer.op, layer.target, layer.name) for layer in log.layers] == [
        ("InputOperator", "CPU", "x"), ("ConvHardSwish", "NPU", "conv1"), ("ConvAdd", "NPU", "conv2_ConvAdd"),
        ("Transpose", "CPU", "transpose")]
    assert log.fallbacks == ["Transpose will fallback to CPU, because input shape has exceeded the max limit"]
    assert rknn_layers.origins("conv2_ConvAdd", log, {"conv2"}) == {"conv2"}
    assert rknn_layers.origins("div_2mul", log, {"div"}) == {"div"}


#: madmom's onset RNN head as rknn-toolkit2 2.5.0 rewrites it on RK3588 (excerpt): the reshape it inserts for
#: the 2-D Add is named after the MatMul's output tensor, which madmom's converter also gives the MatMul node.
HEAD_PYTHON_LOG = (
    "D     convert_matmul_to_exmatmul: remove node = ['matmul_44']"
    ", add node = ['x_tp', 'x_tp_rs', 'matmul_44#1', 'matmul_44_mm_tp', 'matmul_44_mm_tp_rs']\n"
    "D     unsqueeze_to_4d_add: remove node = []"
    ", add node = ['matmul_44_rs', 'bias_add_45-rs']\n"
    "D     convert_squeeze_to_reshape: remove node = ['output_0_squeeze_47']"
    ", add node = ['output_0_squeeze_47_2rs']\n"
    "D     swap_reshape_add: remove node = ['matmul_44_rs', 'bias_add_45']"
    ", add node = ['bias_add_45', 'matmul_44_rs']\n"
    "D     fuse_exmatmul_add: remove node = ['bias_add_45', 'matmul_44#1']"
    ", add node = ['matmul_44#1']\n"
    "D     swap_reshape_sigmoid: remove node = ['matmul_44_rs', 'sigmoid_46', 'output_0_squeeze_47_2rs']"
    ", add node = ['sigmoid_46', 'matmul_44_rs']\n"
    "D     convert_exmatmul_to_conv: remove node = ['matmul_44#1']"
    ", add node = ['matmul_44#2']\n"
)

HEAD_LAYERS = (
    "D RKNN: [21:54:57.650] 3  ConvSigmoid  INT8  NPU  (1,25,1,100),(1,25,1,1),(1)  (1,1,1,100)  212/448/448  3"
    "  Conv:matmul_44#2\n"
    "D RKNN: [21:54:57.650] 4  Reshape  INT8  CPU  (1,1,1,100),(1)  (100)  0/0/0  1  Reshape:matmul_44_rs\n"
)


def test_an_inserted_reshape_is_no_node_but_holds_the_reshapes_merged_into_it() -> None:
    """The reshape the toolkit inserts (``matmul_44_rs``) is traced to no node, though its name starts with the
    MatMul's; the model's Squeeze merged into it by ``swap_reshape_sigmoid`` is computed there."""
    log = rknn_layers.parse(HEAD_LAYERS, HEAD_PYTHON_LOG)
    known = {"matmul_44", "bias_add_45", "sigmoid_46", "output_0_squeeze_47"}
    assert "matmul_44_rs" in log.inserted
    assert rknn_layers.origins("matmul_44_rs", log, known) == {"output_0_squeeze_47"}
    assert rknn_layers.origins("matmul_44#2", log, known) == {"matmul_44"}  # its bias Add: fused, see _fused_into
    assert rknn_layers.stem("bias_add_45-rs") == "bias_add_45" and rknn_layers.stem("a/Reshape_rs") == "a/Reshape"


def test_accuracy_rows_are_read_whatever_the_layer_name() -> None:
    figures = accuracy_figures("[Input] x   1.00000 | 0.00000   1.00000 | 0.00000\n[Conv] conv1\n"
                               "[Conv] a name q_zero   0.99990 | 1.01357   0.99800 | 0.9\n")
    assert figures["rknn_output_cosine"] == 0.9999 and figures["rknn_worst_layer_cosine"] == 0.998
    assert str(figures["rknn_worst_layers"]).startswith("[Conv] a name q_zero single cos 0.99800")


def test_the_rule_the_toolkit_advises_disabling_is_read() -> None:
    log = ("W You can add disable_rules=['fuse_exmatmul_add_mul_exsoftmax13_exmatmul_to_sdpa'] in rknn.config() "
           "to temporarily disable the error rule!")
    assert _advised_rules(log) == ["fuse_exmatmul_add_mul_exsoftmax13_exmatmul_to_sdpa"]
    assert _advised_rules("E build: Traceback ...") == []


def test_a_transpose_the_toolkit_drops_as_a_parallel_duplicate_is_traced_to_the_one_it_keeps() -> None:
    """BeliefPPG (held out): ``remove_parallel_transpose`` kept the Transpose the toolkit had inserted before
    the dense layer and dropped the model's own Transpose of the same input, which then matched no layer."""
    python_log = ("D     convert_reshape_to_transpose: remove node = []"
                  ", add node = ['dense/Reshape:0_tp']\n"
                  "D     remove_parallel_transpose: remove node = ['dense/Reshape:0_tp', 'conv/BiasAdd__8']"
                  ", add node = ['dense/Reshape:0_tp']\n")
    layers = ("D RKNN: [21:54:57.650] 1  Transpose  INT8  NPU  (1,7,64,2)  (1,2,7,64)  0/0/0  1"
              "  Transpose:dense/Reshape:0_tp\n")
    log = rknn_layers.parse(layers, python_log)
    assert rknn_layers.origins("dense/Reshape:0_tp", log, {"conv/BiasAdd__8", "conv/BiasAdd"}) == {"conv/BiasAdd__8"}
