"""Held-out aerodynamics models: NeuralFoil's airfoil surrogates of XFoil.

- neuralfoil 0.3.3 (MIT): NeuralFoil (Sharpe and Hansman, "NeuralFoil: An Airfoil Aerodynamics Analysis Tool Using
  Physics-Informed Machine Learning", arXiv 2503.16323, 2025), a surrogate of XFoil whose learned core was trained on
  nearly 8 million XFoil runs over synthetic airfoils (its README): the lift, drag and moment coefficients, the
  transition points and the boundary layer (momentum thickness, shape factor and edge velocity at 32 stations per
  side) of an airfoil given by its 8 + 8 Kulfan (CST) weights, a leading-edge weight and its trailing-edge
  thickness, at an angle of attack, a Reynolds number, a critical amplification factor and forced transition points.
  The wheel ships eight sizes of one network as NumPy weights (``neuralfoil/nn_weights_and_biases/nn-SIZE.npz``:
  PyTorch ``nn.Sequential`` state dicts of Linear layers with Swish between them) and the training inputs' mean and
  inverse covariance (``scaled_input_distribution.npz``). The package evaluates the network twice, on the case and
  on its mirror image (upper and lower surfaces swapped and negated, the angle negated), un-mirrors the second
  output, averages the two and lowers the confidence logit by the squared Mahalanobis distance of the inputs from
  the training data. Each is exported by torch.onnx (TorchScript exporter, opset 17, static shapes) as that
  evaluation: the 25 scaled inputs, the mirror as a MatMul by a signed permutation, the network on both, the
  un-mirroring as a second signed permutation, the distances (Sub, MatMul, Mul, ReduceSum) and the average; ``x``
  (1, 25) float32 in, ``latent`` (1, 198) out, the averaged outputs before the package unpacks them (confidence
  sigmoid(latent[0]), CL latent[1] / 2, CD exp(2 (latent[2] - 2)), CM latent[3] / 20, transition points latent[4:6]
  clipped to [0, 1], then the boundary layer).

  - ``neuralfoil_xlarge``: the package's default size (``nn-xlarge.npz``, 358 kB, 95k parameters): 25 -> 128, four
    128 -> 128 and 128 -> 198 Linear layers, Swish between them; 0.55 MB exported, 0.19M multiply-adds. 12 Gemm
    (the network twice), 10 Sigmoid and 13 Mul (10 for Swish), 4 MatMul (the mirror, the un-mirroring and the two
    distances' products with the inverse covariance), 2 ReduceSum, 3 Sub, 2 Add and a Div.
  - ``neuralfoil_xxxlarge``: the largest (``nn-xxxlarge.npz``, 5.4 MB, 1.43M parameters): 25 -> 512, five 512 ->
    512 and 512 -> 198 Linear layers; 5.9 MB exported, 2.9M multiply-adds. 14 Gemm, 12 Sigmoid and 15 Mul, the rest
    as above.

Data are made as the package feeds its network, with the package's own code from the pinned wheel, the network
replaced by a recorder of what it is fed: ``neuralfoil.get_aero_from_coordinates`` (its ``main`` and
``_basic_data_type`` modules; the package's ``__init__`` only re-exports) on an airfoil's coordinates, which
normalizes the airfoil (the angle of attack corrected by its rotation), fits 8 Kulfan weights a side and scales the
case into the network's 25 inputs, with the first layer's weight a recorder of the inputs it is multiplied with.
NeuralFoil's dependency AeroSandbox (pinned aerosandbox 4.2.10 wheel, MIT) gives its ``airfoil_families`` module:
``get_NACA_coordinates`` makes the airfoils and ``get_kulfan_parameters`` (least squares) fits them; the rest of
AeroSandbox, which needs CasADi, is stood in for: ``aerosandbox.numpy`` (which dispatches to NumPy for NumPy inputs)
by NumPy and the few AeroSandbox functions used (``sind``, ``cosd``, ``swish``, ``length``, ``cosspace``, copied),
``Airfoil`` by a class doing what its ``normalize`` and ``to_kulfan_airfoil`` do (copied). Each sample is a NACA
4-digit airfoil with a seeded maximum camber (0.5-6 %; every fourth symmetric), camber position (20-60 %) and
thickness (6-21 %), at a seeded angle of attack (-6 to 12 degrees), Reynolds number (1e5 to 1e7, log-uniform) and
critical amplification factor (5-11), transition free. Thin-airfoil theory (a lift slope of 2 pi per radian, the
zero-lift angle of the NACA mean line) and the measured minimum drag of smooth NACA sections are the truth the
predictions are checked against.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, standing_in, torch_tools

_NF = "neuralfoil/"

_WEIGHTS = _NF + "nn_weights_and_biases/"

#: The sizes registered: the package's default and its largest.
SIZES = ("xlarge", "xxxlarge")

DISTRIBUTION = _WEIGHTS + "scaled_input_distribution.npz"

NEURALFOIL = fetch.Wheel(
    requirement="neuralfoil==0.3.3",
    filename="neuralfoil-0.3.3-py3-none-any.whl",
    sha256="06fe7667ddc10cd29a9114d5513c913f4970c22a77b31298dee6180a9c983d3e",
    members=(_NF + "main.py", _NF + "_basic_data_type.py", DISTRIBUTION,
             *(f"{_WEIGHTS}nn-{size}.npz" for size in SIZES)),
)

FAMILIES = "aerosandbox/geometry/airfoil/airfoil_families.py"

AEROSANDBOX = fetch.Wheel(
    requirement="aerosandbox==4.2.10",
    filename="aerosandbox-4.2.10-py3-none-any.whl",
    sha256="42f4b5b4a67f828f8b893033baa909384c3d7bc3be700d5b3c55ab6a18c1f35d",
    members=(FAMILIES,),
)

#: The ONNX opset of the exports written here.
OPSET = 17

#: The network's inputs and outputs: 8 + 8 Kulfan weights, the leading-edge weight, the trailing-edge thickness,
#: sin 2a, cos a, sin^2 a, log Re, n_crit, xtr_upper, xtr_lower; 6 coefficients and 6 x 32 boundary layer values.
N_INPUTS = 25

N_BL = 32

N_OUTPUTS = 6 + 6 * N_BL

#: Ranges of the samples: NACA 4-digit maximum camber and its position, thickness (fractions of chord), angle of
#: attack (degrees), log10 of the Reynolds number, critical amplification factor.
CAMBER = (0.0, 0.06)

CAMBER_AT = (0.2, 0.6)

THICKNESS = (0.06, 0.21)

ALPHA = (-6.0, 12.0)

LOG_RE = (5.0, 7.0)

N_CRIT = (5.0, 11.0)


def _cosspace(start: Any = 0.0, stop: Any = 1.0, num: int = 50) -> np.ndarray:
    """AeroSandbox's ``cosspace`` on NumPy inputs: cosine-spaced points, the endpoints exact."""
    mean, amp = (stop + start) / 2, (stop - start) / 2
    ones = 0 * start + 1
    spaced = mean + amp * np.cos(np.linspace(np.pi * ones, 0 * ones, num))
    spaced[0], spaced[-1] = start, stop
    return spaced


