"""Conv1Ds written as 2-D Convs over an inserted unit axis, folded back into 1-D Convs so that onnx2tf converts them.

tf2onnx writes a Keras ``Conv1D`` the way TensorFlow runs it: ``Unsqueeze`` the [N, W, C] (or [N, C, W]) sequence
to 4-D, ``Transpose`` it to NCHW when needed, a 2-D ``Conv`` with a 1 x k kernel, then ``Squeeze`` the unit axis
(its optimizer moves the Transposes, so either side may have one or not); Paddle exports its 1-D convolutions the
same way (``Unsqueeze`` -> ``Conv`` -> ``Squeeze``, text recognisers' heads). onnx2tf 1.28.8 guesses the NHWC
layout of such a chain wrong and fails in ``tf.squeeze`` or ``tf.nn.convolution`` (five real models with
such chains got no TFLite). The chain is one 1-D ``Conv`` on the 3-D tensor
(permuted first and after where the chain permutes it) with the weights' unit axis dropped, which onnx2tf converts.

The fold is exact: the unit axis has kernel size 1 and no padding, so neither its stride nor its dilation (nor
``SAME`` auto-padding, which pads it by 0) changes anything, and the other axis keeps its kernel, stride, dilation,
pads, ``auto_pad``, groups and bias. Chains whose weights are not constants, whose unit axis is padded or has a
longer kernel, whose Squeeze removes another axis, or whose intermediate tensors are read elsewhere stay as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgepipe.graph.onnx_edit import attributes, constant_values

#: The axis of the NCHW Conv that holds the inserted unit dimension.
_UNIT = 2


@dataclass(frozen=True)
class _Chain:
    """One foldable chain: the 3-D tensor it reads, the Unsqueeze and Transpose before the Conv, the Conv, the
    Transpose and Squeeze after it (all replaced), its weights and the permutations of the 3-D axes around it."""

    source: str
    before: tuple[Any, ...]
    conv: Any
    after: tuple[Any, ...]
    weight: Any
    into_conv: tuple[int, ...]
    out_of_conv: tuple[int, ...]


def _axes(node: Any, constants: dict[str, Any]) -> list[int] | None:
    """The ``axes`` of an Unsqueeze or Squeeze (an attribute before opset 13, a constant input since), or None."""
    if "axes" in attributes(node):
        return list(attributes(node)["axes"])
    if len(node.input) > 1 and node.input[1] in constants:
        return [int(a) for a in constants[node.input[1]].ravel()]
    return None


def _consumers(model: Any) -> dict[str, list[Any]]:
    """The main-graph nodes reading each tensor; a tensor a subgraph reads or the graph returns gets a None too."""
    readers: dict[str, list[Any]] = {}
    for node in model.graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
        for name in _read_in_subgraphs(node):  # conservative: any name read inside counts as read from outside
            readers.setdefault(name, []).append(None)
    for output in model.graph.output:
        readers.setdefault(output.name, []).append(None)
    return readers


def _read_in_subgraphs(node: Any) -> set[str]:
    """The tensor names the nodes of ``node``'s subgraphs (If, Loop, Scan bodies, nested) read."""
    names: set[str] = set()
    for attribute in node.attribute:
        for graph in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
            for inner in graph.node:
                names.update(inner.input)
                names |= _read_in_subgraphs(inner)
    return names


def _only_reader(name: str, readers: dict[str, list[Any]], op_type: str) -> Any | None:
    """The single node of type ``op_type`` that reads ``name``, when nothing else (nor the graph's output) does."""
    found = readers.get(name, [])
    return found[0] if len(found) == 1 and found[0] is not None and found[0].op_type == op_type else None


def _weight(name: str, producers: dict[str, Any], constants: dict[str, Any]) -> Any | None:
    """The constant array behind a Conv's weight input, following Identity nodes; None when it is computed."""
    while name not in constants and name in producers and producers[name].op_type == "Identity":
        name = producers[name].input[0]
    return constants.get(name)


