"""The instruction-set features of this host's CPU that decide whether int8 or fp16 inference is fast on it.

Int8 is fast on a CPU only with a dot-product instruction that multiplies and accumulates
8-bit values into 32 bits: VNNI on x86 (``avx512_vnni`` with AVX-512, ``avx_vnni`` on
AVX2-class cores), AMX tiles (``amx_int8``), the dot product of Armv8.2+ (``asimddp``, and
``i8mm``). Without one (AVX2 alone), ONNX Runtime's x86 int8 kernels multiply uint8 × int8
pairs into 16-bit sums (VPMADDUBSW) and widen them, which often loses to fp32 FMA kernels.
Fp16 arithmetic needs ``avx512_fp16`` (x86) or ``fphp``/``asimdhp`` (Arm); otherwise fp16
weights are widened to fp32. Read from ``/proc/cpuinfo`` (Linux); elsewhere only the
architecture from :mod:`platform` is known and no feature is claimed.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

#: cpuinfo flag -> the name reports give it, for the features that decide int8 and fp16 speed.
FEATURES = {
    "avx2": "AVX2", "fma": "FMA", "avx512f": "AVX-512", "avx512_vnni": "AVX-512 VNNI", "avx_vnni": "AVX-VNNI",
    "avx512_bf16": "AVX-512 BF16", "avx512_fp16": "AVX-512 FP16", "amx_tile": "AMX", "amx_int8": "AMX-INT8",
    "amx_bf16": "AMX-BF16", "asimd": "Arm NEON", "asimddp": "Arm dot product", "i8mm": "Arm I8MM",
    "fphp": "Arm FP16", "asimdhp": "Arm FP16 SIMD", "sve": "Arm SVE",
}
#: Features with an 8-bit dot product into 32 bits, best first.
INT8_DOT = ("amx_int8", "avx512_vnni", "avx_vnni", "i8mm", "asimddp")
FP16_MATH = ("avx512_fp16", "asimdhp")


class HostCpu(BaseModel):
    """This host's CPU as far as int8 and fp16 inference speed go."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(description="CPU model name from /proc/cpuinfo (None where it cannot be read).")
    architecture: str = Field(description="platform.machine(): x86_64, aarch64, ...")
    logical_cpus: int | None
    features: list[str] = Field(description="The deciding instruction-set features found, by their usual names.")
    int8_dot_product: str | None = Field(description="The best 8-bit dot-product feature (VNNI, AMX, Arm dot "
                                                     "product), or None: int8 kernels widen 16-bit pair sums.")
    fp16_arithmetic: str | None = Field(description="Fp16 arithmetic feature, or None: fp16 weights are widened.")

    def summary(self) -> str:
        """One line for a report: the CPU and what its features mean for int8 and fp16."""
        int8 = (f"int8 dot product: {self.int8_dot_product}" if self.int8_dot_product else
                "no int8 dot product (int8 kernels widen 16-bit pair sums)")
        fp16 = f"fp16 arithmetic: {self.fp16_arithmetic}" if self.fp16_arithmetic else "no fp16 arithmetic"
        features = ", ".join(self.features) or "none detected"
        return f"{self.model or 'unknown CPU'} ({self.architecture}, {self.logical_cpus} logical CPUs): {int8}; " \
               f"{fp16}; features {features}"


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def parse_cpuinfo(text: str, architecture: str, logical_cpus: int | None) -> HostCpu:
    """The :class:`HostCpu` described by a ``/proc/cpuinfo`` text (x86 ``flags``, Arm ``Features``)."""
    model = None
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "hardware", "cpu model") and model is None:
            model = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = set(value.split())
    return HostCpu(model=model, architecture=architecture, logical_cpus=logical_cpus,
                   features=[name for flag, name in FEATURES.items() if flag in flags],
                   int8_dot_product=next((FEATURES[f] for f in INT8_DOT if f in flags), None),
                   fp16_arithmetic=next((FEATURES[f] for f in FP16_MATH if f in flags), None))


def host_cpu() -> HostCpu:
    """This host's :class:`HostCpu`."""
    return parse_cpuinfo(_cpuinfo(), platform.machine(), os.cpu_count())
