"""Target profiles: declarative descriptions of devices, read from ``targets/*.toml``."""

from edgepipe.targets.profile import TargetProfile
from edgepipe.targets.registry import (
    available_targets,
    load_profile,
    load_profiles,
    profile_dirs,
    use_profile_dirs,
)

__all__ = ["TargetProfile", "available_targets", "load_profile", "load_profiles", "profile_dirs",
           "use_profile_dirs"]
