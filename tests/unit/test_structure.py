"""Dependencies point one way: no import cycle hidden behind function-level imports, and the modules that were
cycles import their dependencies at the top (function-level imports are for heavy optional libraries only)."""

from __future__ import annotations

import ast
from pathlib import Path

import edgepipe

PACKAGE = Path(edgepipe.__file__).resolve().parent

#: Modules that once formed import cycles or read reports as dicts; they import edgepipe at module level only.
TOP_LEVEL_ONLY = ("cli/app.py", "stages/per_target.py", "stages/context.py", "stages/custom_ops.py",
                  "stages/support.py", "stages/performance.py", "perf/predict.py", "perf/calibration.py",
                  "perf/report.py",
                  "report/html.py", "report/extract.py", "report/markdown.py", "targets/registry.py",
                  "cli/targets_cmd.py", "metrics/paired.py")


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(edgepipe modules imported anywhere in ``path``, those imported inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    everywhere, inside = set(), set()
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    nested = {id(n) for f in functions for n in ast.walk(f) if isinstance(n, ast.Import | ast.ImportFrom)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("edgepipe"):
            names = {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            names = {a.name for a in node.names if a.name.startswith("edgepipe")}
        else:
            continue
        everywhere |= names
        if id(node) in nested:
            inside |= names
    return everywhere, inside


def _graph() -> dict[str, set[str]]:
    files = {_module(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    return {name: {t for t in _imports(path)[0] if t in modules and t != name and not files[name].name ==
                   "__init__.py"} for name, path in files.items()}


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cli_and_per_target_stages_form_no_cycle_even_through_function_level_imports() -> None:
    cycles = [sorted(c) for c in _cycles(_graph())
              if any(m.startswith(("edgepipe.cli", "edgepipe.stages", "edgepipe.perf", "edgepipe.support",
                                   "edgepipe.report", "edgepipe.targets")) for m in c)]
    assert cycles == []


def test_stages_never_import_the_registry_back() -> None:
    importers = sorted(name for name, deps in _graph().items() if "edgepipe.stages.per_target" in deps)
    assert importers == ["edgepipe.pipeline"]


def test_former_cycle_modules_import_edgepipe_at_the_top() -> None:
    for relative in TOP_LEVEL_ONLY:
        _, inside = _imports(PACKAGE / relative)
        assert inside == set(), f"{relative}: function-level imports of {sorted(inside)}"
