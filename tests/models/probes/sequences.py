"""Probe graphs of sequence models' shapes for the Rockchip checks (tests/vendors/rknn/test_sequences.py).

Each builds a small float ONNX model with onnx.helper, seeded weights, opset 18: the shapes madmom's, LAC's and
flashvad's networks have ([T, F] sequences, reversed time axes, 2-D pads, recurrent ops with state inputs).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.models.probes.onnx_files import save_opset14

#: A Slice end past any axis (ONNX clamps it): with step -1 the slice runs from the last element to the first.
_BEFORE_FIRST = -(2**62)


def _save(path: Path, nodes: list, inputs: dict[str, list[int]], outputs: dict[str, list[int]], inits: list,
          elem: dict[str, int] | None = None) -> Path:
    import onnx
    from onnx import TensorProto, helper

    types = elem or {}
    graph = helper.make_graph(
        nodes, path.stem,
        [helper.make_tensor_value_info(n, types.get(n, TensorProto.FLOAT), s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs.items()], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def reversals_onnx(path: Path, cases: list[tuple[list[int], int]]) -> Path:
    """One branch per (shape, axis): a graph input, Relu, a Slice stepping backwards along ``axis`` (as a
    bidirectional RNN made of forward ones reverses its sequence), Relu; each branch its own input and output."""
    from onnx import helper, numpy_helper

    nodes, inits, inputs, outputs = [], [], {}, {}
    for k, (shape, axis) in enumerate(cases):
        names = [f"rev{k}_{part}" for part in ("starts", "ends", "axes", "steps")]
        inits += [numpy_helper.from_array(np.array([v], np.int64), n)
                  for n, v in zip(names, (-1, _BEFORE_FIRST, axis, -1), strict=True)]
        nodes += [helper.make_node("Relu", [f"x{k}"], [f"r{k}"], name=f"pre{k}"),
                  helper.make_node("Slice", [f"r{k}", *names], [f"s{k}"], name=f"reverse{k}"),
                  helper.make_node("Relu", [f"s{k}"], [f"y{k}"], name=f"post{k}")]
        inputs[f"x{k}"], outputs[f"y{k}"] = shape, shape
    return _save(path, nodes, inputs, outputs, inits)


def matrix_pads_onnx(path: Path, cases: list[list[int]]) -> Path:
    """One branch per ``pads`` of a [40, 105] spectrogram (ONNX order: every axis's start, then every end): a
    graph input, Relu, Pad, Relu."""
    from onnx import helper, numpy_helper

    nodes, inits, inputs, outputs = [], [], {}, {}
    for k, pads in enumerate(cases):
        inits.append(numpy_helper.from_array(np.array(pads, np.int64), f"pads{k}"))
        nodes += [helper.make_node("Relu", [f"x{k}"], [f"r{k}"], name=f"pre{k}"),
                  helper.make_node("Pad", [f"r{k}", f"pads{k}"], [f"p{k}"], name=f"pad{k}", mode="constant"),
                  helper.make_node("Relu", [f"p{k}"], [f"y{k}"], name=f"post{k}")]
        inputs[f"x{k}"] = [40, 105]
        outputs[f"y{k}"] = [40 + pads[0] + pads[2], 105 + pads[1] + pads[3]]
    return _save(path, nodes, inputs, outputs, inits)


def unread_input_gru_onnx(path: Path) -> Path:
    """Baidu LAC's shape: int64 token ids through an embedding (Gather) into a bidirectional GRU, and a
    ``length`` input no node reads; the GRU carries ``layout=0`` as PyTorch's exporter writes it."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (50, 16)).astype(np.float32), "embedding"),
             numpy_helper.from_array(np.array([1], np.int64), "batch_axis"),
             numpy_helper.from_array(rng.normal(0, 0.3, (2, 24, 16)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.normal(0, 0.3, (2, 24, 8)).astype(np.float32), "R")]
    nodes = [helper.make_node("Gather", ["embedding", "ids"], ["embedded"], name="embed"),
             helper.make_node("Unsqueeze", ["embedded", "batch_axis"], ["sequence"], name="to_sequence"),
             helper.make_node("GRU", ["sequence", "W", "R"], ["gru_out"], name="gru", hidden_size=8,
                              direction="bidirectional", layout=0, linear_before_reset=1),
             helper.make_node("Relu", ["gru_out"], ["y"], name="relu")]
    return _save(path, nodes, {"ids": [12], "length": [1]}, {"y": [12, 2, 1, 8]}, inits,
                 elem={"ids": TensorProto.INT64, "length": TensorProto.INT64})


def peephole_lstm_onnx(path: Path, peepholes: bool = True) -> Path:
    """madmom's LSTM layer: a [100, 32] sequence, initial state from 1-D graph inputs, bias and (optionally)
    peephole weights ``P``; a sigmoid head."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    hidden = 8
    inits = [numpy_helper.from_array(np.array([1], np.int64), "batch_axis"),
             numpy_helper.from_array(np.array([0, 1], np.int64), "state_axes"),
             numpy_helper.from_array(np.array([1, 2], np.int64), "squeeze_axes"),
             numpy_helper.from_array(rng.normal(0, 0.3, (1, 4 * hidden, 32)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.normal(0, 0.3, (1, 4 * hidden, hidden)).astype(np.float32), "R"),
             numpy_helper.from_array(np.zeros((1, 8 * hidden), np.float32), "B"),
             numpy_helper.from_array(rng.normal(0, 0.3, (1, 3 * hidden)).astype(np.float32), "P"),
             numpy_helper.from_array(rng.normal(0, 0.3, (hidden, 1)).astype(np.float32), "head")]
    nodes = [helper.make_node("Unsqueeze", ["x", "batch_axis"], ["sequence"], name="to_sequence"),
             helper.make_node("Unsqueeze", ["h0", "state_axes"], ["h"], name="h_state"),
             helper.make_node("Unsqueeze", ["c0", "state_axes"], ["c"], name="c_state"),
             helper.make_node("LSTM", ["sequence", "W", "R", "B", "", "h", "c", *(["P"] if peepholes else [])],
                              ["y"], name="lstm", hidden_size=hidden),
             helper.make_node("Squeeze", ["y", "squeeze_axes"], ["steps"], name="from_sequence"),
             helper.make_node("MatMul", ["steps", "head"], ["logit"], name="head"),
             helper.make_node("Sigmoid", ["logit"], ["activation"], name="sigmoid")]
    return _save(path, nodes, {"x": [100, 32], "h0": [hidden], "c0": [hidden]}, {"activation": [100, 1]}, inits)


def int16_audio_onnx(path: Path) -> Path:
    """MarbleNet's input: int16 audio [1, 1, 1600] cast to float, a strided Conv (an STFT-like front end)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.01, (8, 1, 1, 160)).astype(np.float32), "frames"),
             numpy_helper.from_array(np.array([1, 1, 1, 1600], np.int64), "image")]
    nodes = [helper.make_node("Cast", ["audio"], ["samples"], name="to_float", to=TensorProto.FLOAT),
             helper.make_node("Reshape", ["samples", "image"], ["row"], name="to_image"),
             helper.make_node("Conv", ["row", "frames"], ["spectrum"], name="stft", strides=[1, 80]),
             helper.make_node("Relu", ["spectrum"], ["y"], name="relu")]
    return _save(path, nodes, {"audio": [1, 1, 1600]}, {"y": [1, 8, 1, 19]}, inits, elem={"audio": TensorProto.INT16})


