"""What a legalization rewrite is (:class:`Rewrite`) and what it edits (:class:`Site`).

A rewrite replaces ops a target runs on its CPU by a form that computes the same function in ops its accelerator
lists. It edits only nodes the target's support check put on the CPU (``Site.on_cpu``) and says how many it
rewrote; whether the result is kept is decided by :mod:`edgepipe.legalize.driver` (outputs equal, placement better).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from edgepipe.graph.onnx_edit import NameScope, attributes, constant_values


@dataclass
class Site:
    """One rewrite's view of the working ONNX model.

    ``on_cpu``: names of the nodes the target places on its CPU; ``listed``: whether the target's accelerator
    lists an ONNX op; ``tensors``: (ONNX element type, shape) of the tensors shape inference knows, a dimension
    it does not know as None.
    """

    model: Any
    on_cpu: frozenset[str]
    listed: Callable[[str], bool]
    tensors: dict[str, tuple[int, tuple[int | None, ...] | None]] = field(default_factory=dict)
    _names: NameScope | None = None
    _constants: dict[str, np.ndarray] | None = None

    @property
    def opset(self) -> int:
        """The model's default-domain opset."""
        return next((o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx")), 1)

    @property
    def constants(self) -> dict[str, np.ndarray]:
        """Every constant tensor by name (initializers and ``Constant`` nodes), read once."""
        if self._constants is None:
            self._constants = constant_values(self.model)
        return self._constants

    def fresh(self, name: str) -> str:
        if self._names is None:
            self._names = NameScope(self.model)
        return self._names.fresh(name)

    def candidates(self, *ops: str) -> list[Any]:
        """The default-domain nodes of type ``ops`` that the target runs on its CPU, in graph order."""
        return [n for n in self.model.graph.node
                if n.op_type in ops and n.domain in ("", "ai.onnx") and n.name in self.on_cpu]

    def attrs(self, node: Any) -> dict[str, Any]:
        """``node``'s attributes by name, strings as ``str``."""
        return {k: v.decode() if isinstance(v, bytes) else v for k, v in attributes(node, subgraphs=False).items()}

    def consumers(self, tensor: str) -> list[Any]:
        """The nodes reading ``tensor``."""
        return [n for n in self.model.graph.node if tensor in n.input]

    def is_output(self, tensor: str) -> bool:
        return any(o.name == tensor for o in self.model.graph.output)

    def float32(self, tensor: str) -> bool:
        """Whether ``tensor`` holds float32 values (by shape inference; unknown counts as not)."""
        from onnx import TensorProto

        return tensor in self.tensors and self.tensors[tensor][0] == TensorProto.FLOAT

    def shape(self, tensor: str) -> tuple[int, ...] | None:
        """The static shape of ``tensor``; None when its rank or a dimension is unknown."""
        shape = self.tensors.get(tensor, (0, None))[1]
        if shape is None or any(d is None for d in shape):
            return None
        return tuple(int(d) for d in shape if d is not None)

    def constant(self, value: Any, name: str, dtype: Any = np.float32) -> str:
        """A new initializer holding ``value``; its name."""
        from onnx import numpy_helper

        fresh = self.fresh(name)
        self.model.graph.initializer.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), fresh))
        return fresh

    def node(self, op: str, inputs: Sequence[str], name: str, output: str | None = None, **attrs: Any) -> Any:
        """A new node named after ``name`` writing ``output`` (a fresh tensor when None)."""
        from onnx import helper

        fresh = self.fresh(name)
        return helper.make_node(op, list(inputs), [output or self.fresh(f"{fresh}_out")], name=fresh, **attrs)

    def replace(self, old: Sequence[Any], new: Sequence[Any]) -> None:
        """Put ``new`` where the last of ``old`` was and drop ``old``: ``new`` reads only tensors written before
        ``old``'s first node and writes the tensors ``old`` wrote that others read, so the order stays topological."""
        graph = self.model.graph
        gone = {n.name for n in old}
        nodes = list(graph.node)
        position = max(i for i, n in enumerate(nodes) if n.name in gone)
        order = [n for n in nodes[:position + 1] if n.name not in gone] + list(new) + [
            n for n in nodes[position + 1:] if n.name not in gone]
        del graph.node[:]
        graph.node.extend(order)

    def has(self, node: Any) -> bool:
        """Whether ``node`` (by name) is still in the graph."""
        return any(n.name == node.name for n in self.model.graph.node)

    def clip(self, tensor: str, low: float, high: float, name: str, output: str | None = None) -> Any:
        """A Clip of ``tensor`` to [low, high] in the form the model's opset takes (inputs from opset 11)."""
        if self.opset >= 11:
            return self.node("Clip", [tensor, self.constant(low, f"{name}_min"), self.constant(high, f"{name}_max")],
                             name, output)
        return self.node("Clip", [tensor], name, output, min=float(low), max=float(high))

    def reduce_mean(self, tensor: str, axes: Sequence[int], name: str) -> Any:
        """A ReduceMean over ``axes`` keeping them, in the form the model's opset takes (axes input from 18)."""
        if self.opset >= 18:
            return self.node("ReduceMean", [tensor, self.constant(list(axes), f"{name}_axes", np.int64)], name,
                             keepdims=1)
        return self.node("ReduceMean", [tensor], name, axes=list(axes), keepdims=1)


#: A rewrite's edit: rewrites what it matches among ``site``'s CPU nodes, in place; how many it rewrote.
Apply = Callable[[Site], int]


@dataclass(frozen=True)
class Rewrite:
    """One legalization: the ops it replaces, the ops its form uses, and the edit.

    The rewrite is tried on a target only when the target runs one of ``replaces`` on its CPU and its accelerator
    lists every op of ``emits`` (the rewritten form is supported).
    """

    name: str
    rule: str
    replaces: tuple[str, ...]
    emits: tuple[str, ...]
    apply: Apply