def _length(a: Any) -> int:
    """AeroSandbox's ``length`` on NumPy inputs: ``len``, 1 for a scalar."""
    try:
        return len(a)
    except TypeError:
        return 1


def _asb_numpy() -> dict[str, Any]:
    """``aerosandbox.numpy`` for NumPy inputs: NumPy and the AeroSandbox functions the package and
    ``airfoil_families`` use (``sind``, ``cosd``, ``swish``, ``length``, ``cosspace``), as AeroSandbox 4.2.10
    defines them."""
    attributes = {name: getattr(np, name) for name in dir(np) if not name.startswith("__")}
    attributes.update(
        sind=lambda x: np.sin(np.radians(x)), cosd=lambda x: np.cos(np.radians(x)),
        swish=lambda x, beta=1.0: x / (1 + np.exp(-beta * x)), length=_length, cosspace=_cosspace,
    )
    return attributes


_FAMILIES = "aerosandbox.geometry.airfoil.airfoil_families"


class _Airfoil:
    """Stands in for ``aerosandbox.Airfoil``: what NeuralFoil's ``get_aero_from_coordinates`` uses of it, as
    AeroSandbox 4.2.10 does it: ``normalize`` (the leading edge, the point farthest from the trailing edge's
    midpoint, translated to the origin, the chord scaled to 1, the trailing edge rotated onto the x axis) and
    ``to_kulfan_airfoil`` (its pinned ``get_kulfan_parameters``)."""

    def __init__(self, name: str = "Untitled", coordinates: Any = None) -> None:
        self.name, self.coordinates = name, np.asarray(coordinates, np.float64)

    def normalize(self, return_dict: bool = False) -> Any:
        x, y = self.coordinates[:, 0], self.coordinates[:, 1]
        x_te, y_te = (x[0] + x[-1]) / 2, (y[0] + y[-1]) / 2
        distance_to_te = ((x - x_te) ** 2 + (y - y_te) ** 2) ** 0.5
        le_index = np.argmax(distance_to_te)
        x_translation, y_translation = -x[le_index], -y[le_index]
        scale_factor = 1 / distance_to_te[le_index]
        coordinates = (self.coordinates + np.array([x_translation, y_translation])) * scale_factor
        x_te = (coordinates[0, 0] + coordinates[-1, 0]) / 2
        y_te = (coordinates[0, 1] + coordinates[-1, 1]) / 2
        rotation_angle = -np.arctan2(y_te, x_te)
        c, s = np.cos(rotation_angle), np.sin(rotation_angle)
        coordinates = (np.array([[c, -s], [s, c]]) @ coordinates.T).T
        airfoil = _Airfoil(self.name, coordinates)
        if not return_dict:
            return airfoil
        return {"airfoil": airfoil, "x_translation": x_translation, "y_translation": y_translation,
                "scale_factor": scale_factor, "rotation_angle": np.degrees(rotation_angle)}

    def to_kulfan_airfoil(self, n_weights_per_side: int = 8, N1: float = 0.5, N2: float = 1.0,  # noqa: N803
                          normalize_coordinates: bool = True, use_leading_edge_modification: bool = True) -> Any:
        assert not normalize_coordinates, "NeuralFoil normalizes first"
        parameters = sys.modules[_FAMILIES].get_kulfan_parameters(
            coordinates=self.coordinates, n_weights_per_side=n_weights_per_side, N1=N1, N2=N2,
            normalize_coordinates=False, use_leading_edge_modification=use_leading_edge_modification)
        return _KulfanAirfoil(parameters)