def _into_conv(conv: Any, producers: dict[str, Any],
               constants: dict[str, Any]) -> tuple[str, list[Any], tuple[int, ...]] | None:
    """(3-D source tensor, [Unsqueeze, Transpose?], the permutation of the source axes the Conv sees as N, C, W)
    when the Conv's input is the source with one unit axis inserted (and permuted) at the Conv's H axis."""
    nodes, perm = [], [0, 1, 2, 3]
    node = producers.get(conv.input[0])
    if node is not None and node.op_type == "Transpose":
        perm = list(attributes(node).get("perm", [3, 2, 1, 0]))
        nodes.append(node)
        node = producers.get(node.input[0])
    axes = _axes(node, constants) if node is not None and node.op_type == "Unsqueeze" else None
    if node is None or axes is None or len(axes) != 1 or sorted(perm) != [0, 1, 2, 3]:
        return None
    inserted = axes[0] % 4
    source_axis = [None if j == inserted else (j if j < inserted else j - 1) for j in range(4)]
    if source_axis[perm[_UNIT]] is not None:
        return None
    seen = tuple(source_axis[perm[i]] for i in (0, 1, 3))
    return node.input[0], [node, *reversed(nodes)], tuple(int(a) for a in seen if a is not None)


def _out_of_conv(conv: Any, readers: dict[str, list[Any]],
                 constants: dict[str, Any]) -> tuple[list[Any], Any, tuple[int, ...]] | None:
    """([Transpose?], the Squeeze, the permutation of the 1-D Conv's N, C, W axes it returns) when the Conv's
    output reaches a Squeeze of its unit axis alone (through one Transpose or none), and nothing else reads it."""
    node = _only_reader(conv.output[0], readers, "Transpose") or _only_reader(conv.output[0], readers, "Squeeze")
    if node is None or len(conv.output) != 1:
        return None
    perm, moved = [0, 1, 2, 3], []
    if node.op_type == "Transpose":
        perm = list(attributes(node).get("perm", [3, 2, 1, 0]))
        moved = [node]
        node = _only_reader(node.output[0], readers, "Squeeze")
    axes = _axes(node, constants) if node is not None else None
    if node is None or axes is None or len(axes) != 1 or sorted(perm) != [0, 1, 2, 3]:
        return None
    removed = axes[0] % 4
    if perm[removed] != _UNIT:
        return None
    conv_axis = {0: 0, 1: 1, 3: 2}
    return moved, node, tuple(conv_axis[perm[i]] for i in range(4) if i != removed)


def _foldable_conv(conv: Any, weight: Any) -> bool:
    """Whether ``conv`` is a 2-D Conv whose H axis has kernel 1 and no padding (stride and dilation then do
    nothing there: the output keeps H = 1)."""
    attrs = attributes(conv)
    kernel = list(attrs.get("kernel_shape", weight.shape[2:] if weight.ndim == 4 else []))
    pads = list(attrs.get("pads", [0, 0, 0, 0]))
    return (weight.ndim == 4 and weight.shape[2] == 1 and kernel == list(weight.shape[2:]) and len(pads) == 4
            and pads[0] == 0 and pads[2] == 0 and len(attrs.get("strides", [1, 1])) == 2
            and len(attrs.get("dilations", [1, 1])) == 2)


def _chains(model: Any) -> list[_Chain]:
    """Every foldable Unsqueeze -> (Transpose) -> Conv -> (Transpose) -> Squeeze chain of ``model``'s main graph."""
    constants = constant_values(model)
    producers = {out: node for node in model.graph.node for out in node.output}
    readers = _consumers(model)
    found = []
    for conv in model.graph.node:
        if conv.op_type != "Conv" or len(conv.input) < 2:
            continue
        weight = _weight(conv.input[1], producers, constants)
        into = _into_conv(conv, producers, constants)
        out = _out_of_conv(conv, readers, constants)
        if weight is None or into is None or out is None or not _foldable_conv(conv, weight):
            continue
        source, before, seen = into
        moved, squeeze, returned = out
        found.append(_Chain(source, tuple(before), conv, (*moved, squeeze), weight, seen, returned))
    return found


def _conv1d(chain: _Chain, source: str, output: str, weight: str) -> Any:
    """The 1-D Conv of ``chain``: the 2-D Conv's W-axis attributes, its groups and bias."""
    from onnx import helper

    attrs = attributes(chain.conv)
    kept: dict[str, Any] = {"kernel_shape": [int(chain.weight.shape[3])],
                            "strides": [int(attrs.get("strides", [1, 1])[1])],
                            "dilations": [int(attrs.get("dilations", [1, 1])[1])],
                            "group": int(attrs.get("group", 1))}
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if auto_pad == "NOTSET":
        pads = list(attrs.get("pads", [0, 0, 0, 0]))
        kept["pads"] = [int(pads[1]), int(pads[3])]
    else:
        kept["auto_pad"] = auto_pad
    return helper.make_node("Conv", [source, weight, *chain.conv.input[2:3]], [output], name=chain.conv.name,
                            **kept)


