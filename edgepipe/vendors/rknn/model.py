"""The copy of a float ONNX model that rknn-toolkit2 compiles, prepared so the toolkit reads the model as it is.

Every change works around a failure of rknn-toolkit2 2.5.0 on a valid model and keeps what each node computes
and where it can run: nodes carry edgepipe's names (so the compiler's layer table names them), an ``If`` whose
condition is known once the input shapes are static is replaced by the branch it takes
(:mod:`edgepipe.graph.onnx_branches`), infinite float constants become finite (:func:`finite_constants`),
long tensor names become short ones (:func:`short_tensor_names`), inputs no node reads are dropped
(:func:`drop_unread_inputs`), recurrent ops lose a ``layout`` attribute that only restates the default
(:func:`drop_default_layout`) and normalizations state the default ``epsilon`` they leave out
(:func:`explicit_default_epsilon`). An ``If`` whose condition is only known at run
time is left as it is and named in :attr:`ToolkitModel.runtime_ifs`, and a ``Loop`` in
:attr:`ToolkitModel.loops`, so a failure in them can be reported as such.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from edgepipe.graph.onnx_branches import inline_known_branches
from edgepipe.graph.opgraph import OpGraph
from edgepipe.vendors.onnx_names import named_copy

#: The longest tensor name handed to the toolkit (characters). The toolkit cuts tensor names to 128 characters
#: ("limit model tensor name to 128!") after its rewrites have appended suffixes ("-rs", "_mm_tp_rs", ...) and
#: then looks a tensor up by its full name: ``KeyError`` in the quantizer (a wake-word model names its
#: output with a 139-character JSON of its classes). Measured on that model: an output name of 124 characters
#: compiled, one of 128 did not; 64 leaves room for any suffix.
MAX_TENSOR_NAME = 64


@dataclass(frozen=True)
class ToolkitModel:
    """The prepared copy (``path``) and what preparing it changed."""

    path: Path
    #: Tensor name in the copy -> the model's own name, for every tensor :func:`short_tensor_names` renamed.
    original_names: dict[str, str] = field(default_factory=dict)
    #: ``If`` nodes whose condition is only known at run time (computed from the model's data), kept as they are.
    runtime_ifs: tuple[str, ...] = ()
    #: Graph inputs no node reads, dropped from the copy (the toolkit drops them too and then expects no data).
    unread_inputs: tuple[str, ...] = ()
    #: ``Loop`` nodes, kept as they are (the toolkit refuses every one).
    loops: tuple[str, ...] = ()

    def original_text(self, text: str) -> str:
        """``text`` (the toolkit's log, its accuracy table) with the model's own tensor names put back."""
        for short in sorted(self.original_names, key=len, reverse=True):  # edgepipe_tensor_10 before _1
            text = text.replace(short, self.original_names[short])
        return text


def toolkit_model(model: Path, graph: OpGraph, out: Path) -> ToolkitModel:
    """Write to ``out`` the ONNX file rknn-toolkit2 compiles (see the module docstring)."""
    named_copy(model, graph, out)
    proto = onnx.load(str(out))
    inline_known_branches(proto)
    finite_constants(proto)
    drop_default_layout(proto)
    explicit_default_epsilon(proto)
    unread = drop_unread_inputs(proto)
    renamed = short_tensor_names(proto)
    onnx.save(proto, str(out))
    runtime_ifs = tuple(node.name for node in proto.graph.node if node.op_type == "If")
    loops = tuple(node.name for node in proto.graph.node if node.op_type == "Loop")
    return ToolkitModel(out, renamed, runtime_ifs, tuple(unread), loops)


def drop_unread_inputs(proto: onnx.ModelProto) -> list[str]:
    """Remove from ``proto`` the graph inputs that no node (of any subgraph) and no graph output reads; returns
    their names. rknn-toolkit2 drops such an input when it loads the model and then rejects a dataset that has
    data for it ("The input num: 2 in dataset.txt not match input num: 1 in model": a word segmenter's encoder takes a
    ``length`` input its graph never uses)."""
    read = {name for graph in _graphs(proto.graph) for node in graph.node for name in node.input}
    read |= {value.name for value in proto.graph.output}
    unread = [value.name for value in proto.graph.input if value.name not in read]
    kept = [value for value in proto.graph.input if value.name in read]
    if unread:
        del proto.graph.input[:]
        proto.graph.input.extend(kept)
    return unread


#: Recurrent ops whose ``layout`` attribute (opset 14 on) rknn-toolkit2 copies into an opset that lacks it.
_RECURRENT = ("RNN", "GRU", "LSTM")


def drop_default_layout(proto: onnx.ModelProto) -> int:
    """Remove, in ``proto``, the ``layout`` attribute of RNN/GRU/LSTM nodes where it is 0 (the default: the same
    computation); returns how many. rknn-toolkit2 2.5.0 infers such a node in a model of an opset that has no
    ``layout`` and fails its own check ("Unrecognized attribute: layout for operator GRU": a VAD's GRU
    exported by PyTorch with ``layout=0``). A ``layout`` of 1 is kept: it changes the tensors' order."""
    dropped = 0
    for graph in _graphs(proto.graph):
        for node in graph.node:
            if node.op_type not in _RECURRENT:
                continue
            kept = [a for a in node.attribute if not (a.name == "layout" and a.i == 0)]
            if len(kept) != len(node.attribute):
                del node.attribute[:]
                node.attribute.extend(kept)
                dropped += 1
    return dropped


#: Normalizations whose ``epsilon`` defaults to 1e-5 and that rknn-toolkit2 reads as an attribute.
_EPSILON_DEFAULTS = {"LayerNormalization": 1e-5}


def explicit_default_epsilon(proto: onnx.ModelProto) -> int:
    """Give every normalization in ``proto`` that leaves ``epsilon`` out the default it stands for (the same
    computation); returns how many. rknn-toolkit2 2.5.0's ``convert_layernorm_to_exnorm`` looks the attribute up
    and fails without it (``KeyError``), and with that rule disabled runs the LayerNormalization on the CPU; with
    ``epsilon`` written it runs on the NPU of both SoCs (probed)."""
    from onnx import helper

    written = 0
    for graph in _graphs(proto.graph):
        for node in graph.node:
            default = _EPSILON_DEFAULTS.get(node.op_type)
            if default is not None and not any(a.name == "epsilon" for a in node.attribute):
                node.attribute.append(helper.make_attribute("epsilon", default))
                written += 1
    return written


def finite_constants(proto: onnx.ModelProto) -> list[str]:
    """Replace, in ``proto``, every infinite value of a float initializer by the largest finite value of its
    sign (-inf as the start of a running max becomes -3.4e38 for float32: the same result); the toolkit's
    quantizer computes the range of an infinite constant as NaN and fails (``cannot convert float NaN to
    integer``). Returns the initializers changed; NaN values are left as they are."""
    from onnx import numpy_helper

    changed = []
    for index, init in enumerate(proto.graph.initializer):
        if init.data_type not in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE):
            continue
        value = numpy_helper.to_array(init)
        if not np.isinf(value).any():
            continue
        limit = np.finfo(value.dtype)
        finite = np.where(np.isposinf(value), limit.max, np.where(np.isneginf(value), limit.min, value))
        proto.graph.initializer[index].CopyFrom(numpy_helper.from_array(finite.astype(value.dtype), init.name))
        changed.append(init.name)
    return changed


