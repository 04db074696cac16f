"""The vendor compiler's word on a mixed-precision candidate, before the ladder keeps it.

On a target that accepts no CPU fallback of a layer (``[quantization] cpu_fallback = false``: an Ethos-U
runs what Vela compiles for it, the rest falls to a Cortex-M), a result with layers above int8 is only worth
keeping when the target's compiler takes it whole. Where that compiler is installed, the ladder compiles each
mixed-precision artifact of the format the target deploys (the same adapter and options as the support check,
so the kept file's compile is not repeated), and the step's plain int8 artifact beside it; it does not keep a
step whose artifact the compiler rejects, or places more ops on the CPU than it does the plain int8 one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.targets.profile import TargetProfile
from edgepipe.vendors.base import CompileResult
from edgepipe.vendors.verification import compile_artifact, installed_compiler


def compiles_candidates(target: TargetProfile) -> str | None:
    """The label of the compiler that must take ``target``'s mixed-precision candidates (None: none must): its
    vendor compiler, when it is installed, the target accepts no CPU fallback and it deploys quantized files."""
    spec = target.quantization
    if spec is None or spec.cpu_fallback or target.artifact.precision == "fp32":
        return None
    return installed_compiler(target)


@dataclass(frozen=True)
class CandidateCompile:
    """One vendor compile of one candidate: for which target, by which tool, what it said, and its CPU ops beside
    those of the plain int8 artifact (None where either did not compile)."""

    target: str
    tool: str
    status: str
    detail: str
    cpu_ops: int | None = None
    int8_cpu_ops: int | None = None

    @property
    def refused(self) -> bool:
        """The compiler rejected the graph, or left more ops on the CPU than in the plain int8 model (a broken tool
        is no verdict on it)."""
        more_on_cpu = self.cpu_ops is not None and self.int8_cpu_ops is not None and self.cpu_ops > self.int8_cpu_ops
        return self.status == "compile_failed" or more_on_cpu

    def line(self, artifact: Artifact) -> str:
        said = f": {self.detail}" if self.detail and self.status != "compiled" else ""
        cpu = (f", {self.cpu_ops} ops on the CPU (plain int8: {self.int8_cpu_ops})"
               if self.cpu_ops is not None and self.int8_cpu_ops is not None else "")
        return f"{self.target}: {self.tool} {self.status} {artifact.key}{said}{cpu}"


def _cpu_ops(result: CompileResult) -> int | None:
    if result.status != "compiled":
        return None
    return sum(p == "cpu" for p in result.placement.values()) + sum(p == "cpu" for p in result.unmatched.values())


@dataclass(frozen=True)
class VendorCheck:
    """Compiles candidates for the targets among ``targets`` that :func:`compiles_candidates` names."""

    targets: tuple[TargetProfile, ...]
    work: Path

    @classmethod
    def of(cls, targets: Iterable[TargetProfile], work: Path) -> VendorCheck | None:
        """The check for ``targets`` (None when none of them needs one)."""
        needed = tuple(t for t in targets if compiles_candidates(t) is not None)
        return cls(needed, work) if needed else None

    def __call__(self, artifact: Artifact, int8: Artifact | None = None) -> list[CandidateCompile]:
        """Every needed compile of ``artifact`` (a mixed-precision candidate of one format), beside the plain int8
        artifact ``int8`` of the same format when there is one."""
        results = []
        for target in self.targets:
            if target.artifact.format != artifact.format:
                continue
            folder = self.work / target.name
            result = compile_artifact(target, artifact.path, folder / artifact.path.parent.name)
            if result is None:
                continue
            plain = compile_artifact(target, int8.path, folder / "int8") if int8 is not None else None
            results.append(CandidateCompile(target.name, result.tool, result.status, _shortened(result.detail),
                                            _cpu_ops(result), _cpu_ops(plain) if plain is not None else None))
        return results


def _shortened(detail: str, keep: int = 150) -> str:
    """A vendor message cut to its start and its end (where the reason follows the long tensor names)."""
    return detail if len(detail) <= 2 * keep else f"{detail[:keep]} … {detail[-keep:]}"
