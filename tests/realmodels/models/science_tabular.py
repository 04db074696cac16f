"""Held-out models of tabular and time-series data: a hyperparameter surrogate, a time-series forecaster
and a score predictor by collaborative filtering.

- surfaces-surrogates 0.0.1 (MIT): the pre-trained surrogate of the ``surfaces`` library's
  ``KNeighborsClassifierFunction`` (``surfaces_surrogates/models/k_neighbors_classifier.onnx``, 70 kB: scikit-learn's
  ``MLPRegressor`` exported by skl2onnx 1.19.1 at opset 21 with ``ai.onnx.ml``, trained on 7036 real evaluations):
  the mean cross-validated accuracy of scikit-learn's k-nearest-neighbours classifier for a hyperparameter
  configuration, predicted instead of computed. A ``Scaler`` (``ai.onnx.ml``: the standardization of the five
  inputs), two Linear layers of 128 (MatMul, Add, Relu) and a Linear 1, a Cast and a Reshape. Its batch dim is
  dynamic and pinned by ``input_shapes`` to 1, as the package's loader feeds it: ``input`` (1, 5) float32
  (``n_neighbors``, ``algorithm``, ``dataset`` and ``cv`` as encoded by the model's ``.meta.json``, and the
  fidelity, the fraction of the data set) in; ``variable`` (1, 1), the predicted accuracy, out.
- fracast 0.1.0: Fracast-0, an 85k-parameter zero-shot time-series forecaster (``fracast/weights/``: the W8
  release ``model.int8.safetensors`` with ``w8_manifest.json`` and ``config.json``, 113 kB, int8 weights with
  per-channel scales that the package's ``load_fracast`` dequantizes to float32; no ONNX ships). Attention-free:
  one causal dilated depthwise-separable convolution block with SwiGLU and RMSNorm, shared across a ladder of ten
  dilations (1 to 512) with FiLM scale conditioning, over 2048 steps; a periodogram (an rFFT, Bonferroni-filtered
  local maxima, TopK of 4 periods, Round) feeds sin/cos phase features; a gather head folds the context by its
  primary period into 16 phase bins (one-hot phase indices, a batched MatMul, GatherElements) and a causal
  convolution over the 48-step horizon returns 9 quantiles (0.1 to 0.9). Exported here with ``torch.onnx.export``
  (dynamo, opset 18, one file; about 2 MB, two ``DFT``, two ``TopK``, ``IsNaN``/``IsInf``): ``values`` (1, 1, 2048)
  float32 and ``valid`` (1, 1, 2048) bool in, ``quantiles`` (1, 48, 9) float32 out, the call ``_predict_rows``
  makes (the coverage input it passes is ``valid`` as float, computed in the graph).
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

- surfaces-surrogates: the ``surfaces`` library's own ``SurrogateLoader.predict`` (``surfaces/_surrogates/
  _surrogate_loader.py`` from the pinned ``surfaces`` 0.9.0 wheel, MIT, the same author: the code that feeds the
  model inside ``KNeighborsClassifierFunction(use_surrogate=True)``: ``_encode_params`` by the model's
  ``.meta.json``) with its onnxruntime session a recorder. The configurations are drawn from the function's own
  search space (``n_neighbors`` 3 to 148 in steps of 5, ``algorithm`` one of four), its four data sets and its cv
  folds (2, 3, 5, 10) and the model's fidelity levels, kept to those the real function can evaluate (at most as
  many neighbours as a training fold holds).
- Fracast: ``FracastModel._predict_rows`` (its min-max normalization of the last 2048 steps, the left zero padding
  and ``valid`` mask of a shorter context, NaN gaps masked) with ``core`` and ``head`` replaced by recorders, on
  series of six kinds cycled per sample (:func:`series_like`: hourly electricity load, hourly road traffic, hourly
  temperature, daily retail sales, monthly airline passengers, a random walk), some with a shorter context or a
  gap of missing steps.
- opal-net: the package's ``OpalNet.predict(players, maps)`` (the checkpoint's ``LabelEncoder``s, one column of
  indices) with its ``OpalNetModule`` a recorder; ``pytorch_lightning`` stood in for by ``torch.nn.Module``.
  Seeded (player, map) queries drawn from the checkpoint's own vocabulary, one per sample.
"""

