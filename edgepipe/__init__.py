"""edgepipe: take a trained network to edge NPUs, and prove in CI that it still works there."""

from edgepipe.versions import package_version

__version__ = package_version("edgepipe")
