"""Run the legalization driver on a generated graph and read back what it made."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from edgepipe.config import LegalizeConfig
from edgepipe.legalize import CheckSamples, Legalized, legalize_model
from edgepipe.legalize.equivalence import max_relative_error, outputs_of
from edgepipe.targets.profile import TargetProfile
from tests.unit.legalize import graphs


@dataclass(frozen=True)
class Run:
    """One legalization: the original file, the result, and the ops of the rewritten model (of the original if none)."""

    source: Path
    result: Legalized
    ops: Counter[str]
    samples: list[list[np.ndarray]]

    @property
    def outcomes(self) -> dict[str, str]:
        return {r.name: r.status for r in self.result.report.rewrites}

    def error(self) -> float:
        """The rewritten model's largest output error against the original, measured here (not by the driver)."""
        assert self.result.path is not None
        return max_relative_error(outputs_of(self.source, self.samples), outputs_of(self.result.path, self.samples))

    def model(self) -> Any:
        return onnx.load(str(self.result.path or self.source))


Legalize = Callable[..., Run]


@pytest.fixture
def legalize(tmp_path: Path) -> Legalize:
    def run(model: Any, profile: TargetProfile, switches: LegalizeConfig | None = None) -> Run:
        source = graphs.save(model, tmp_path / "model.onnx")
        work = tmp_path / "work"
        work.mkdir(exist_ok=True)
        samples = graphs.samples(model)
        check = CheckSamples(samples, "random", outputs_of(source, samples))
        result = legalize_model(source, profile, check, switches or LegalizeConfig(), work)
        ops = Counter(n.op_type for n in onnx.load(str(result.path or source)).graph.node)
        return Run(source, result, ops, samples)

    return run
