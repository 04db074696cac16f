"""Constraint predicates: each is a named function ``(node, graph, param) -> (ok, detail)``.

The docstring's first paragraph is the rule, with ``{param}`` standing for the
value the profile gives; the per-device report and the generated supported-ops
documents both come from it, so they never drift. Adding a constraint is one
decorated function in one of this package's modules; a profile then names it
under an op (``[tflite.ops.CONV_2D] stride_max = 3``).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from edgepipe.graph.opgraph import OpGraph, OpNode

#: (ok, detail): whether the node meets the rule, and the values that decided it ("CONV_2D stride 5 > 3").
Verdict = tuple[bool, str]
Predicate = Callable[[OpNode, OpGraph, Any], Verdict]


@dataclass(frozen=True)
class Constraint:
    """A registered predicate, its parameter type and its rule text."""

    name: str
    predicate: Predicate
    param_type: Any
    rule_template: str

    def rule(self, param: Any) -> str:
        """The rule with the profile's parameter filled in."""
        shown = ", ".join(str(p) for p in param) if isinstance(param, list | tuple) else param
        return self.rule_template.format(param=shown)

    def validate_param(self, value: Any) -> Any:
        """The parameter coerced to its declared type; ``ValueError`` naming the constraint if it does not fit."""
        try:
            return TypeAdapter(self.param_type).validate_python(value)
        except ValidationError as exc:
            raise ValueError(f"constraint '{self.name}' takes {self.param_type}: {exc.errors()[0]['msg']}") from None

    def __call__(self, node: OpNode, graph: OpGraph, param: Any) -> Verdict:
        return self.predicate(node, graph, param)


CONSTRAINTS: dict[str, Constraint] = {}


def constraint(func: Predicate) -> Predicate:
    """Register ``func`` under its name; its third parameter's annotation is the profile value's type."""
    hints = typing.get_type_hints(func)
    param_name = list(inspect.signature(func).parameters)[2]
    doc = inspect.cleandoc(func.__doc__ or "").split("\n\n")[0].replace("\n", " ")
    if not doc:
        raise TypeError(f"constraint {func.__name__} needs a docstring: it is the rule's text")
    CONSTRAINTS[func.__name__] = Constraint(func.__name__, func, hints[param_name], doc)
    return func


def load_constraints() -> dict[str, Constraint]:
    """Every registered constraint (importing the modules that define them)."""
    from edgepipe.rules import (  # noqa: F401 - registration side effect
        axes,
        constants,
        control_flow,
        dense,
        elementwise,
        fused_patterns,
        gather,
        graph_io,
        node_units,
        quantization,
        reshape,
        sequence,
        spatial,
        tensors,
    )

    return CONSTRAINTS
