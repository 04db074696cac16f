"""Versions of edgepipe and the libraries that shape its results, for reports and cache keys."""

from __future__ import annotations

from importlib import metadata

TRACKED_PACKAGES = ("edgepipe", "tensorflow", "keras", "tf2onnx", "onnx", "onnxruntime", "ai-edge-litert", "numpy")


def package_version(name: str) -> str:
    """The installed version of ``name``, or ``'not installed'``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def tool_versions() -> dict[str, str]:
    """Versions of every package in :data:`TRACKED_PACKAGES`."""
    return {name: package_version(name) for name in TRACKED_PACKAGES}