def bidirectional_layers_onnx(path: Path, widths: list[int], steps: int = 100) -> Path:
    """One branch per hidden width H, as madmom's bidirectional onset RNN builds a layer: a [T, 20] input made a
    batch of one, a forward RNN over it and one over its time reversal (reversed back), both squeezed to [T, H]
    and concatenated to [T, 2H], then unsqueezed for the next RNN layer, whose output is squeezed."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits, inputs, outputs = [], [], {}, {}
    inits += [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
              (("one", [1]), ("dirs", [1, 2]), ("last", [-1]), ("before", [_BEFORE_FIRST]), ("time", [0]))]
    for k, hidden in enumerate(widths):
        w, r, w2, r2 = (f"{p}{k}" for p in ("w", "r", "w2_", "r2_"))
        inits += [numpy_helper.from_array(rng.normal(0, 0.1, shape).astype(np.float32), name) for name, shape in
                  ((w, (1, hidden, 20)), (r, (1, hidden, hidden)), (w2, (1, hidden, 2 * hidden)),
                   (r2, (1, hidden, hidden)))]
        nodes += [helper.make_node("Unsqueeze", [f"x{k}", "one"], [f"u{k}"], name=f"batch_axis_{k}"),
                  helper.make_node("RNN", [f"u{k}", w, r], [f"yf{k}"], name=f"forward{k}", hidden_size=hidden),
                  helper.make_node("Squeeze", [f"yf{k}", "dirs"], [f"sf{k}"], name=f"squeeze_f{k}"),
                  helper.make_node("Slice", [f"u{k}", "last", "before", "time", "last"], [f"ur{k}"],
                                   name=f"reverse_in{k}"),
                  helper.make_node("RNN", [f"ur{k}", w, r], [f"yb{k}"], name=f"backward{k}", hidden_size=hidden),
                  helper.make_node("Squeeze", [f"yb{k}", "dirs"], [f"sb{k}"], name=f"squeeze_b{k}"),
                  helper.make_node("Slice", [f"sb{k}", "last", "before", "time", "last"], [f"rb{k}"],
                                   name=f"reverse_out{k}"),
                  helper.make_node("Concat", [f"sf{k}", f"rb{k}"], [f"c{k}"], name=f"concat{k}", axis=1),
                  helper.make_node("Unsqueeze", [f"c{k}", "one"], [f"cu{k}"], name=f"next_batch_axis_{k}"),
                  helper.make_node("RNN", [f"cu{k}", w2, r2], [f"y{k}"], name=f"next{k}", hidden_size=hidden),
                  helper.make_node("Squeeze", [f"y{k}", "dirs"], [f"out{k}"], name=f"squeeze_next{k}")]
        inputs[f"x{k}"], outputs[f"out{k}"] = [steps, 20], [steps, hidden]
    return _save(path, nodes, inputs, outputs, inits)


def one_column_heads_onnx(path: Path, rows: list[int], features: int = 25) -> Path:
    """One branch per row count M, as madmom's onset RNNs end: Relu of an [M, 25] input, MatMul to one column,
    bias Add, Sigmoid, and a Squeeze of the column to the [M] graph output."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits, inputs, outputs = [], [numpy_helper.from_array(np.array([1], np.int64), "column")], {}, {}
    for k, count in enumerate(rows):
        inits += [numpy_helper.from_array(rng.normal(0, 0.3, (features, 1)).astype(np.float32), f"w{k}"),
                  numpy_helper.from_array(np.array([0.1], np.float32), f"b{k}")]
        nodes += [helper.make_node("Relu", [f"x{k}"], [f"r{k}"], name=f"pre{k}"),
                  helper.make_node("MatMul", [f"r{k}", f"w{k}"], [f"m{k}"], name=f"head{k}"),
                  helper.make_node("Add", [f"m{k}", f"b{k}"], [f"a{k}"], name=f"bias{k}"),
                  helper.make_node("Sigmoid", [f"a{k}"], [f"s{k}"], name=f"sigmoid{k}"),
                  helper.make_node("Squeeze", [f"s{k}", "column"], [f"y{k}"], name=f"squeeze{k}")]
        inputs[f"x{k}"], outputs[f"y{k}"] = [count, features], [count]
    return _save(path, nodes, inputs, outputs, inits)