class _KulfanAirfoil:
    """Stands in for ``aerosandbox.KulfanAirfoil``: its ``kulfan_parameters``."""

    def __init__(self, kulfan_parameters: dict[str, Any] | None = None) -> None:
        self.kulfan_parameters = kulfan_parameters


def _stand_ins() -> dict[str, dict[str, Any]]:
    return {"aerosandbox": {"Airfoil": _Airfoil, "KulfanAirfoil": _KulfanAirfoil},
            "aerosandbox.numpy": _asb_numpy(),
            "aerosandbox.geometry": {}, "aerosandbox.geometry.airfoil": {"Airfoil": _Airfoil}}


@contextmanager
def neuralfoil_modules() -> Iterator[dict[str, Any]]:
    """The wheel's ``neuralfoil.main`` (and the ``_basic_data_type`` it imports; the package's ``__init__``, which
    only re-exports, does not run) and AeroSandbox's ``airfoil_families`` from its pinned wheel, ``aerosandbox``
    stood in for (:func:`_stand_ins`, :class:`_Airfoil`); ``sys.modules`` is restored on exit."""
    with standing_in(NEURALFOIL, ("neuralfoil._basic_data_type", "neuralfoil.main"), _stand_ins()):
        main = sys.modules["neuralfoil.main"]
        with standing_in(AEROSANDBOX, (_FAMILIES,), _stand_ins()):
            yield {"main": main, "families": sys.modules[_FAMILIES]}