from __future__ import annotations

import json
import struct
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, standing_in, torch_tools, wheel_modules

_FRA = "fracast/"

#: The package's modules ``fracast.inference`` needs, in import order.
_FRACAST_MODULES = ("fracast._core.quant", "fracast._core.periodic.official_encoding",
                    "fracast._core.periodic.official_periodogram", "fracast._core.periodic.encoder",
                    "fracast._core.periodic.seasonal_fill", "fracast._core.self_similar_block",
                    "fracast._core.future_conv", "fracast._core.gather_head", "fracast._core.model",
                    "fracast._core.safetensors_io", "fracast.inference")

FRACAST = fetch.Wheel(
    requirement="fracast==0.1.0",
    filename="fracast-0.1.0-py3-none-any.whl",
    sha256="54a2c442ffeb8e1763733d37415326df122e0580640d6c3d02211883429fb892",
    members=(_FRA + "weights/model.int8.safetensors", _FRA + "weights/w8_manifest.json",
             _FRA + "weights/config.json", *(m.replace(".", "/") + ".py" for m in _FRACAST_MODULES)),
)

#: The series kinds, cycled over the samples (hourly, daily and monthly steps).
SERIES_KINDS = ("hourly_load", "hourly_traffic", "hourly_temperature", "daily_sales", "monthly_passengers",
                "random_walk")

#: Fracast's context and horizon (``config.json``: ``W`` and ``horizon``).
FRACAST_CONTEXT = 2048

FRACAST_HORIZON = 48


def _ar1(rng: np.random.Generator, length: int, phi: float, scale: float) -> np.ndarray:
    noise = rng.normal(0, scale, length)
    out = np.empty(length)
    out[0] = noise[0]
    for i in range(1, length):
        out[i] = phi * out[i - 1] + noise[i]
    return out


