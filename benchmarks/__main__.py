"""One command for every figure of the docs (docs/results.md, docs/reference/fidelity.md, docs/reference/zoo.md).

    python -m benchmarks all --work DIR          # every benchmark behind a figure, at this commit, then the pages
    python -m benchmarks round NAME --work DIR   # a held-out round's first run (once per round, resumable)
    python -m benchmarks in-sample --work DIR    # the agreement of every listed model at this commit (resumable)
    python -m benchmarks estimates --work DIR    # the latency estimates' error on real held-out models
    python -m benchmarks fidelity --work DIR     # which label-free proxy predicts a real int8 loss
    python -m benchmarks zoo --work DIR          # every zoo model built for every target: time, verdicts
    python -m benchmarks render                  # every page from benchmarks/results/*.json, nothing measured
    python -m benchmarks check                   # exit 1 when docs/results.md is not what the JSON gives
    python -m benchmarks lock                    # record new model entries and first runs in the protocol lock

``all`` runs, in order: the first run of every round that has no record yet, the estimates, the in-sample
agreement, the fidelity study, the zoo, then ``render``. Each writes its JSON under benchmarks/results/ only when
all its rows were measured at this commit with a clean tree; parts measured so far stay in ``--work`` for the next
call, so a run stopped by a time limit resumes (the in-sample agreement of every listed model takes many hours on
a 2-core host).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("all", "in-sample", "estimates", "fidelity", "zoo"):
        sub.add_parser(name).add_argument("--work", type=Path, required=True, help="Parts and builds (resumable).")
    one = sub.add_parser("round")
    one.add_argument("name", help="The round (its registration date in agreement_models.toml).")
    one.add_argument("--work", type=Path, required=True, help="Parts and builds (resumable).")
    one.add_argument("--status", action="store_true", help="Measure nothing: which models are done.")
    sub.add_parser("render")
    sub.add_parser("check")
    sub.add_parser("lock", help="add new model entries and first-run records to benchmarks/protocol_lock.json")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from benchmarks import rounds

    if args.command == "round":
        if args.status:
            print("\n".join(rounds.status(args.name, args.work)))  # noqa: T201 - the command's answer
            return 0
        done = rounds.run(args.name, args.work)
        print(f"wrote {done}" if done else "models remain: run the command again")  # noqa: T201
        return 0 if done else 2
    from benchmarks import estimates, fidelity_study, in_sample, protocol, realzoo, results_page

    if args.command == "lock":
        protocol.extend_lock()
        return 0
    if args.command == "fidelity":
        fidelity_study.main(["run", "--work", str(args.work)])
        return 0
    if args.command == "zoo":
        return realzoo.main(["--no-cache", "--work", str(args.work)])

    if args.command == "in-sample":
        return 0 if in_sample.run(args.work) else 2
    if args.command == "estimates":
        return 0 if estimates.run(args.work) else 2
    if args.command == "all":
        pending = 0
        for name in rounds.pending():
            pending += rounds.run(name, args.work / "rounds") is None
        pending += estimates.run(args.work / "estimates") is None
        pending += in_sample.run(args.work / "in-sample") is None
        fidelity_study.main(["run", "--work", str(args.work / "fidelity")])
        realzoo.main(["--no-cache", "--work", str(args.work / "zoo")])
        results_page.write()
        return 2 if pending else 0
    if args.command == "render":
        results_page.write()
        fidelity_study.main(["render"])
        realzoo.write_page()
        return 0
    return results_page.check()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