def naca_coordinates(modules: dict[str, Any], camber: float, camber_at: float, thickness: float) -> np.ndarray:
    """(399, 2) float64: the coordinates of a NACA 4-digit airfoil by AeroSandbox's ``get_NACA_coordinates``
    (Selig order, 200 cosine-spaced points a side)."""
    return modules["families"].get_NACA_coordinates(max_camber=camber, camber_loc=camber_at, thickness=thickness)


class _Recorder:
    """Stands in for the first layer's weight: records the (N_INPUTS, N) scaled inputs it is multiplied with and
    gives zeros."""

    def __init__(self, fed: list[np.ndarray]) -> None:
        self.fed = fed

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        self.fed.append(np.array(x, copy=True))
        return np.zeros((N_OUTPUTS, x.shape[1]))


@contextmanager
def neuralfoil_feeder(size: str = "xlarge") -> Iterator[Any]:
    """``feed(coordinates, alpha, Re, n_crit) -> (1, 25)`` float32: the scaled inputs the package's
    ``get_aero_from_coordinates`` feeds its network of ``size`` for one airfoil and case (transition free), the
    network a recorder (the first of its two evaluations, the case itself; the second is its mirror image)."""
    fed: list[np.ndarray] = []
    with neuralfoil_modules() as modules:
        main = modules["main"]
        main._nn_parameters = {size: {"net.0.weight": _Recorder(fed), "net.0.bias": np.zeros(N_OUTPUTS)}}  # noqa: SLF001

        def feed(coordinates: np.ndarray, alpha: float, reynolds: float, n_crit: float = 9.0) -> np.ndarray:
            fed.clear()
            with np.errstate(divide="ignore", invalid="ignore"):  # the recorder's zero edge velocities
                main.get_aero_from_coordinates(coordinates, alpha=alpha, Re=reynolds, n_crit=n_crit, model_size=size)
            case, _mirror = fed
            return case.T.astype(np.float32)

        feed.modules = modules  # type: ignore[attr-defined]
        yield feed