def _graphs(graph: Any) -> Iterator[Any]:
    """``graph`` and every subgraph inside it (the branches of ``If``, the bodies of ``Loop`` and ``Scan``)."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for inner in attr.graphs:
                    yield from _graphs(inner)


def short_tensor_names(proto: onnx.ModelProto) -> dict[str, str]:
    """Rename, in ``proto`` (main graph and subgraphs alike), every tensor whose name is longer than
    MAX_TENSOR_NAME characters to ``edgepipe_tensor_N``; returns new name -> old name. Node names are kept:
    the compiler's layer table names layers by node."""
    graphs = list(_graphs(proto.graph))
    names: dict[str, None] = {}
    for graph in graphs:
        for values in (graph.input, graph.output, graph.value_info, graph.initializer):
            names.update(dict.fromkeys(value.name for value in values))
        for node in graph.node:
            names.update(dict.fromkeys([*node.input, *node.output]))
    taken = set(names)
    renamed: dict[str, str] = {}
    for name in names:
        if len(name) > MAX_TENSOR_NAME:
            new = f"edgepipe_tensor_{len(renamed)}"
            while new in taken:
                new += "_"
            taken.add(new)
            renamed[name] = new
    if not renamed:
        return {}
    for graph in graphs:
        for values in (graph.input, graph.output, graph.value_info, graph.initializer):
            for value in values:
                value.name = renamed.get(value.name, value.name)
        for node in graph.node:
            node.input[:] = [renamed.get(name, name) for name in node.input]
            node.output[:] = [renamed.get(name, name) for name in node.output]
    return {new: old for old, new in renamed.items()}