def fold_conv1d_chains(model: Any) -> int:
    """Fold ``model``'s (an ``onnx.ModelProto``, changed in place) 2-D-Conv-over-a-unit-axis chains into 1-D
    Convs as the module says; returns how many were folded. The 1-D Conv keeps the 2-D Conv's name and writes the
    Squeeze's output tensor; Unsqueezes and Transposes that something else still reads stay."""
    from onnx import helper, numpy_helper

    chains = _chains(model)
    if not chains:
        return 0
    identity = (0, 1, 2)
    replaced = {node.output[0] for chain in chains for node in (chain.conv, *chain.after)}
    at_conv: dict[str, list[Any]] = {}
    permuted: dict[tuple[str, tuple[int, ...]], str] = {}
    folded_weights: dict[str, str] = {}
    taken = _names(model)
    for chain in chains:
        added = []
        source = chain.source
        if chain.into_conv != identity:
            key = (source, chain.into_conv)
            if key not in permuted:
                permuted[key] = _unique(f"{chain.conv.name or chain.conv.output[0]}_ncw", taken)
                added.append(helper.make_node("Transpose", [source], [permuted[key]], perm=list(chain.into_conv),
                                              name=permuted[key]))
            source = permuted[key]
        if chain.conv.input[1] not in folded_weights:
            folded_weights[chain.conv.input[1]] = _unique(f"{chain.conv.input[1]}_conv1d", taken)
            model.graph.initializer.append(numpy_helper.from_array(chain.weight[:, :, 0, :].copy(),
                                                                   folded_weights[chain.conv.input[1]]))
        weight = folded_weights[chain.conv.input[1]]
        result = chain.after[-1].output[0]
        if chain.out_of_conv != identity:
            conv_out = _unique(f"{chain.conv.output[0]}_conv1d", taken)
            added.append(_conv1d(chain, source, conv_out, weight))
            added.append(helper.make_node("Transpose", [conv_out], [result], perm=list(chain.out_of_conv),
                                          name=_unique(f"{chain.after[-1].name or result}_transpose", taken)))
        else:
            added.append(_conv1d(chain, source, result, weight))
        at_conv[chain.conv.output[0]] = added
    removed = [node for chain in chains for node in (chain.conv, *chain.after)]
    nodes = []
    for node in model.graph.node:
        if node.output and node.output[0] in at_conv:
            nodes.extend(at_conv[node.output[0]])
        elif not (node.output and node.output[0] in replaced):
            nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    removed += _drop_unread(model, {node.output[0] for chain in chains for node in chain.before})
    _drop_orphans(model, removed)
    return len(chains)


def _names(model: Any) -> set[str]:
    """Every tensor and node name of ``model``'s main graph."""
    graph = model.graph
    return ({n.name for n in graph.node} | {out for n in graph.node for out in n.output}
            | {name for n in graph.node for name in n.input} | {t.name for t in graph.initializer}
            | {v.name for v in (*graph.input, *graph.output, *graph.value_info)})


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or it with the first free ``_N`` suffix when the graph has it already; recorded in ``taken``."""
    found, count = name, 0
    while found in taken:
        count += 1
        found = f"{name}_{count}"
    taken.add(found)
    return found


def _drop_unread(model: Any, candidates: set[str]) -> list[Any]:
    """Remove the nodes writing ``candidates`` (the chains' Unsqueezes and leading Transposes, by output name) that
    nothing reads any more; returns them."""
    dropped: list[Any] = []
    while True:
        readers = _consumers(model)
        unread = [n for n in model.graph.node if n.output and n.output[0] in candidates
                  and not any(readers.get(out) for out in n.output)]
        if not unread:
            return dropped
        gone = {n.output[0] for n in unread}
        dropped += unread
        kept = [n for n in model.graph.node if not (n.output and n.output[0] in gone)]
        del model.graph.node[:]
        model.graph.node.extend(kept)


def _drop_orphans(model: Any, removed: list[Any]) -> None:
    """Remove the initializers the ``removed`` nodes read that nothing reads now (the 2-D weights, the axes) and the
    value infos of the tensors they wrote that no node writes now."""
    readers = _consumers(model)
    read_by_removed = {name for node in removed for name in node.input}
    graph_inputs = {v.name for v in model.graph.input}
    kept = [t for t in model.graph.initializer
            if t.name not in read_by_removed or t.name in readers or t.name in graph_inputs]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    written = {out for node in model.graph.node for out in node.output}
    gone = {out for node in removed for out in node.output} - written
    infos = [v for v in model.graph.value_info if v.name not in gone]
    del model.graph.value_info[:]
    model.graph.value_info.extend(infos)
