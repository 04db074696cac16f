"""Every vendor toolchain edgepipe knows: one line each. A profile picks one by name in ``vendor_tool``."""

from __future__ import annotations

from collections.abc import Callable

from edgepipe.targets.profile import TargetProfile
from edgepipe.vendors.base import OptionError, Toolchain, split_vendor_tool
from edgepipe.vendors.qnn.emulator import QnnHtp
from edgepipe.vendors.rknn.toolkit import Rknn
from edgepipe.vendors.vela import Vela

#: Tool name (the first word of a profile's ``vendor_tool``) -> adapter factory.
TOOLCHAINS: dict[str, Callable[[], Toolchain]] = {
    "vela": Vela,
    "qnn": QnnHtp,
    "rknn": Rknn,
}


def get_toolchain(name: str) -> Toolchain:
    """The adapter called ``name``; ``OptionError`` naming the known ones otherwise."""
    if name not in TOOLCHAINS:
        raise OptionError(f"unknown toolchain '{name}'. Known: {', '.join(sorted(TOOLCHAINS))}")
    return TOOLCHAINS[name]()


def toolchain_for(profile: TargetProfile) -> tuple[Toolchain, dict[str, str]] | None:
    """The profile's vendor toolchain and the options it names, or None when it names none.

    Ethos-U options are completed from the profile's performance section (system configuration, memory mode),
    so the placement check and the performance estimate compile with the same settings.
    """
    if not profile.vendor_tool:
        return None
    name, words = split_vendor_tool(profile.vendor_tool)
    tool = get_toolchain(name)
    options = tool.parse_options(words)
    spec = profile.performance
    if name == "vela" and spec is not None:
        for key, value in (("accelerator-config", spec.vela_accelerator),
                           ("system-config", spec.vela_system_config), ("memory-mode", spec.vela_memory_mode)):
            if value:
                options.setdefault(key, value)
    return tool, options
