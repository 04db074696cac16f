"""Did a change move a verdict or a placement? Two build folders of the same models, compared target by target.

    python -m benchmarks.compare_builds BEFORE_ROOT AFTER_ROOT [--json OUT]

Each root holds ``<model>/<target>/report.json`` as ``edgepipe build`` writes them (several models side by side).
For every (model, target) in either root: the verdict, and per node of the support check its placement and the
constraints that failed (by name; the rule text may be reworded). Prints one line per difference and a total;
exits 1 when anything differs, so a refactoring that must not change behaviour can be checked in one command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edgepipe.report.schema import BuildReport


def _reports(root: Path) -> dict[tuple[str, str], BuildReport]:
    found = {}
    for path in sorted(root.glob("*/*/report.json")):
        found[(path.parent.parent.name, path.parent.name)] = BuildReport.model_validate_json(path.read_text())
    return found


def _placements(report: BuildReport) -> dict[str, tuple[str, tuple[str, ...]]]:
    if report.support is None:
        return {}
    return {f"{n.index}:{n.name}": (n.placement, tuple(sorted(f.constraint for f in n.failed)))
            for n in report.support.node_verdicts}


def differences(before: Path, after: Path) -> tuple[list[str], int, int]:
    """Lines naming each difference, the (model, target) pairs compared and the nodes compared."""
    old, new = _reports(before), _reports(after)
    lines, nodes = [], 0
    for key in sorted(set(old) | set(new)):
        name = "/".join(key)
        if key not in old or key not in new:
            lines.append(f"{name}: only in {'after' if key in new else 'before'}")
            continue
        a, b = old[key], new[key]
        if a.verdict != b.verdict:
            lines.append(f"{name}: verdict {a.verdict} -> {b.verdict} ({b.verdict_reason[:200]})")
        pa, pb = _placements(a), _placements(b)
        nodes += len(pa)
        for node in sorted(set(pa) | set(pb)):
            if pa.get(node) != pb.get(node):
                lines.append(f"{name}: node {node}: {pa.get(node)} -> {pb.get(node)}")
    return lines, len(set(old) & set(new)), nodes


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--json", type=Path, help="Write the comparison here too.")
    args = parser.parse_args(argv)
    lines, pairs, nodes = differences(args.before, args.after)
    for line in lines:
        print(line)  # noqa: T201 - the command's answer
    print(f"{pairs} (model, target) pairs, {nodes} nodes compared: {len(lines)} difference(s)")  # noqa: T201
    if args.json:
        args.json.write_text(json.dumps({"pairs": pairs, "nodes": nodes, "differences": lines}, indent=1) + "\n")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
