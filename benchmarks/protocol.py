"""The held-out protocol: who may count in an out-of-sample figure, read from the committed model list.

- Every model of benchmarks/agreement_models.toml gets its role when it is added, before its first run, and the
  role never changes: tests/benchmarks/test_protocol.py compares every entry (role, targets, tuned_on, round)
  with each earlier version of the file in git and fails on any change.
- A model added by a round (``round = "<date>"``) is held out, with no ``tuned_on``. Its first run, at one
  commit, is recorded once in benchmarks/results/rounds/<round>.json (benchmarks/rounds.py): that run is the
  round's out-of-sample figure.
- Looking at a held-out model's disagreements to fix a rule is allowed, but the model is then *seen* for that
  target: a line in benchmarks/seen.toml (append-only), never an edit of its role. Seen models stay in their
  round's first-run figure (it was measured before anyone looked) and leave every later held-out figure.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "benchmarks" / "agreement_models.toml"
SEEN = ROOT / "benchmarks" / "seen.toml"

#: The targets with a vendor compiler to compare against, in the order the tables show them.
AGREEMENT_TARGETS = ("ethos-u55", "ethos-u85", "mobile-npu", "rk3588", "rk3576")
#: The fewest new models a round may add.
MIN_ROUND_MODELS = 10
#: The keys an entry of agreement_models.toml may have.
ENTRY_KEYS = frozenset({"role", "targets", "tuned_on", "source", "round"})


@dataclass(frozen=True)
class ListedModel:
    """One entry of agreement_models.toml."""

    name: str
    role: str
    targets: tuple[str, ...]
    tuned_on: tuple[str, ...] = ()
    source: str = "zoo"
    round: str = ""

    def role_on(self, target: str) -> str:
        """"tuning" where the model's disagreements were looked at before the protocol (``tuned_on``), else
        its role."""
        return "tuning" if target in self.tuned_on else self.role


def parse(text: str) -> dict[str, ListedModel]:
    """The entries of an agreement_models.toml text, by model name; unknown keys are errors."""
    listed: dict[str, Any] = tomllib.loads(text).get("models", {})
    out = {}
    for name, entry in listed.items():
        unknown = set(entry) - ENTRY_KEYS
        if unknown:
            raise ValueError(f"agreement_models.toml: [models.{name}] has unknown key(s) {sorted(unknown)}; "
                             f"allowed: {sorted(ENTRY_KEYS)}")
        out[name] = ListedModel(name=name, role=entry["role"], targets=tuple(entry["targets"]),
                                tuned_on=tuple(entry.get("tuned_on", ())), source=entry.get("source", "zoo"),
                                round=entry.get("round", ""))
    return out


def listed() -> dict[str, ListedModel]:
    return parse(MODELS.read_text(encoding="utf-8"))


def round_models(name: str) -> list[ListedModel]:
    """The models round ``name`` added, in list order."""
    return [m for m in listed().values() if m.round == name]


def rounds() -> list[str]:
    """Every round named in the list, oldest first (round names are their registration dates)."""
    return sorted({m.round for m in listed().values() if m.round})


@dataclass(frozen=True)
class Seen:
    """A held-out model whose disagreements on ``targets`` were looked at (to fix a rule) after its first run."""

    model: str
    targets: tuple[str, ...]
    date: str
    why: str


def seen() -> list[Seen]:
    """benchmarks/seen.toml, in file order."""
    if not SEEN.exists():
        return []
    entries = tomllib.loads(SEEN.read_text(encoding="utf-8")).get("seen", [])
    return [Seen(model=e["model"], targets=tuple(e["targets"]), date=e["date"], why=e["why"]) for e in entries]


def held_out_now(model: ListedModel, target: str) -> bool:
    """True when ``model`` still counts as held out on ``target``: held out there and never seen there."""
    return model.role_on(target) == "held_out" and not any(
        s.model == model.name and target in s.targets for s in seen())


#: Digests of every listed entry and every round's first-run record, committed beside them: where the git history
#: cannot be read (a shallow clone), the protocol is checked against this file, which itself only grows.
LOCK = ROOT / "benchmarks" / "protocol_lock.json"


def entry_digest(model: ListedModel) -> str:
    """A digest of everything about an entry that never changes (role, targets, tuned_on, source, round)."""
    import hashlib

    text = repr((model.role, model.targets, model.tuned_on, model.source, model.round))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def file_digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def current_lock() -> dict[str, dict[str, str]]:
    """What the lock file must hold for the list and the round records as they are now."""
    from benchmarks.rounds import ROUNDS

    return {"entries": {name: entry_digest(m) for name, m in sorted(listed().items())},
            "first_runs": {p.name: file_digest(p) for p in sorted(ROUNDS.glob("*.json"))}}


def extend_lock() -> None:
    """Add the entries and first-run records the lock does not hold yet; one that changed is an error."""
    import json

    lock = json.loads(LOCK.read_text(encoding="utf-8")) if LOCK.is_file() else {"entries": {}, "first_runs": {}}
    now = current_lock()
    for part, digests in now.items():
        for name, digest in digests.items():
            if lock[part].setdefault(name, digest) != digest:
                raise SystemExit(f"{name} changed since it was locked ({part}): roles and first runs never change")
    LOCK.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n", encoding="utf-8")