def recurrent_states_onnx(path: Path, op: str, hidden: int, steps: int = 32, features: int = 20) -> Path:
    """madmom's recurrent layer with its state carried between calls: a [T, F] input and a [H] state input, each
    unsqueezed to the op's layout, the op (``RNN`` or ``GRU``) with the state as initial_h, its sequence and its
    last state squeezed to the outputs [T, H] and [H]. The state's Unsqueeze is named after its output, as
    madmom's converter names every node."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    gates = {"RNN": 1, "GRU": 3}[op]
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             (("one", [1]), ("state_axes", [0, 1]), ("dirs", [1, 2]), ("first", [0, 1]))]
    inits += [numpy_helper.from_array(rng.normal(0, 0.1, shape).astype(np.float32), name) for name, shape in
              (("w", (1, gates * hidden, features)), ("r", (1, gates * hidden, hidden)),
               ("b", (1, 2 * gates * hidden)))]
    extra = {"linear_before_reset": 1} if op == "GRU" else {}  # as madmom's converter writes its GRUs
    nodes = [helper.make_node("Unsqueeze", ["x", "one"], ["xb"], name="input_batch"),
             helper.make_node("Unsqueeze", ["state", "state_axes"], ["state_batch"], name="state_batch"),
             helper.make_node(op, ["xb", "w", "r", "b", "", "state_batch"], ["seq", "last"], name="recurrent",
                              hidden_size=hidden, **extra),
             helper.make_node("Squeeze", ["seq", "dirs"], ["y"], name="sequence_squeeze"),
             helper.make_node("Squeeze", ["last", "first"], ["state_out"], name="state_squeeze")]
    return _save(path, nodes, {"x": [steps, features], "state": [hidden]}, {"y": [steps, hidden],
                                                                           "state_out": [hidden]}, inits)


def stft_gru_onnx(path: Path) -> Path:
    """A streaming voice model's shape: a framing Conv (kernel 1x400, stride 128, as a PyTorch STFT exports),
    Relu, a GRU step with a recurrent state input, and a 1x1x4 score (4 elements) reshaped from its output."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    hidden = 16
    inits = {"basis": rng.normal(0, 0.05, (8, 1, 1, 400)), "to_seq": np.array([1, 1, 8], np.int64),
             "flat_shape": np.array([1, hidden], np.int64),
             "perm_w": rng.normal(0, 0.3, (1, 3 * hidden, 8)), "rec_w": rng.normal(0, 0.3, (1, 3 * hidden, hidden)),
             "gru_b": np.zeros((1, 6 * hidden)), "head": rng.normal(0, 0.3, (hidden, 4)),
             "scores": np.array([1, 1, 4], np.int64)}
    nodes = [helper.make_node("Conv", ["audio", "basis"], ["frames"], name="stft", strides=[1, 128]),
             helper.make_node("Relu", ["frames"], ["mag"], name="relu"),
             helper.make_node("Reshape", ["mag", "to_seq"], ["steps"], name="to_steps"),
             helper.make_node("GRU", ["steps", "perm_w", "rec_w", "gru_b", "", "h"], ["out", "h_out"], name="gru",
                              hidden_size=hidden, linear_before_reset=1),
             helper.make_node("Reshape", ["out", "flat_shape"], ["flat"], name="flatten"),
             helper.make_node("MatMul", ["flat", "head"], ["logit"], name="head"),
             helper.make_node("Reshape", ["logit", "scores"], ["score"], name="score")]
    graph = helper.make_graph(
        nodes, "stft_gru", [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 1, 1, 400]),
                            helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 1, hidden])],
        [helper.make_tensor_value_info("score", TensorProto.FLOAT, [1, 1, 4]),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [1, 1, hidden])],
        [numpy_helper.from_array(np.asarray(v, np.float32 if np.asarray(v).dtype.kind == "f" else v.dtype), k)
         for k, v in inits.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def recurrent_onnx(path: Path, op: str, direction: str = "forward", peephole: bool = False,
                   sequence_lens: str | list[int] | None = None, batch: int = 1, states: bool = True,
                   **attrs: object) -> Path:
    """Relu -> one ``op`` (LSTM or GRU, 8 units, 4 steps of 6 features, initial states as inputs) -> Relu, float.

    ``peephole`` adds an LSTM's P input; ``sequence_lens`` is absent (None), a graph input ("input") or the
    constant lengths given; without ``states`` the initial states are zeros (the op's default) and ``x``, of
    [4, batch, 6], is the one graph input; ``attrs`` go to the recurrent node (``activations``, ``clip``, ...).
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    hidden, features, steps = 8, 6, 4
    directions, gates = (2 if direction == "bidirectional" else 1), (4 if op == "LSTM" else 3)
    consts = {"W": rng.normal(0, 0.3, (directions, gates * hidden, features)).astype(np.float32),
              "R": rng.normal(0, 0.3, (directions, gates * hidden, hidden)).astype(np.float32),
              "B": np.zeros((directions, 2 * gates * hidden), np.float32)}
    state = [directions, batch, hidden]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, batch, features])]
    if sequence_lens == "input":
        inputs.append(helper.make_tensor_value_info("lengths", TensorProto.INT32, [batch]))
    elif sequence_lens is not None:
        consts["lengths"] = np.array(sequence_lens, np.int32)
    initial = (["h0", "c0"] if op == "LSTM" else ["h0"]) if states else []
    inputs += [helper.make_tensor_value_info(name, TensorProto.FLOAT, state) for name in initial]
    if peephole:
        consts["P"] = rng.normal(0, 0.3, (directions, 3 * hidden)).astype(np.float32)
    # by position: X, W, R, B, sequence_lens, initial_h, initial_c (LSTM), P (LSTM); "" for an absent one
    rnn_inputs = ["seq", "W", "R", "B", "lengths" if sequence_lens is not None else "",
                  "h0" if states else "", *(["c0" if states else "", "P" if peephole else ""] if op == "LSTM" else [])]
    while rnn_inputs[-1] == "":
        rnn_inputs.pop()
    outputs = ["Y", "Y_h", *(["Y_c"] if op == "LSTM" else [])]
    nodes = [helper.make_node("Relu", ["x"], ["seq"], name="relu_in"),
             helper.make_node(op, rnn_inputs, outputs, name=op.lower(), hidden_size=hidden, direction=direction,
                              **attrs),
             helper.make_node("Relu", ["Y"], ["y"], name="relu_out")]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [steps, directions, batch, hidden]),
            helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, state)]
    graph = helper.make_graph(nodes, op.lower(), inputs, outs,
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    return path


def gru_states_only_onnx(path: Path) -> Path:
    """A GRU over [20, 1, 16] of which only the final state Y_h is used (PLCMOS v2 pools its second GRU so): the
    RKNN build fails on it."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    hidden, width, steps = 32, 16, 20
    inits = [numpy_helper.from_array((0.3 * rng.standard_normal(s)).astype(np.float32), k) for k, s in
             (("W", (1, 3 * hidden, width)), ("R", (1, 3 * hidden, hidden)), ("B", (1, 6 * hidden)))]
    nodes = [helper.make_node("GRU", ["x", "W", "R", "B"], ["Y", "Y_h"], name="gru", hidden_size=hidden),
             helper.make_node("Relu", ["Y_h"], ["h"], name="relu")]
    graph = helper.make_graph(nodes, "gru_states_only",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, 1, width])],
                              [helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 1, hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def cache_update_onnx(path: Path) -> Path:
    """GTCRN's streaming cache update: a [3, 1, 1, 16] cache (graph input) whose row 1 a ScatterND replaces with a
    Relu's [1, 1, 1, 16], then a Relu."""
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["update"], ["fresh"], name="relu_update"),
         helper.make_node("ScatterND", ["cache", "row", "fresh"], ["written"], name="scatter"),
         helper.make_node("Relu", ["written"], ["y"], name="relu")], "cache_update",
        [helper.make_tensor_value_info("cache", TensorProto.FLOAT, [3, 1, 1, 16]),
         helper.make_tensor_value_info("update", TensorProto.FLOAT, [1, 1, 1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([[1]], np.int64), "row")])
    return save_opset14(graph, path)


