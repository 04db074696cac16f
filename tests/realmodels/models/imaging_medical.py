"""Held-out medical imaging models: skull stripping of brain MRI and anatomy-guided PET reconstruction.

- deepbrain 0.1 (MIT): Extractor, Itzcovich's skull stripper for T1-weighted brain MRI
  (``deepbrain/models/graph.pb``, 1.1 MB: a TensorFlow 1 frozen graph of a small 3-D U-Net trained on manually
  verified skull-stripping data sets, with rotations and flips as augmentation so that no registration is needed).
  The graph as shipped reads its volume from a ``tf.data`` iterator (``img`` a ``PlaceholderWithDefault`` on it)
  and has dropout behind a ``training`` switch: imported with ``img`` mapped to a (1, 128, 128, 128, 1)
  placeholder and ``training`` to False (what the package's ``Extractor.run`` feeds), pruned to ``prob`` and
  exported by tf2onnx (opset 17, 0.7 MB): 10 Conv (nine 3 x 3 x 3, a 1 x 1 x 1 head), 9 Relu, 3 MaxPool
  (2 x 2 x 2, stride 2), 3 ConvTranspose (3 x 3 x 3, stride 2), 3 Concat (the skips), 2 Reshape and a Sigmoid.
  ``t1`` (1, 128, 128, 128, 1) float32 NDHWC, the volume resized to 128^3 and divided by its maximum, in;
  ``brain_prob`` (1, 128, 128, 128, 1), the probability that each voxel is brain, out.
- pyapetnet 1.5.6 (MIT): APETNet, Schramm et al.'s anatomy-guided PET reconstruction CNN ("Approximating anatomically-
  guided PET reconstruction in image space using a convolutional neural network", NeuroImage 224, 2021), its
  publication model ``190528_paper_bet_10_psf_mlem`` (``pyapetnet/trained_models/190528_paper_bet_10_psf_mlem/``,
  a Keras TensorFlow SavedModel: ``saved_model.pb`` 329 kB and 0.7 MB of variables, 171k parameters, trained on
  [18F]FDG and [18F]PE2I brain scans of a PET/MR scanner: OSEM reconstructions with PSF modelling and the
  patient's T1 MR in, MAP reconstructions with an anatomical Bowsher prior (beta 10) the target, MSE loss). It
  maps a noisy, blurred OSEM PET and its T1 MR to the PET an MR-guided MAP reconstruction would give, in image
  space. Per input a 3 x 3 x 3 Conv of 15 + PReLU, a Concat, seven 3 x 3 x 3 Conv of 30 + PReLU (no BatchNorm),
  a 1 x 1 x 1 Conv of 1 and the PET input added back (no downsampling: a 17-voxel field of view). Fully
  convolutional with every spatial dim dynamic; exported by tf2onnx (opset 17, 0.7 MB) from the SavedModel's
  ``serving_default`` signature at (1, 40, 40, 40, 1): 10 Conv, 18 Relu, 10 Add, 9 Neg and 9 Mul (each PReLU as
  Relu(x) - alpha Relu(-x)), 3 Reshape (NDHWC to NCDHW and back, one channel) and a Concat. ``pet`` and ``mr``
  (1, 40, 40, 40, 1) float32 NDHWC on the 1 mm grid, each divided by its volume's 99.99th percentile, in;
  ``pet_map`` (1, 40, 40, 40, 1), the MAP-like PET on the same scale, out.

Data are made as each package feeds its model, with the package's own code from the pinned wheel, its model
replaced by a recorder of what it is fed:

- deepbrain: the package's ``Extractor().run(image)`` (skimage's anti-aliased ``resize`` to 128^3, division by
  the maximum) with its TensorFlow session a recorder. Each volume (:func:`head_phantom`) is a synthetic
  T1-weighted head at 1.2 mm, (160, 192, 160) voxels in scanner units: a bright scalp, a dark skull, CSF, a
  cortex of gray matter whose surface is folded by smooth noise, white matter, lateral ventricles and a
  cerebellum, a neck, a smooth bias field, partial-volume blur and Rician-like noise; head size, position, folding
  and intensity scale seeded. The brain mask it was made with is the truth the network is checked against.
- pyapetnet: the package's ``preprocess_volumes`` (what its ``pyapetnet-predict-from-nifti`` runs: the MR cropped to
  the bounding box of its voxels above a tenth of its maximum, both volumes divided by their 99.99th percentile)
  with its ``registration`` module and ``SimpleITK`` stood in for: the synthetic PET and MR are made aligned on
  the training grid (1 mm), where the package's registration and linear resampling onto the cropped MR grid is a
  cut at whole voxels (:func:`_same_grid` checks that and cuts). Each head (:func:`pet_mr_head`) is a synthetic
  brain, (144, 176, 144) voxels of 1 mm, with scalp, skull, CSF and ventricles, a cortex of gray matter folded by
  smooth noise, white matter and a cerebellum; its T1 MR in scanner units with partial-volume blur, a bias field
  and noise, and its FDG PET: the uptake (gray matter four times white matter) blurred by a 4-5.5 mm resolution
  with correlated noise growing with the square root of the uptake, as an OSEM image. One head per sample, a
  40^3 cube of both preprocessed volumes centred on a seeded brain voxel. The true uptake is what the network is
  checked against.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, rename_tensors, standing_in, tf2onnx_tools

_DB = "deepbrain/"

DEEPBRAIN = fetch.Wheel(
    requirement="deepbrain==0.1",
    filename="deepbrain-0.1-py3-none-any.whl",
    sha256="87c10e8cf906977dfc828320fb0c319e6ff4de460235cfe33a1c04906a8890de",
    members=(_DB + "models/graph.pb", _DB + "extractor.py"),
)

#: The ONNX opset of the exports written here.
OPSET = 17

#: The side the package resizes every volume to (``Extractor.SIZE``).
MRI_SIDE = 128

#: The synthetic volumes: (160, 192, 160) voxels (left-right, back-front, foot-head) of 1.2 mm.
MRI_SHAPE = (160, 192, 160)

MRI_VOXEL = 1.2

#: The package's threshold: ``pred`` is ``prob`` above a half.
BRAIN_THRESHOLD = 0.5


def head_phantom(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(volume (160, 192, 160) float64 in scanner units, brain (160, 192, 160) bool)``: a synthetic T1-weighted
    head (intensities relative to white matter: scalp fat 1.1, skull 0.15, CSF 0.25, gray matter 0.7, white matter
    1, ventricles 0.2, neck 0.75), the brain (gray and white matter, ventricles and cerebellum inside the skull)
    its truth. Head size (+-6 %), position (+-5 mm), cortical folding and intensity scale (300-3000) are seeded;
    partial-volume blur, a smooth 10 % bias field and noise (2 % of white matter, rectified) are added."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng(seed)
    axes = [(np.arange(n) - (n - 1) / 2) * MRI_VOXEL for n in MRI_SHAPE]
    x, y, z = np.meshgrid(*axes, indexing="ij")
    x, y, z = x - rng.uniform(-5, 5), y - rng.uniform(-5, 5), z - rng.uniform(-5, 5)
    size = rng.uniform(0.94, 1.06, 3)

    def inside(a: float, b: float, c: float, cx: float = 0.0, cy: float = 0.0, cz: float = 0.0) -> np.ndarray:
        a, b, c = a * size[0], b * size[1], c * size[2]
        return np.sqrt(((x - cx) / a) ** 2 + ((y - cy) / b) ** 2 + ((z - cz) / c) ** 2)

    folds = gaussian_filter(rng.normal(size=MRI_SHAPE), 3.0)
    folds /= folds.std()
    skull_in = inside(67, 87, 74, cz=10) < 1
    cerebrum = inside(64, 84, 70, cz=13) + 0.025 * folds < 1
    cerebellum = inside(45, 28, 22, cy=-55, cz=-30) < 1
    brain = (cerebrum | cerebellum) & skull_in
    volume = np.zeros(MRI_SHAPE)
    volume[inside(78, 98, 85, cz=10) < 1] = 1.1
    volume[inside(72, 92, 79, cz=10) < 1] = 0.15
    volume[skull_in] = 0.25
    volume[brain] = 0.7
    volume[((inside(50, 68, 55, cz=15) + 0.06 * folds < 1) | (inside(30, 18, 13, cy=-55, cz=-30) < 1)) & brain] = 1.0
    ventricles = (inside(6, 22, 10, cx=-8, cz=20) < 1) | (inside(6, 22, 10, cx=8, cz=20) < 1)
    volume[ventricles & brain] = 0.2
    volume[(np.sqrt((x / 45) ** 2 + ((y + 10) / 50) ** 2) < 1) & (z < -60)] = 0.75
    bias = gaussian_filter(rng.normal(size=MRI_SHAPE), 12.0)
    volume = gaussian_filter(volume, 0.8) * (1 + 0.1 * bias / bias.std())
    volume = np.abs(volume + rng.normal(0, 0.02, MRI_SHAPE))
    return volume * rng.uniform(300, 3000), brain


class _Session:
    """Stands in for the extractor's ``tf.Session``: keeps what ``run`` feeds and answers zeros."""

    def __init__(self) -> None:
        self.fed: list[np.ndarray] = []

    def run(self, fetches: Any, feed_dict: dict[str, Any]) -> np.ndarray:
        assert feed_dict["training"] is False
        self.fed.append(np.asarray(feed_dict["img"]))
        return np.zeros(feed_dict["img"].shape, np.float32)


