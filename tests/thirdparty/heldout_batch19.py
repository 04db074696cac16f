"""Held-out models, batch 19: two network families and two domains no batch had, from two packages the zoo does
not pin, registered before any vendor tool saw them.

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
- surfaces-surrogates 0.0.1 (MIT): the pre-trained surrogate of the ``surfaces`` library's
  ``KNeighborsClassifierFunction`` (``surfaces_surrogates/models/k_neighbors_classifier.onnx``, 70 kB: scikit-learn's
  ``MLPRegressor`` exported by skl2onnx 1.19.1 at opset 21 with ``ai.onnx.ml``, trained on 7036 real evaluations):
  the mean cross-validated accuracy of scikit-learn's k-nearest-neighbours classifier for a hyperparameter
  configuration, predicted instead of computed. A ``Scaler`` (``ai.onnx.ml``: the standardization of the five
  inputs), two Linear layers of 128 (MatMul, Add, Relu) and a Linear 1, a Cast and a Reshape. Its batch dim is
  dynamic and pinned by ``input_shapes`` to 1, as the package's loader feeds it: ``input`` (1, 5) float32
  (``n_neighbors``, ``algorithm``, ``dataset`` and ``cv`` as encoded by the model's ``.meta.json``, and the
  fidelity, the fraction of the data set) in; ``variable`` (1, 1), the predicted accuracy, out.

Data are made as each package feeds its model, with the package's own code from the pinned wheel, its model
replaced by a recorder of what it is fed:

- deepbrain: the package's ``Extractor().run(image)`` (skimage's anti-aliased ``resize`` to 128^3, division by
  the maximum) with its TensorFlow session a recorder. Each volume (:func:`head_phantom`) is a synthetic
  T1-weighted head at 1.2 mm, (160, 192, 160) voxels in scanner units: a bright scalp, a dark skull, CSF, a
  cortex of gray matter whose surface is folded by smooth noise, white matter, lateral ventricles and a
  cerebellum, a neck, a smooth bias field, partial-volume blur and Rician-like noise; head size, position, folding
  and intensity scale seeded. The brain mask it was made with is the truth the network is checked against.
- surfaces-surrogates: the ``surfaces`` library's own ``SurrogateLoader.predict`` (``surfaces/_surrogates/
  _surrogate_loader.py`` from the pinned ``surfaces`` 0.9.0 wheel, MIT, the same author: the code that feeds the
  model inside ``KNeighborsClassifierFunction(use_surrogate=True)``: ``_encode_params`` by the model's
  ``.meta.json``) with its onnxruntime session a recorder. The configurations are drawn from the function's own
  search space (``n_neighbors`` 3 to 148 in steps of 5, ``algorithm`` one of four), its four data sets and its cv
  folds (2, 3, 5, 10) and the model's fidelity levels, kept to those the real function can evaluate (at most as
  many neighbours as a training fold holds).
"""

from __future__ import annotations

import json
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

_DB = "deepbrain/"
DEEPBRAIN = fetch.Wheel(
    requirement="deepbrain==0.1",
    filename="deepbrain-0.1-py3-none-any.whl",
    sha256="87c10e8cf906977dfc828320fb0c319e6ff4de460235cfe33a1c04906a8890de",
    members=(_DB + "models/graph.pb", _DB + "extractor.py"),
)

_SUR = "surfaces_surrogates/models/"
_KNN = _SUR + "k_neighbors_classifier.onnx"
SURROGATES = fetch.Wheel(
    requirement="surfaces-surrogates==0.0.1",
    filename="surfaces_surrogates-0.0.1-py3-none-any.whl",
    sha256="a7991f55f786a28f4114f5e206e2f2038d1df1ac98ddeb03730d27afee962f48",
    members=(_KNN, _KNN + ".meta.json"),
)
#: The ``surfaces`` library, for its loader only: the code that feeds the surrogate.
_LOADER = "surfaces/_surrogates/_surrogate_loader.py"
SURFACES = fetch.Wheel(
    requirement="surfaces==0.9.0",
    filename="surfaces-0.9.0-py3-none-any.whl",
    sha256="d5c0eebf3e8e43e295546ea01233758fb2110c14a187e04d41699d3ba6382a2d",
    members=(_LOADER,),
)
WHEELS = (DEEPBRAIN, SURROGATES, SURFACES)

#: The ONNX opset of this batch's export.
OPSET = 17


# --------------------------------------------------------------------------------------------- deepbrain

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
    with _standing_in(DEEPBRAIN, ("deepbrain.extractor",), {"tensorflow": {}}):
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


# --------------------------------------------------------------------------------------------- surrogate

#: ``KNeighborsClassifierFunction``'s search space and fixed parameters (its ``n_neighbors_default``,
#: ``algorithm_default``, ``available_cv``) and the data sets its surrogate was trained on (scikit-learn's bundled
#: ones, with their sizes).
KNN_NEIGHBORS = tuple(range(3, 150, 5))
KNN_ALGORITHMS = ("auto", "ball_tree", "kd_tree", "brute")
KNN_CV = (2, 3, 5, 10)
KNN_DATASETS = {"digits": 1797, "iris": 150, "wine": 178, "breast_cancer": 569}