def series_like(kind: str, length: int, seed: int) -> np.ndarray:
    """``length`` float64 steps of one of :data:`SERIES_KINDS`: seasonal patterns at their natural periods (24 and
    168 hours, 7 days, 12 months) with trends, autocorrelated noise and a seeded phase."""
    rng = np.random.default_rng(seed)
    t = np.arange(length) + int(rng.integers(0, 24 * 7))
    if kind == "hourly_load":  # MW: a morning and an evening peak, lower at weekends, a slow trend
        hour, weekend = t % 24, (t // 24) % 7 >= 5
        daily = 0.6 * np.exp(-0.5 * ((hour - 9) / 2.5) ** 2) + 0.9 * np.exp(-0.5 * ((hour - 19) / 2.5) ** 2)
        return 5 + daily * np.where(weekend, 0.6, 1.0) - 0.35 * weekend + 3e-4 * t + _ar1(rng, length, 0.9, 0.04)
    if kind == "hourly_traffic":  # vehicles an hour: rush hours on weekdays, a midday hump at weekends
        hour, weekend = t % 24, (t // 24) % 7 >= 5
        weekday = 300 * np.exp(-0.5 * ((hour - 8) / 1.2) ** 2) + 350 * np.exp(-0.5 * ((hour - 17) / 1.5) ** 2)
        rate = 40 + np.where(weekend, 200 * np.exp(-0.5 * ((hour - 14) / 3) ** 2), weekday + 80 * (hour > 6))
        return rng.poisson(rate).astype(np.float64)
    if kind == "hourly_temperature":  # degrees C: a daily cycle on a seasonal drift and weather fronts
        return (12 + 8 * np.sin(2 * np.pi * (t / (24 * 365) + rng.uniform(0, 1)))
                + 5 * np.sin(2 * np.pi * (t % 24 - 9) / 24) + _ar1(rng, length, 0.98, 0.3))
    if kind == "daily_sales":  # units: a weekly profile, growth, multiplicative noise, a few promotion days
        profile = np.array([0.8, 0.85, 0.9, 1.0, 1.2, 1.5, 1.1])[t % 7]
        promo = 1 + 0.6 * (rng.random(length) < 0.02)
        return 100 * profile * (1 + 5e-4 * t) * promo * rng.lognormal(0, 0.08, length)
    if kind == "monthly_passengers":  # thousands: growth with a summer peak that grows with it
        season = np.array([0.9, 0.87, 1.0, 0.97, 0.98, 1.1, 1.23, 1.22, 1.05, 0.92, 0.8, 0.9])[t % 12]
        return (120 + 2.5 * (t - t[0])) * season * rng.lognormal(0, 0.03, length)
    assert kind == "random_walk", kind
    return 50 + np.cumsum(rng.normal(0, 1, length))


def series_sample(k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Sample ``k``'s context (NaN where a gap is missing) and the ``FRACAST_HORIZON`` steps after it, of the kind
    ``k`` cycles to: hourly and random-walk contexts are 2048 steps or more (every third round of kinds a shorter
    one), daily and monthly ones shorter, as such records are; every fourth context has a gap of missing steps."""
    kind = SERIES_KINDS[k % len(SERIES_KINDS)]
    if kind == "daily_sales":
        length = int(rng.integers(400, 1100))
    elif kind == "monthly_passengers":
        length = int(rng.integers(120, 300))
    elif (k // len(SERIES_KINDS)) % 3 == 2:
        length = int(rng.integers(300, FRACAST_CONTEXT))
    else:
        length = FRACAST_CONTEXT + int(rng.integers(0, 500))
    series = series_like(kind, length + FRACAST_HORIZON, int(rng.integers(1 << 30)))
    context = series[:length].copy()
    if k % 4 == 3:
        start = int(rng.integers(length // 4, length // 2))
        context[start:start + int(rng.integers(5, 40))] = np.nan
    return context, series[length:]


class _FracastCore:
    """Stands in for the Fracast encoder: records ``values`` and ``valid`` and answers zeros of its
    (batch, 2048, 64) shape."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.feeds: list[dict[str, np.ndarray]] = []

    def to(self, **_: Any) -> _FracastCore:
        return self

    def eval(self) -> _FracastCore:
        return self

    def __call__(self, values: Any, valid: Any, coverage: Any) -> Any:
        import torch

        assert bool((coverage == valid.to(torch.float32)).all()), "coverage is valid as float"
        self.feeds.append({"values": values.numpy().copy(), "valid": valid.numpy().copy()})
        return torch.zeros((values.shape[0], values.shape[2], self.width))


class _FracastHead:
    """Stands in for the Fracast quantile head: zeros of (batch, horizon, quantiles)."""

    def __init__(self, horizon: int, quantiles: int) -> None:
        self.horizon, self.quantiles = horizon, quantiles

    def to(self, **_: Any) -> _FracastHead:
        return self

    def eval(self) -> _FracastHead:
        return self

    def forward_horizon(self, hidden: Any, **_: Any) -> Any:
        import torch

        return torch.zeros((hidden.shape[0], self.horizon, self.quantiles))


@contextmanager
def fracast_modules() -> Iterator[dict[str, types.ModuleType]]:
    """The wheel's Fracast modules (``safetensors`` stubbed: :func:`read_safetensors` reads its files), by name."""
    for member in FRACAST.members:
        fetch.model_file(FRACAST, member)
    with wheel_modules(FRACAST, _FRACAST_MODULES, ("safetensors.torch",)):
        sys.modules["fracast._core.safetensors_io"].load_file = read_safetensors  # type: ignore[attr-defined]
        yield {name: sys.modules[name] for name in _FRACAST_MODULES}


def read_safetensors(path: str | Path, device: str = "cpu") -> dict[str, Any]:
    """``safetensors.torch.load_file``: an 8-byte little-endian header length, a JSON header of dtype, shape and
    byte offsets, then the data."""
    import torch

    assert device == "cpu", device
    raw = Path(path).read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + size])
    dtypes = {"F32": np.float32, "F16": np.float16, "I8": np.int8, "I32": np.int32, "I64": np.int64}
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, stop = entry["data_offsets"]
        array = np.frombuffer(raw[8 + size + start:8 + size + stop], dtypes[entry["dtype"]]).reshape(entry["shape"])
        tensors[name] = torch.from_numpy(array.copy())
    return tensors


def fracast_config() -> dict[str, Any]:
    return json.loads(fetch.model_file(FRACAST, _FRA + "weights/config.json").read_text(encoding="utf-8"))


def fracast_recorder() -> tuple[Any, _FracastCore]:
    """The package's ``FracastModel``, as ``from_pretrained`` makes it, around a recording core and head; the core's
    ``feeds`` hold what each ``forecast`` fed the network."""
    config = fracast_config()
    model = config["model"]
    core = _FracastCore(int(model["d_model"]))
    head = _FracastHead(int(model["horizon"]), len(model["quantiles"]))
    with fracast_modules() as modules:
        return modules["fracast.inference"].FracastModel(core, head, config, device="cpu"), core


def fracast_feed(predictor: Any, core: _FracastCore, context: np.ndarray) -> dict[str, np.ndarray]:
    """What ``predictor.forecast(context)`` feeds its network: ``values`` (1, 1, 2048) float32, min-max normalized
    over the finite steps of the last 2048, zero where padded or missing, and ``valid`` (1, 1, 2048) bool."""
    before = len(core.feeds)
    predictor.forecast(context)
    (feed,) = core.feeds[before:]
    return feed


def fracast_series(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """values (N, 1, 2048) float32 and valid (N, 1, 2048) bool: series of six kinds as the package feeds them."""
    predictor, core = fracast_recorder()
    rng = np.random.default_rng(seed)
    feeds = [fracast_feed(predictor, core, series_sample(k, rng)[0]) for k in range(count)]
    return {"values": np.concatenate([f["values"] for f in feeds]).astype(np.float32),
            "valid": np.concatenate([f["valid"] for f in feeds])}


def fracast_network() -> Any:
    """Fracast-0 as one module of ``values`` and ``valid``: the package's ``load_fracast`` (the W8 weights,
    dequantized) and the calls its ``_predict_rows`` makes."""
    import torch

    with fracast_modules() as modules:
        folder = fetch.model_file(FRACAST, _FRA + "weights/config.json").parent
        core, head = modules["fracast.inference"].load_fracast(folder, weights="w8")

    class Fracast(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.core, self.head = core, head

        def forward(self, values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
            hidden = self.core(values, valid, valid.to(torch.float32))
            return self.head.forward_horizon(hidden, last_obs=values[:, 0, -1:], ctx=values[:, 0],
                                             ctx_mask=valid[:, 0])

    return Fracast().eval()


def export_fracast(path: Path) -> None:
    """``torch.onnx.export`` of :func:`fracast_network` (the dynamo exporter: the TorchScript one has no rFFT),
    opset 18, static shapes, one file."""
    import torch

    values = torch.zeros((1, 1, FRACAST_CONTEXT))
    valid = torch.ones((1, 1, FRACAST_CONTEXT), dtype=torch.bool)
    with torch.no_grad():
        torch.onnx.export(fracast_network(), (values, valid), str(path), dynamo=True, opset_version=18,
                          external_data=False, input_names=["values", "valid"], output_names=["quantiles"],
                          verbose=False)


_npz = zoo._npz  # noqa: SLF001

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
    with standing_in(SURFACES, ("surfaces._surrogates._surrogate_loader",), {}):
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

#: The ONNX opset of the exports written here.
OPSET = 17

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
    with standing_in(OPAL_NET, _OPAL_MODULES, {"pytorch_lightning": {"LightningModule": LightningModule}}):
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


MODELS: tuple[zoo.ZooModel, ...] = (
    Exported("fracast_w8", FRACAST, _FRA + "weights/model.int8.safetensors",
             "Fracast-0 zero-shot time-series forecaster (fracast), W8 weights dequantized, PyTorch dynamo export at "
             "opset 18: a shared causal dilated separable Conv + SwiGLU + RMSNorm block over ten dilations with FiLM, "
             "an rFFT periodogram (DFT, TopK, Round) for phase features, a period-folding gather head (GatherElements, "
             "batched MatMul), 9 quantiles over 48 steps; float values and a bool valid mask (1, 1, 2048) of six "
             "kinds of series as the package feeds them", _npz(fracast_series),
             {"input_shapes": {"values": [1, 1, FRACAST_CONTEXT], "valid": [1, 1, FRACAST_CONTEXT]}},
             export=export_fracast, tools=torch_tools),
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
        tools=torch_tools,
    ),
)