def reverse_sequence_onnx(path: Path, time_axis: int, lengths: str = "constant", steps: int = 98) -> Path:
    """x (1, 64, 1, steps) -> Conv 1x1 -> Transpose -> Reshape to a sequence -> ReverseSequence -> Relu, as tf2onnx
    writes a backward LSTM's input: time first (steps, 1, 64) with ``time_axis`` 0, batch first with 1; the
    lengths a constant (3 short of ``steps`` with "short") or a graph input ("input")."""
    from onnx import TensorProto, helper, numpy_helper

    channels = 64
    sequence = [steps, 1, channels] if time_axis == 0 else [1, steps, channels]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Transpose", ["c"], ["ct"], perm=[3, 0, 2, 1] if time_axis == 0 else [0, 3, 2, 1],
                              name="layout"),
             helper.make_node("Reshape", ["ct", "sequence_shape"], ["seq"], name="to_sequence"),
             helper.make_node("ReverseSequence", ["seq", "lens"], ["rev"], time_axis=time_axis,
                              batch_axis=1 - time_axis, name="reverse"),
             helper.make_node("Relu", ["rev"], ["y"], name="relu")]
    weights = np.random.default_rng(0).standard_normal((channels, channels, 1, 1)).astype(np.float32)
    constants = [numpy_helper.from_array(weights, "w"),
                 numpy_helper.from_array(np.array(sequence, np.int64), "sequence_shape")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 1, steps])]
    if lengths == "input":
        inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT64, [1]))
    else:
        constants.append(numpy_helper.from_array(np.array([steps - 3 if lengths == "short" else steps], np.int64),
                                                 "lens"))
    graph = helper.make_graph(nodes, "reverse_sequence", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, sequence)], constants)
    return save_opset14(graph, path)


