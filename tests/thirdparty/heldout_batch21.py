"""Held-out models, batch 21: two network families and two domains no batch had, from two packages the zoo does
not pin, registered before any vendor tool saw them.

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
- opal-net 2023.9.4 (MIT): OpalNet, Evening's osu!mania score-accuracy predictor, a neural collaborative filtering
  network (``opal/models/2023.9.4/.../evaluation/model.ckpt``, 8.6 MB: a PyTorch Lightning checkpoint with its
  optimizer state, 458k parameters, trained on the top-10000 players' ranked scores; its hyperparameters pickle
  the fitted scikit-learn ``LabelEncoder``s of the 34928 players (``{PLAYER_ID}/{YEAR}``) and 22246 maps
  (``{MAP_ID}/{SPEED}``, speed -1 half time, 0 normal, 1 double time) and the ``QuantileTransformer`` of the
  accuracies to a normal distribution). The package's ``OpalNetModule``: player and map embeddings of 8 (Gather),
  each BatchNorm'd, their concatenation and their product, each BatchNorm'd again, concatenated (24), a Linear
  24 + BatchNorm + SiLU and a Linear 1. Built as ``OpalNet.load_from_checkpoint`` builds it and exported by
  ``torch.onnx.export`` (TorchScript, opset 17, static shapes; 1.8 MB: 5 BatchNormalization, 4 Gather, 2 Concat,
  2 Mul, 2 Gemm, a Sigmoid): ``uid`` and ``mid`` (1, 1) int64, the player's and the map's index in the
  vocabulary, in; ``accuracy_normal`` (1, 1), the predicted accuracy as the quantile transformer's normal score
  (the package's ``predict`` inverts it to an accuracy, 85 to 100 %), out.

Data are made as each package feeds its model, with the package's own code from the pinned wheel, its model
replaced by a recorder of what it is fed:

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
- opal-net: the package's ``OpalNet.predict(players, maps)`` (the checkpoint's ``LabelEncoder``s, one column of
  indices) with its ``OpalNetModule`` a recorder; ``pytorch_lightning`` stood in for by ``torch.nn.Module``.
  Seeded (player, map) queries drawn from the checkpoint's own vocabulary, one per sample.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch15 import Exported
from tests.thirdparty.heldout_batch16 import _tf2onnx_tools, rename_tensors
from tests.thirdparty.heldout_batch18 import _standing_in

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
_OPAL = "opal/"
#: The checkpoint the wheel ships (the package's ``conf.LATEST_MODEL_CKPT`` still names an older one, not shipped).
OPAL_CKPT = _OPAL + ("models/2023.9.4/2023_09_01_performance_mania_top_10000_20230904212037.csv/lightning_logs/"
                     "version_20/evaluation/model.ckpt")
_OPAL_MODULES = ("opal.conf", "opal.module.opal_net_module", "opal.module.opal_net", "opal.module")
OPAL_NET = fetch.Wheel(
    requirement="opal-net==2023.9.4",
    filename="opal_net-2023.9.4-py3-none-any.whl",
    sha256="8b4029531d74ad4b637995ba5b808f690b0e2bf171848dfaa2e4c3f70aeaf4f6",
    members=(OPAL_CKPT, _OPAL + "conf.py", _OPAL + "module/__init__.py", _OPAL + "module/opal_net.py",
             _OPAL + "module/opal_net_module.py"),
)
WHEELS = (PYAPETNET, OPAL_NET)

#: The ONNX opset of this batch's exports.
OPSET = 17


# --------------------------------------------------------------------------------------------- pyapetnet

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
    with _standing_in(PYAPETNET, ("pyapetnet.preprocessing",), stand_ins):
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


# --------------------------------------------------------------------------------------------- opal

#: The map speeds of the model's map ids (``{MAP_ID}/{SPEED}``): half time, normal time, double time.
OPAL_SPEEDS = (-1, 0, 1)


def _opal_checkpoint() -> dict[str, Any]:
    """The wheel's Lightning checkpoint: ``state_dict`` and ``hyper_parameters`` (the fitted scikit-learn
    ``LabelEncoder``s of the player and map ids and the ``QuantileTransformer`` of the accuracies, pickled by
    scikit-learn 1.3; their version warnings are silenced)."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.load(fetch.model_file(OPAL_NET, OPAL_CKPT), map_location="cpu", weights_only=False)