def sample_cases(count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` seeded cases: a NACA 4-digit airfoil (``camber``, ``camber_at``, ``thickness``), ``alpha``
    (degrees), ``reynolds`` and ``n_crit`` in the ranges above. Every fourth airfoil is symmetric."""
    rng = np.random.default_rng(seed)
    cases = []
    for k in range(count):
        camber = float(rng.uniform(0.005, CAMBER[1]))
        cases.append({"camber": 0.0 if k % 4 == 3 else camber, "camber_at": float(rng.uniform(*CAMBER_AT)),
                      "thickness": float(rng.uniform(*THICKNESS)), "alpha": float(rng.uniform(*ALPHA)),
                      "reynolds": float(10 ** rng.uniform(*LOG_RE)), "n_crit": float(rng.uniform(*N_CRIT))})
    return cases


def airfoil_inputs(cases: list[dict[str, Any]], size: str = "xlarge") -> np.ndarray:
    """x (N, 25) float32: ``cases`` as the package's ``get_aero_from_coordinates`` feeds its network."""
    with neuralfoil_feeder(size) as feed:
        modules = feed.modules
        rows = [feed(naca_coordinates(modules, c["camber"], c["camber_at"], c["thickness"]), c["alpha"],
                     c["reynolds"], c["n_crit"]) for c in cases]
    return np.concatenate(rows)


def airfoil_cases(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """x (N, 25) float32: seeded NACA 4-digit airfoils, angles of attack, Reynolds numbers and amplification factors
    as the package's ``get_aero_from_coordinates`` feeds its network."""
    return {"x": airfoil_inputs(sample_cases(count, seed))}


def zero_lift_angle(camber: float, camber_at: float) -> float:
    """Thin-airfoil theory's zero-lift angle of attack (degrees) of a NACA 4-digit mean line:
    -1/pi * integral of dy_c/dx (cos t - 1) dt over t in (0, pi), x = (1 - cos t) / 2."""
    if camber == 0:
        return 0.0
    t = np.linspace(0, np.pi, 20001)
    x = (1 - np.cos(t)) / 2
    slope = np.where(x <= camber_at, 2 * camber / camber_at**2 * (camber_at - x),
                     2 * camber / (1 - camber_at) ** 2 * (camber_at - x))
    f = slope * (np.cos(t) - 1)
    return float(-np.sum((f[1:] + f[:-1]) / 2 * np.diff(t)) / np.pi * 180 / np.pi)


def _mirror_inputs() -> np.ndarray:
    """(25, 25): the package's mirror image of the inputs as a matrix (``x @ M``): upper and lower weights swapped
    and negated, the leading-edge weight and sin 2a negated, the transition points swapped."""
    m = np.eye(N_INPUTS)
    m[:, :8], m[:, 8:16] = -np.eye(N_INPUTS)[:, 8:16], -np.eye(N_INPUTS)[:, :8]
    m[16, 16] = m[18, 18] = -1
    m[:, 23], m[:, 24] = np.eye(N_INPUTS)[:, 24], np.eye(N_INPUTS)[:, 23]
    return m


def _unmirror_outputs() -> np.ndarray:
    """(198, 198): the package's un-mirroring of the mirror image's outputs as a matrix (``y @ U``): CL and CM
    negated, the transition points swapped, the surfaces' boundary layers swapped (edge velocities negated)."""
    eye, n = np.eye(N_OUTPUTS), N_BL
    u = eye.copy()
    u[:, 1], u[:, 3] = -eye[:, 1], -eye[:, 3]
    u[:, 4], u[:, 5] = eye[:, 5], eye[:, 4]
    u[:, 6:6 + 2 * n] = eye[:, 6 + 3 * n:6 + 5 * n]
    u[:, 6 + 3 * n:6 + 5 * n] = eye[:, 6:6 + 2 * n]
    u[:, 6 + 2 * n:6 + 3 * n] = -eye[:, 6 + 5 * n:6 + 6 * n]
    u[:, 6 + 5 * n:6 + 6 * n] = -eye[:, 6 + 2 * n:6 + 3 * n]
    return u


def _export(size: str, path: Path) -> None:
    """``torch.onnx.export`` of the package's evaluation of its network of ``size`` (the weights as the package
    loads them) at one case (TorchScript exporter, opset 17, static shapes): input ``x``, output ``latent``."""
    import torch

    with neuralfoil_modules() as modules:
        params = modules["main"]._nn_parameters[size]  # noqa: SLF001
        distribution = modules["main"]._scaled_input_distribution  # noqa: SLF001
    indices = sorted({int(key.split(".")[1]) for key in params})

    class Evaluation(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers = []
            for i in indices:
                weight = torch.from_numpy(np.asarray(params[f"net.{i}.weight"], np.float32))
                layer = torch.nn.Linear(weight.shape[1], weight.shape[0])
                layer.weight.data.copy_(weight)
                layer.bias.data.copy_(torch.from_numpy(np.asarray(params[f"net.{i}.bias"], np.float32)))
                layers.append(layer)
            self.layers = torch.nn.ModuleList(layers)
            for name, value in (("mirror", _mirror_inputs()), ("unmirror", _unmirror_outputs()),
                                ("mean", distribution["mean_inputs_scaled"][None]),
                                ("inv_cov", distribution["inv_cov_inputs_scaled"]),
                                ("first", np.eye(N_OUTPUTS)[:1] / (2 * 2 * N_INPUTS))):
                self.register_buffer(name, torch.from_numpy(np.asarray(value, np.float32)))

        def net(self, x: Any) -> Any:
            for layer in self.layers[:-1]:
                x = torch.nn.functional.silu(layer(x))
            return self.layers[-1](x)

        def distance(self, x: Any) -> Any:
            centred = x - self.mean
            return ((centred @ self.inv_cov) * centred).sum(dim=1, keepdim=True)

        def forward(self, x: Any) -> Any:
            mirrored = x @ self.mirror
            both = self.net(x) + self.net(mirrored) @ self.unmirror
            return both / 2 - (self.distance(x) + self.distance(mirrored)) * self.first

    one = torch.zeros((1, N_INPUTS))
    with torch.no_grad():
        torch.onnx.export(Evaluation().eval(), (one,), str(path), opset_version=OPSET, dynamo=False,
                          do_constant_folding=True, input_names=["x"], output_names=["latent"])


def export_xlarge(path: Path) -> None:
    _export("xlarge", path)


def export_xxxlarge(path: Path) -> None:
    _export("xxxlarge", path)


def unpack(latent: np.ndarray) -> dict[str, np.ndarray]:
    """The package's unpacking of the averaged outputs (N, 198): ``analysis_confidence``, ``CL``, ``CD``, ``CM``,
    ``Top_Xtr`` and ``Bot_Xtr``."""
    latent = np.asarray(latent, np.float64)
    return {"analysis_confidence": 1 / (1 + np.exp(-latent[:, 0])), "CL": latent[:, 1] / 2,
            "CD": np.exp((latent[:, 2] - 2) * 2), "CM": latent[:, 3] / 20, "Top_Xtr": np.clip(latent[:, 4], 0, 1),
            "Bot_Xtr": np.clip(latent[:, 5], 0, 1)}


_npz = zoo._npz  # noqa: SLF001

_INPUT = {"input_shapes": {"x": [1, N_INPUTS]}}


MODELS: tuple[zoo.ZooModel, ...] = (
    Exported(
        "neuralfoil_xlarge",
        NEURALFOIL,
        f"{_WEIGHTS}nn-xlarge.npz",
        "NeuralFoil's airfoil aerodynamics surrogate of XFoil, its default xlarge network (NumPy weights of a "
        "PyTorch MLP) exported by torch.onnx at opset 17 as the package evaluates it: the case and its mirror "
        "image (a MatMul by a signed permutation) through six Gemm layers of 128 with Swish (Sigmoid, Mul), the "
        "mirror's outputs un-mirrored (MatMul), averaged, and the confidence logit lowered by Mahalanobis "
        "distances (MatMul, Mul, ReduceSum); (1, 25) Kulfan weights, angle, Reynolds number and transition inputs "
        "of NACA 4-digit airfoils in, (1, 198) coefficients and boundary layer out, as the package's "
        "get_aero_from_coordinates feeds them",
        _npz(airfoil_cases),
        _INPUT,
        export=export_xlarge,
        tools=torch_tools,
    ),
    Exported(
        "neuralfoil_xxxlarge",
        NEURALFOIL,
        f"{_WEIGHTS}nn-xxxlarge.npz",
        "NeuralFoil's largest (xxxlarge) network, exported the same way: seven Gemm layers of 512 with Swish on "
        "the case and its mirror image, un-mirrored and averaged, the confidence lowered by Mahalanobis "
        "distances; (1, 25) inputs of NACA 4-digit airfoil cases in, (1, 198) out, as the package's "
        "get_aero_from_coordinates feeds them",
        _npz(airfoil_cases),
        _INPUT,
        export=export_xxxlarge,
        tools=torch_tools,
    ),
)