def surrogate_metadata() -> dict[str, Any]:
    """The model's ``.meta.json``: its parameter order, encodings and fidelity levels."""
    return json.loads(fetch.model_file(SURROGATES, _KNN + ".meta.json").read_text())


def knn_configurations(seed: int, count: int) -> list[tuple[dict[str, Any], float]]:
    """``count`` seeded ``(params, fidelity)`` from the function's search space, data sets, cv folds and the
    model's fidelity levels, each one the real function can evaluate: at most as many neighbours as a training
    fold of the (stratified-subsampled) data set holds."""
    levels = surrogate_metadata()["fidelity_levels"]
    rng = np.random.default_rng(seed)
    chosen: list[tuple[dict[str, Any], float]] = []
    while len(chosen) < count:
        dataset = list(KNN_DATASETS)[int(rng.integers(len(KNN_DATASETS)))]
        cv, fidelity = int(rng.choice(KNN_CV)), float(rng.choice(levels))
        neighbors = int(rng.choice(KNN_NEIGHBORS))
        if neighbors <= KNN_DATASETS[dataset] * fidelity * (cv - 1) / cv:
            params = {"n_neighbors": neighbors, "algorithm": str(rng.choice(KNN_ALGORITHMS)), "dataset": dataset,
                      "cv": cv}
            chosen.append((params, fidelity))
    return chosen


class _Recorder:
    """Stands in for the loader's onnxruntime session: keeps each feed, answers a (1, 1) zero."""

    class _Input:
        name = "input"

    def __init__(self) -> None:
        self.fed: list[np.ndarray] = []

    def get_inputs(self) -> list[Any]:
        return [self._Input()]

    def run(self, names: Any, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.fed.append(np.array(feed["input"], copy=True))
        return [np.zeros((1, 1), np.float32)]


@contextmanager
def surrogate_loader() -> Iterator[Any]:
    """``feed(params, fidelity) -> (1, 5) float32``: what the ``surfaces`` library's ``SurrogateLoader.predict``
    feeds the wheel's model (``_encode_params`` in the ``.meta.json``'s order and encodings, the fidelity last),
    with the session a recorder. ``feed.loader`` is the package's loader (its real session, if asked)."""
    model = fetch.model_file(SURROGATES, _KNN)
    fetch.model_file(SURROGATES, _KNN + ".meta.json")
    with _standing_in(SURFACES, ("surfaces._surrogates._surrogate_loader",), {}):
        module = sys.modules["surfaces._surrogates._surrogate_loader"]
        loader, recorder = module.SurrogateLoader(model), _Recorder()

        def feed(params: dict[str, Any], fidelity: float) -> np.ndarray:
            real, loader._session = loader._session, recorder  # noqa: SLF001
            try:
                loader.predict(params, fidelity=fidelity)
            finally:
                loader._session = real  # noqa: SLF001
            (fed,) = recorder.fed
            recorder.fed.clear()
            return fed

        feed.loader = loader  # type: ignore[attr-defined]
        yield feed


def knn_queries(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input (N, 5) float32: k-nearest-neighbours configurations, as the library's surrogate loader feeds them."""
    with surrogate_loader() as feed:
        rows = [feed(params, fidelity)[0] for params, fidelity in knn_configurations(seed, count)]
    return {"input": np.stack(rows)}


def knn_accuracy(params: dict[str, Any]) -> float:
    """What the surrogate stands in for at fidelity 1: ``KNeighborsClassifierFunction._ml_objective``, the mean
    ``cross_val_score`` accuracy of scikit-learn's ``KNeighborsClassifier`` on the whole data set."""
    from sklearn import datasets
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    x, y = getattr(datasets, f"load_{params['dataset']}")(return_X_y=True)
    model = KNeighborsClassifier(n_neighbors=params["n_neighbors"], algorithm=params["algorithm"])
    return float(cross_val_score(model, x, y, cv=params["cv"], scoring="accuracy").mean())


_npz = zoo._npz  # noqa: SLF001

# Batch 19, held out: added before any vendor tool saw them.
BATCH19_MODELS: tuple[zoo.ZooModel, ...] = (
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
        tools=_tf2onnx_tools,
    ),
    zoo.ZooModel(
        "knn_accuracy_surrogate",
        SURROGATES,
        _KNN,
        "surfaces-surrogates' k-nearest-neighbours accuracy surrogate (ONNX as shipped: scikit-learn's MLPRegressor "
        "by skl2onnx at opset 21): an ai.onnx.ml Scaler, two MatMul + Add + Relu layers of 128 and a linear output; "
        "(1, 5) encoded hyperparameter configurations, as the surfaces library's SurrogateLoader feeds them",
        _npz(knn_queries),
        {"input_shapes": {"input": [1, 5]}},
    ),
)