@contextmanager
def opal_predictor() -> Iterator[Any]:
    """``feed(players, maps) -> (uid (N, 1) int64, mid (N, 1) int64)``: what the package's ``OpalNet.predict(players,
    maps)`` feeds its network (each ``{PLAYER_ID}/{YEAR}`` and ``{MAP_ID}/{SPEED}`` encoded by the checkpoint's
    ``LabelEncoder``s, one column), with the network a recorder. The ``OpalNet`` is built from the checkpoint as
    ``OpalNet.load_from_checkpoint`` builds it (its hyperparameters, then its state dict), ``pytorch_lightning``
    stood in for by ``torch.nn.Module``. ``feed.net`` is the package's ``OpalNet`` (its real network)."""
    import torch

    class LightningModule(torch.nn.Module):
        def save_hyperparameters(self, *args: Any, **kwargs: Any) -> None:
            pass

    checkpoint = _opal_checkpoint()
    with _standing_in(OPAL_NET, _OPAL_MODULES, {"pytorch_lightning": {"LightningModule": LightningModule}}):
        net = sys.modules["opal.module.opal_net"].OpalNet(**checkpoint["hyper_parameters"])
        net.load_state_dict(checkpoint["state_dict"])
        net.eval()
        fed: list[tuple[np.ndarray, np.ndarray]] = []

        class Recorder(torch.nn.Module):
            def forward(self, uid: Any, mid: Any) -> Any:
                fed.append((uid.numpy().copy(), mid.numpy().copy()))
                return torch.zeros((uid.shape[0], 1))

        record = Recorder()

        def feed(players: list[str], maps: list[str]) -> tuple[np.ndarray, np.ndarray]:
            network, net.model = net.model, record
            try:
                with torch.no_grad():
                    net.predict(players, maps)
            finally:
                net.model = network
            (pair,) = fed
            fed.clear()
            return pair

        feed.net = net  # type: ignore[attr-defined]
        yield feed


def opal_vocabulary() -> tuple[np.ndarray, np.ndarray]:
    """The checkpoint's players (``{PLAYER_ID}/{YEAR}``, 34928) and maps (``{MAP_ID}/{SPEED}``, 22246)."""
    parameters = _opal_checkpoint()["hyper_parameters"]
    return parameters["uid_le"].classes_, parameters["mid_le"].classes_


def opal_pairs(count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` seeded (player, map) queries drawn from the checkpoint's vocabulary."""
    players, maps = opal_vocabulary()
    rng = np.random.default_rng(seed)
    return [(str(players[rng.integers(len(players))]), str(maps[rng.integers(len(maps))])) for _ in range(count)]


def opal_queries(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """uid and mid (N, 1) int64: player and map queries, as the package's ``OpalNet.predict`` feeds them."""
    pairs = opal_pairs(count, seed)
    with opal_predictor() as feed:
        uid, mid = feed([player for player, _ in pairs], [map_ for _, map_ in pairs])
    return {"uid": uid, "mid": mid}


def export_opal(path: Path) -> None:
    """``torch.onnx.export`` of the package's ``OpalNetModule`` as built from the checkpoint (TorchScript exporter,
    opset 17, static shapes) at one query, its inputs named ``uid`` and ``mid`` (1, 1) int64 and its output
    ``accuracy_normal`` (1, 1): the accuracy as the checkpoint's ``QuantileTransformer`` maps it to a standard
    normal (the package's ``predict`` inverts it)."""
    import torch

    with opal_predictor() as feed:
        network = feed.net.model.eval()
    one = torch.zeros((1, 1), dtype=torch.int64)
    with torch.no_grad():
        torch.onnx.export(network, (one, one), str(path), opset_version=OPSET, dynamo=False,
                          do_constant_folding=True, input_names=["uid", "mid"], output_names=["accuracy_normal"])


def _torch_tools() -> str:
    import torch

    return f"torch-{torch.__version__}"


_npz = zoo._npz  # noqa: SLF001

# Batch 21, held out: added before any vendor tool saw them.
BATCH21_MODELS: tuple[zoo.ZooModel, ...] = (
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
        tools=_tf2onnx_tools,
    ),
    Exported(
        "opal_accuracy_ncf",
        OPAL_NET,
        OPAL_CKPT,
        "opal-net's osu!mania score-accuracy predictor, a neural collaborative filtering network (a Lightning "
        "checkpoint built by the package's OpalNet) exported by torch.onnx at opset 17: player and map embeddings of "
        "8 (Gather over 34928 and 22246 rows), BatchNorm, their product and concatenation, a Linear 24 + SiLU and "
        "a Linear 1; (1, 1) int64 player and map ids, as the package's OpalNet.predict feeds them",
        _npz(opal_queries),
        {"input_shapes": {"uid": [1, 1], "mid": [1, 1]}},
        export=export_opal,
        tools=_torch_tools,
    ),
)