def stacked_gru_onnx(path: Path, hidden: int, features: int = 7) -> Path:
    """RIANN's recurrent core: x [1, 1, features] and a stacked state h0 [2, 1, 1, hidden]; each of two GRUs takes
    its initial state as a Gather of h0 along axis 0 ([1, 1, hidden]); the first GRU's sequence, squeezed to
    [1, 1, hidden], feeds the second; each final state is unsqueezed to [1, 1, 1, hidden] and concatenated into hn;
    the second sequence, squeezed, through a Relu is the output."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    constants = [numpy_helper.from_array(np.array(0, np.int64), "i0"),
                 numpy_helper.from_array(np.array(1, np.int64), "i1"),
                 numpy_helper.from_array(np.array([1], np.int64), "axis1"),
                 numpy_helper.from_array(np.array([0], np.int64), "axis0")]
    nodes = []
    for k, (source, width) in enumerate((("x", features), ("s1", hidden))):
        constants += [numpy_helper.from_array(rng.normal(0, .1, (1, 3 * hidden, width)).astype(np.float32), f"W{k}"),
                      numpy_helper.from_array(rng.normal(0, .1, (1, 3 * hidden, hidden)).astype(np.float32), f"R{k}"),
                      numpy_helper.from_array(np.zeros((1, 6 * hidden), np.float32), f"B{k}")]
        nodes += [helper.make_node("Gather", ["h0", f"i{k}"], [f"g{k}"], axis=0, name=f"gather{k}"),
                  helper.make_node("GRU", [source, f"W{k}", f"R{k}", f"B{k}", "", f"g{k}"], [f"Y{k}", f"Yh{k}"],
                                   hidden_size=hidden, linear_before_reset=1, name=f"gru{k}"),
                  helper.make_node("Squeeze", [f"Y{k}", "axis1"], [f"s{k + 1}"], name=f"squeeze{k}"),
                  helper.make_node("Unsqueeze", [f"Yh{k}", "axis0"], [f"u{k}"], name=f"unsqueeze{k}")]
    nodes += [helper.make_node("Concat", ["u0", "u1"], ["hn"], axis=0, name="concat"),
              helper.make_node("Relu", ["s2"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "stacked_gru",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, features]),
                               helper.make_tensor_value_info("h0", TensorProto.FLOAT, [2, 1, 1, hidden])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, hidden]),
                               helper.make_tensor_value_info("hn", TensorProto.FLOAT, [2, 1, 1, hidden])], constants)
    return save_opset14(graph, path)
