"""How long ONNX QAT may train, from a cost model of one distillation step, never from a clock.

ONNX QAT (:mod:`edgepipe.quantize.qat_onnx`) runs the onnx2torch form of the graph forward and
backward under fake quantization, one calibration sample per step, and its cost grows with the model:
one step of the 800x608 layout detector takes about 1.8 s on a 2-core host, ten times a text
recognizer's (benchmarks/qat_cost.py). So that a large model cannot make a build open-ended, the
number of steps is cut to what fits a budget of *modelled* seconds (so a verdict does not depend on
machine load); when not even one pass over the samples fits, QAT is skipped with the modelled time
and the key that allows it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The cost model of one step, fitted by benchmarks/qat_cost.py on zoo models (2-core x86-64 host, one
#: torch thread): seconds per node of the ONNX graph (Python dispatch of the fx module, fake-quant
#: modules, Adam) and per multiply-accumulate of one forward pass (forward + backward kernels).
SECONDS_PER_STEP_NODE = 7.6e-5
SECONDS_PER_STEP_MAC = 1.8e-10


def step_cost(nodes: int, macs: int) -> float:
    """Modelled seconds of one distillation step of a graph of ``nodes`` nodes and ``macs`` MACs per sample."""
    return SECONDS_PER_STEP_NODE * nodes + SECONDS_PER_STEP_MAC * macs


@dataclass(frozen=True)
class QatPlan:
    """Steps QAT takes (0: skipped), out of those asked for, and the modelled seconds of one step."""

    steps: int
    wanted: int
    samples: int
    step_s: float
    budget_s: float

    @property
    def skipped(self) -> bool:
        return self.steps == 0

    @property
    def shortened(self) -> bool:
        return 0 < self.steps < self.wanted

    def explain(self) -> str:
        """One line for the ladder's trail: why QAT was skipped or shortened (empty when neither)."""
        if self.skipped:
            return (f"one pass over {self.samples} calibration samples would take about "
                    f"{self.samples * self.step_s:.0f} s (modelled {self.step_s:.2f} s a step), more than the QAT "
                    f"budget of {self.budget_s:.0f} s. Next: raise quantization.qat_budget_s, or train the model "
                    "with fake quantization in its own framework")
        if self.shortened:
            return (f"{self.steps} of {self.wanted} steps: the modelled {self.step_s:.2f} s a step fits "
                    f"quantization.qat_budget_s = {self.budget_s:.0f} s")
        return ""


def qat_plan(wanted: int, samples: int, nodes: int, macs: int, budget_s: float) -> QatPlan:
    """The steps of ``wanted`` that fit ``budget_s`` modelled seconds, in whole passes over ``samples``
    samples at least one; 0 when one pass does not fit."""
    cost = step_cost(nodes, macs)
    fits = int(budget_s / cost) if cost > 0 else wanted
    steps = min(wanted, fits)
    if steps < samples:
        steps = 0
    return QatPlan(steps=steps, wanted=wanted, samples=samples, step_s=cost, budget_s=budget_s)