@contextmanager
def brain_extractor() -> Iterator[Any]:
    """``feed(volume) -> (1, 128, 128, 128, 1) float32``: what the package's ``Extractor().run(volume)`` feeds its
    network (the volume resized by skimage to 128^3 with anti-aliasing, divided by its maximum), with the
    TensorFlow session a recorder (``tensorflow`` is stood in for: only ``load_pb`` uses it, and it is replaced).
    ``feed.module`` is the package's ``extractor`` module."""
    with standing_in(DEEPBRAIN, ("deepbrain.extractor",), {"tensorflow": {}}):
        module = sys.modules["deepbrain.extractor"]
        session = _Session()

        def load_pb(self: Any) -> None:
            self.sess, self.img, self.training, self.prob = session, "img", "training", "prob"

        module.Extractor.load_pb = load_pb
        extractor = module.Extractor()

        def feed(volume: np.ndarray) -> np.ndarray:
            extractor.run(volume)
            (fed,) = session.fed
            session.fed.clear()
            return fed.astype(np.float32)

        feed.module = module  # type: ignore[attr-defined]
        yield feed


def mri_volumes(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """t1 (N, 128, 128, 128, 1) float32: synthetic T1 heads, as the package's ``Extractor.run`` feeds them."""
    rng = np.random.default_rng(seed)
    with brain_extractor() as feed:
        rows = [feed(head_phantom(int(rng.integers(1 << 30)))[0])[0] for _ in range(count)]
    return {"t1": np.stack(rows)}


def brain_graph() -> Any:
    """The wheel's frozen GraphDef imported as the package's ``Extractor.run`` runs it: ``img`` (the iterator's
    ``PlaceholderWithDefault``) mapped to a (1, 128, 128, 128, 1) placeholder ``t1``, ``training`` to False (the
    dropout switches then fold away), pruned to ``brain_prob``, an Identity of ``prob``."""
    import tensorflow as tf

    shipped = tf.compat.v1.GraphDef()
    shipped.ParseFromString(fetch.model_file(DEEPBRAIN, _DB + "models/graph.pb").read_bytes())
    graph = tf.Graph()
    with graph.as_default():
        t1 = tf.compat.v1.placeholder(tf.float32, [1, MRI_SIDE, MRI_SIDE, MRI_SIDE, 1], name="t1")
        (prob,) = tf.import_graph_def(shipped, input_map={"img:0": t1, "training:0": tf.constant(False)},
                                      return_elements=["prob:0"], name="")
        tf.identity(prob, name="brain_prob")
    return tf.compat.v1.graph_util.extract_sub_graph(graph.as_graph_def(), ["brain_prob"])


def export_deepbrain(path: Path) -> None:
    """tf2onnx (opset 17) of :func:`brain_graph`, its input named ``t1`` and its output ``brain_prob``."""
    import onnx
    import tf2onnx

    model, _ = tf2onnx.convert.from_graph_def(brain_graph(), input_names=["t1:0"], output_names=["brain_prob:0"],
                                              opset=OPSET)
    onnx.save(rename_tensors(model, {"t1:0": "t1", "brain_prob:0": "brain_prob"}), str(path))


_npz = zoo._npz  # noqa: SLF001

_APN = "pyapetnet/"

#: The publication's model (``model_description.md``: trained on [18F]FDG and [18F]PE2I, OSEM with PSF modelling
#: in, MAP reconstructions with an anatomical Bowsher prior of beta 10 as the target, MSE loss).
PET_MODEL = "190528_paper_bet_10_psf_mlem"

_PET_SAVED = _APN + f"trained_models/{PET_MODEL}/"

PYAPETNET = fetch.Wheel(
    requirement="pyapetnet==1.5.6",
    filename="pyapetnet-1.5.6-py3-none-any.whl",
    sha256="e89b9327bf56e8901d61c81102618a9e7042a0099db3b8d026e178e06240ef5e",
    members=(_PET_SAVED + "saved_model.pb", _PET_SAVED + "variables/variables.data-00000-of-00001",
             _PET_SAVED + "variables/variables.index", _PET_SAVED + "config.json", _APN + "preprocessing.py"),
)

#: The grid the model was trained on (its ``config.json``'s ``internal_voxsize``, mm) and the synthetic heads on
#: it: (144, 176, 144) voxels (left-right, back-front, foot-head), PET already on the MR's grid.
PET_VOXEL = 1.0

PET_HEAD_SHAPE = (144, 176, 144)

#: The side of the cube fed to the network: it is fully convolutional (8 layers of 3 x 3 x 3, a 17-voxel field
#: of view) and was trained on 29^3 patches; the package feeds whole volumes, pinned here to a 40^3 patch of the
#: preprocessed volumes that an NPU can hold.
PET_SIDE = 40

#: The package's intensity normalization: each volume divided by its 99.99th percentile.
PET_PERCENTILE = 99.99

#: Tissue labels of the heads and their T1 intensity (relative to white matter) and FDG uptake (relative to white
#: matter): background, scalp, skull, CSF (ventricles too), gray matter, white matter.
TISSUES = ("background", "scalp", "skull", "csf", "gray", "white")

T1_LEVELS = (0.0, 1.0, 0.15, 0.25, 0.65, 1.0)

FDG_LEVELS = (0.0, 0.5, 0.3, 0.1, 4.0, 1.0)


def pet_mr_head(seed: int) -> dict[str, np.ndarray]:
    """A synthetic [18F]FDG brain PET and T1-weighted MR of one head on the 1 mm grid (:data:`PET_HEAD_SHAPE`):
    ``labels`` (int8, :data:`TISSUES`), ``uptake`` (the true activity, gray matter 4x white matter, scaled by
    0.8-1.2), ``mr`` (T1 in scanner units, 300-3000, with partial-volume blur, a smooth 8 % bias field and
    rectified noise) and ``pet`` (an OSEM-like image: the activity blurred by a 4-5.5 mm FWHM resolution, with
    correlated noise of 3-15 % growing with the square root of the activity, clipped at zero, in Bq/ml-like
    units 1e3-2e4). Head size (-6 to +2 %), position (+-4 mm) and cortical folding are seeded."""
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng(seed)
    axes = [(np.arange(n) - (n - 1) / 2) * PET_VOXEL for n in PET_HEAD_SHAPE]
    x, y, z = np.meshgrid(*axes, indexing="ij")
    x, y, z = x - rng.uniform(-4, 4), y - rng.uniform(-4, 4), z - rng.uniform(-4, 4)
    size = rng.uniform(0.94, 1.02, 3)

    def inside(a: float, b: float, c: float, cx: float = 0.0, cy: float = 0.0, cz: float = 0.0) -> np.ndarray:
        a, b, c = a * size[0], b * size[1], c * size[2]
        return np.sqrt(((x - cx) / a) ** 2 + ((y - cy) / b) ** 2 + ((z - cz) / c) ** 2)

    folds = gaussian_filter(rng.normal(size=PET_HEAD_SHAPE), 2.5)
    folds /= folds.std()
    skull_in = inside(64, 80, 62, cz=4) < 1
    cerebrum = inside(61, 77, 58, cz=7) + 0.03 * folds < 1
    cerebellum = inside(40, 24, 18, cy=-48, cz=-32) < 1
    brain = (cerebrum | cerebellum) & skull_in
    white = ((inside(47, 62, 44, cz=9) + 0.07 * folds < 1) | (inside(26, 15, 10, cy=-48, cz=-32) < 1)) & brain
    ventricles = ((inside(5, 20, 9, cx=-7, cz=14) < 1) | (inside(5, 20, 9, cx=7, cz=14) < 1)) & brain
    labels = np.zeros(PET_HEAD_SHAPE, np.int8)
    labels[inside(70, 86, 68, cz=4) < 1] = 1
    labels[inside(67, 83, 65, cz=4) < 1] = 2
    labels[skull_in] = 3
    labels[brain] = 4
    labels[white] = 5
    labels[ventricles] = 3
    bias = gaussian_filter(rng.normal(size=PET_HEAD_SHAPE), 10.0)
    mr = gaussian_filter(np.asarray(T1_LEVELS)[labels], 0.7) * (1 + 0.08 * bias / bias.std())
    mr = np.abs(mr + rng.normal(0, 0.02, PET_HEAD_SHAPE)) * rng.uniform(300, 3000)
    uptake = np.asarray(FDG_LEVELS)[labels] * rng.uniform(0.8, 1.2)
    blurred = gaussian_filter(uptake, rng.uniform(4.0, 5.5) / (2 * np.sqrt(2 * np.log(2))) / PET_VOXEL)
    noise = gaussian_filter(rng.normal(size=PET_HEAD_SHAPE), 1.2)
    noise *= rng.uniform(0.03, 0.15) * np.sqrt(4 * np.maximum(blurred, 0)) / noise.std()
    pet = np.clip(blurred + noise, 0, None) * rng.uniform(1e3, 2e4)
    return {"labels": labels, "uptake": uptake, "mr": mr, "pet": pet}


def _same_grid(fixed_volume: np.ndarray, moving_volume: np.ndarray, fixed_affine: np.ndarray,
               moving_affine: np.ndarray, new_spacing: Any = (1.0, 1.0, 1.0), resample_only: bool = False,
               verbose: bool = False, **kwargs: Any) -> tuple[np.ndarray, np.ndarray, None, np.ndarray]:
    """Stands in for ``pyapetnet.registration.align_and_resample`` (SimpleITK's registration and linear resampling
    of the PET onto the MR's grid) for volumes already aligned on one grid of the training voxel size, the MR
    cropped: there it cuts the PET at the MR's crop (SimpleITK's resampling at whole-voxel shifts, exactly).
    Checks that the grids are so and returns ``(fixed, moving cut, None, fixed_affine)``."""
    shift = np.linalg.inv(moving_affine) @ fixed_affine
    assert np.allclose(shift[:-1, :-1], np.eye(3)) and np.allclose(shift[:-1, -1], np.rint(shift[:-1, -1]))
    assert np.allclose(np.linalg.norm(fixed_affine[:-1, :-1], axis=0), new_spacing)
    start = np.rint(shift[:-1, -1]).astype(int)
    assert (start >= 0).all() and (start + fixed_volume.shape <= moving_volume.shape).all()
    cut = moving_volume[tuple(slice(a, a + n) for a, n in zip(start, fixed_volume.shape))]
    return fixed_volume, cut, None, fixed_affine


@contextmanager
def pet_preprocessor() -> Iterator[Any]:
    """``feed(pet, mr) -> (pet (D, H, W) float32, mr (D, H, W) float32, origin (3,) int)``: what the package's
    ``preprocess_volumes`` (run by its ``pyapetnet-predict-from-nifti``) makes of a PET and an MR on the 1 mm grid
    with identity affines (the MR cropped to the bounding box of its voxels above a tenth of its maximum, both
    divided by their 99.99th percentile), ``origin`` the crop's corner in the input grid. ``SimpleITK`` and the
    package's ``registration`` module are stood in for (:func:`_same_grid`). ``feed.module`` is the package's
    ``preprocessing`` module."""
    stand_ins = {"SimpleITK": {"Transform": object}, "pyapetnet.registration": {"align_and_resample": _same_grid}}
    with standing_in(PYAPETNET, ("pyapetnet.preprocessing",), stand_ins):
        module = sys.modules["pyapetnet.preprocessing"]

        def feed(pet: np.ndarray, mr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            affine = np.eye(4)
            pet_, mr_, mr_affine, _, _, _ = module.preprocess_volumes(
                pet, mr, affine, affine, PET_VOXEL * np.ones(3), perc=PET_PERCENTILE, coreg=True, crop_mr=True)
            return pet_, mr_, np.rint(mr_affine[:-1, -1]).astype(int)

        feed.module = module  # type: ignore[attr-defined]
        yield feed


def pet_patch_corner(labels: np.ndarray, seed: int) -> tuple[int, int, int]:
    """A seeded corner of a :data:`PET_SIDE` cube of ``labels`` centred on a brain voxel (gray or white matter)
    with the whole cube inside the volume."""
    rng = np.random.default_rng(seed)
    half = PET_SIDE // 2
    inner = np.zeros(labels.shape, bool)
    inner[half:-half, half:-half, half:-half] = True
    candidates = np.argwhere(inner & (labels >= 4))
    centre = candidates[int(rng.integers(len(candidates)))]
    return tuple(int(c) - half for c in centre)  # type: ignore[return-value]


def pet_patches_with_truth(count: int, seed: int) -> list[dict[str, np.ndarray]]:
    """``count`` samples, each from its own head: ``pet`` and ``mr`` (1, 40, 40, 40, 1) float32 as the package's
    preprocessing makes them, ``labels`` and ``uptake`` (40, 40, 40) of the same cube."""
    rng = np.random.default_rng(seed)
    samples = []
    with pet_preprocessor() as feed:
        for _ in range(count):
            head = pet_mr_head(int(rng.integers(1 << 30)))
            pet, mr, origin = feed(head["pet"], head["mr"])
            window = tuple(slice(o, o + s) for o, s in zip(origin, pet.shape))
            labels = head["labels"][window]
            corner = pet_patch_corner(labels, int(rng.integers(1 << 30)))
            cube = tuple(slice(c, c + PET_SIDE) for c in corner)
            samples.append({"pet": pet[cube][None, ..., None], "mr": mr[cube][None, ..., None],
                            "labels": labels[cube], "uptake": head["uptake"][window][cube]})
    return samples


def pet_mr_patches(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """pet and mr (N, 40, 40, 40, 1) float32: cubes of synthetic FDG PET and T1 MR heads, as the package's
    preprocessing feeds them."""
    samples = pet_patches_with_truth(count, seed)
    return {key: np.concatenate([s[key] for s in samples]) for key in ("pet", "mr")}


def export_pyapetnet(path: Path) -> None:
    """tf2onnx (opset 17) of the SavedModel's ``serving_default`` signature at (1, 40, 40, 40, 1) twice, its inputs
    named ``pet`` (``input_0``) and ``mr`` (``input_1``) and its output ``pet_map`` (``add_0``)."""
    import io
    from contextlib import redirect_stderr

    import onnx
    import tensorflow as tf
    import tf2onnx

    folder = fetch.model_file(PYAPETNET, _PET_SAVED + "saved_model.pb").parent
    for member in PYAPETNET.members:
        fetch.model_file(PYAPETNET, member)
    loaded = tf.saved_model.load(str(folder))  # kept: the signature holds only weak references
    specs = [tf.TensorSpec((1, PET_SIDE, PET_SIDE, PET_SIDE, 1), tf.float32, name=name) for name in ("pet", "mr")]

    @tf.function(input_signature=specs)
    def apetnet(pet: Any, mr: Any) -> Any:
        return loaded.signatures["serving_default"](input_0=pet, input_1=mr)["add_0"]

    with redirect_stderr(io.StringIO()):
        graph, _ = tf2onnx.convert.from_function(apetnet, input_signature=specs, opset=OPSET)
    onnx.save(rename_tensors(graph, {graph.graph.output[0].name: "pet_map"}), str(path))


MODELS: tuple[zoo.ZooModel, ...] = (
    Exported(
        "deepbrain_extractor",
        DEEPBRAIN,
        _DB + "models/graph.pb",
        "deepbrain's Extractor, a 3-D U-Net skull stripper for T1 brain MRI shipped as a TensorFlow 1 frozen graph "
        "(its tf.data input and dropout switch mapped away) and exported by tf2onnx at opset 17: 3x3x3 Conv + Relu, "
        "3-D MaxPool, stride-2 3-D ConvTranspose, skip Concat and a per-voxel Sigmoid; (1, 128, 128, 128, 1) NDHWC "
        "synthetic T1 heads, as the package's Extractor.run feeds them",
        _npz(mri_volumes),
        {"input_shapes": {"t1": [1, MRI_SIDE, MRI_SIDE, MRI_SIDE, 1]}},
        export=export_deepbrain,
        tools=tf2onnx_tools,
    ),
    Exported(
        "pyapetnet_pet_mr",
        PYAPETNET,
        _PET_SAVED + "saved_model.pb",
        "pyapetnet's anatomy-guided PET reconstruction CNN (the publication's model), a Keras TensorFlow SavedModel "
        "exported by tf2onnx at opset 17: two inputs, a 3x3x3 Conv + PReLU path each, a Concat, seven 3x3x3 Conv + "
        "PReLU layers of 30, a 1x1x1 Conv and the PET input added back; (1, 40, 40, 40, 1) NDHWC "
        "cubes of synthetic FDG PET and T1 MR heads, as the package's preprocess_volumes feeds them",
        _npz(pet_mr_patches),
        {"input_shapes": {"pet": [1, PET_SIDE, PET_SIDE, PET_SIDE, 1], "mr": [1, PET_SIDE, PET_SIDE, PET_SIDE, 1]}},
        export=export_pyapetnet,
        tools=tf2onnx_tools,
    ),
)
