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
