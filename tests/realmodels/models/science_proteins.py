"""Held-out protein models: disorder prediction (metapredict) and peptide retention times in liquid
chromatography (DeepLC).

- metapredict 3.1.1 (MIT, an sdist): the package's default protein disorder predictor, V3
  (``metapredict/backend/networks/epoch099_val_loss1107.08.ckpt``, 0.8 MB: a PyTorch Lightning checkpoint of its
  ``BRNN_MtM_lightning``, trained on AlphaFold2 pLDDT-derived disorder scores smoothed over 25 residues): a two-layer
  bidirectional LSTM of hidden size 52 over one-hot residues, a LayerNorm and a per-residue Linear 104 -> 1. Built
  by the package's ``BRNN_MtM_lightning.from_checkpoint`` and exported by torch.onnx (TorchScript exporter, opset
  17, 0.4 MB) at a sequence of 128 residues: 2 LSTM (bidirectional), a LayerNormalization, a MatMul and an Add
  (with the Shape, Gather, Expand and Concat that make the zero initial states). ``sequence`` (1, 128, 20) float32,
  the one-hot residues (``ACDEFGHIKLMNPQRSTVWY``), in; ``disorder`` (1, 128, 1), each residue's disorder score (the
  package clips it to [0, 1]; disordered above 0.5), out.
- deeplc 4.5.0 (Apache-2.0): DeepLC's peptide retention time predictor for liquid chromatography (Bouwmeester et
  al., Nature Methods 18, 2021), its default model (``deeplc.core.DEFAULT_MODEL``: ``deeplc/package_data/models/
  multitask_flexcnn_model.pt``, 10.7 MB: a self-describing PyTorch checkpoint, 2.6M parameters, one output per each
  of 6543 LC setups, in minutes). The package's ``FlexCNNMultitaskModel``: the residue of each position taken from
  the one-hot matrix by ArgMax (padding where the row is zero), a learned 16-wide residue Embedding concatenated with
  two 1 x 1 Conv + SiLU layers of 128 over the per-position atom counts (C, H, N, O, S, P), two 5-tap Conv1d + SiLU
  layers of 512, a sum and a max over the valid positions (masked, -inf guarded by ``nan_to_num``), a LayerNorm; the
  67 global features and the 20 residue counts (ScatterElements, a scatter-add) standardised and concatenated with
  it, three Linear + SiLU layers of 256 and a low-rank head (a projection to 64 and one setup's embedding, scale and
  shift). Exported by torch.onnx (TorchScript exporter, opset 17, static shapes, 8.5 MB) with the setup fixed to the
  package's default, ``PXD005573_mcp`` (what ``deeplc.predict`` reports uncalibrated): 4 Conv, 7 Sigmoid and 9 Mul
  (SiLU), 4 Gemm, a MatMul, an ArgMax, a Gather, a ScatterElements, a LayerNormalization, 2 ReduceSum, a ReduceMax,
  5 Where, 2 IsInf, an IsNaN and a Clip. ``x_atom`` (1, 60, 6), ``x_global`` (1, 67) and ``x_one_hot`` (1, 60, 20)
  float32 in (the rolling-sum input the model ignores is dropped); ``retention_time`` (1, 1), minutes on that setup's
  gradient, out.

Data are made as each package feeds its model, with the package's own code from the pinned archive, its model
replaced by a recorder of what it is fed:

- metapredict: the package's ``predict(sequence)`` (``backend/predictor.py`` with its default network: the sequence
  one-hot encoded by ``encode_sequence.one_hot`` and viewed as one batch of one) with its network a recorder placed
  in the predictor's cache of loaded models (``protfasta``, a FASTA reader it imports, stands in as an empty
  module). Each sequence (:func:`protein_like`) is 128 residues of alternating folded domains (40-90 residues, a
  globular composition with its hydrophobic core residues enriched) and disordered regions (15-50 residues, rich in
  P, E, S, Q, K and G), seeded; the region each residue was drawn from is the truth.
- deeplc: the package's ``deeplc.predict(peptides, model=...)`` (its ``DeepLCDataset`` encoding with the
  checkpoint's feature specification: terminal composition, a 60-residue window) with the model a recorder that
  carries the checkpoint's feature specification and setup names, ``length_buckets`` off so every peptide comes in
  the full window (the buckets are an exact speed-up that shortens the window), and ``psm_utils`` stood in for by a
  parser of unmodified ``SEQUENCE/charge`` peptidoforms (its ``Peptidoform``, ``PSM`` and ``PSMList``; psm_utils
  needs pandas) and ``pyteomics.mass`` (the amino acids' atomic compositions) taken from the pinned pyteomics 5.0.1
  wheel (Apache-2.0). The peptides are the wheel's own example PSMs (``example_psms.tsv.gz``: 5430 identified spectra
  of one Q Exactive run with their observed retention times), unmodified targets at 1 % FDR, one per sequence
  (2750), drawn in a seeded order; the observed retention times are the truth the predictions are checked against.
"""

from __future__ import annotations

import csv
import gzip
import importlib
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, standing_in, torch_tools

_MP = "metapredict-3.1.1/metapredict/"

_MP_CKPT = _MP + "backend/networks/epoch099_val_loss1107.08.ckpt"

#: The package's modules ``metapredict.backend.predictor`` needs, in import order (its ``__init__`` does not run).
_MP_MODULES = ("metapredict.metapredict_exceptions", "metapredict.parameters", "metapredict.backend.network_parameters",
               "metapredict.backend.meta_tools", "metapredict.backend.data_structures",
               "metapredict.backend.domain_definition", "metapredict.backend.encode_sequence",
               "metapredict.backend.architectures", "metapredict.backend.predictor")

METAPREDICT = fetch.Wheel(
    requirement="metapredict==3.1.1",
    filename="metapredict-3.1.1.tar.gz",
    sha256="537198f53ab5ed3a3c2fb43a038f5bf217bfa3d0d2c348fbef53f803887f350f",
    members=(_MP_CKPT, *("metapredict-3.1.1/" + m.replace(".", "/") + ".py" for m in _MP_MODULES)),
)

#: The ONNX opset of the exports written here.
OPSET = 17

#: The residues the registered model reads at once (the package feeds a whole sequence; its length is pinned).
PROTEIN_LENGTH = 128

#: The package's one-hot order (``encode_sequence.ONE_HOT``) and its V3 disorder threshold.
AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"

DISORDER_THRESHOLD = 0.5

#: Relative residue frequencies of the synthetic folded domains (a globular composition with its hydrophobic core
#: residues enriched) and of the disordered regions (rich in P, E, S, Q, K and G, poor in W, C, F, I, Y, V, L), in
#: :data:`AMINO_ACIDS` order.
FOLDED_COMPOSITION = (8, 2.5, 5, 5, 6, 7, 2, 8, 5, 12, 2.5, 4, 3, 3, 5, 5, 5.5, 10, 2, 5)

DISORDERED_COMPOSITION = (6, 0.2, 7, 12, 0.5, 8, 2, 1, 10, 3, 1, 5, 10, 8, 5, 12, 6, 2, 0.2, 0.5)


def protein_like(seed: int, length: int = PROTEIN_LENGTH) -> tuple[str, np.ndarray]:
    """``(sequence, disordered (length,) bool)``: alternating folded domains (40-90 residues, drawn from
    :data:`FOLDED_COMPOSITION`) and disordered regions (15-50 residues, from :data:`DISORDERED_COMPOSITION`),
    starting with either, cut to ``length``; the region each residue was drawn from is its truth."""
    rng = np.random.default_rng(seed)
    folded_p = np.array(FOLDED_COMPOSITION) / sum(FOLDED_COMPOSITION)
    disordered_p = np.array(DISORDERED_COMPOSITION) / sum(DISORDERED_COMPOSITION)
    residues: list[str] = []
    truth: list[bool] = []
    disordered = bool(rng.integers(2))
    while len(residues) < length:
        size = int(rng.integers(15, 51)) if disordered else int(rng.integers(40, 91))
        picks = rng.choice(len(AMINO_ACIDS), size, p=disordered_p if disordered else folded_p)
        residues.extend(AMINO_ACIDS[k] for k in picks)
        truth.extend([disordered] * size)
        disordered = not disordered
    return "".join(residues[:length]), np.array(truth[:length])


@contextmanager
def metapredict_modules() -> Iterator[dict[str, types.ModuleType]]:
    """The sdist's ``metapredict.backend.predictor`` and what it imports, from the cache, ``metapredict`` and
    ``metapredict.backend`` bare packages over the cached folders (the package's ``__init__`` does not run),
    ``protfasta`` (a FASTA reader, used only to write files) standing in as an empty module; ``sys.modules`` is
    restored on exit."""
    for member in METAPREDICT.members:
        fetch.model_file(METAPREDICT, member)
    root = fetch.model_file(METAPREDICT, _MP + "parameters.py").parent
    tops = ("metapredict", "protfasta")
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] in tops}
    try:
        for name, folder in (("metapredict", root), ("metapredict.backend", root / "backend")):
            package = types.ModuleType(name)
            package.__path__ = [str(folder)]  # type: ignore[attr-defined]
            sys.modules[name] = package
        sys.modules["metapredict"].backend = sys.modules["metapredict.backend"]  # type: ignore[attr-defined]
        sys.modules["protfasta"] = types.ModuleType("protfasta")
        yield {name.rpartition(".")[2]: importlib.import_module(name) for name in _MP_MODULES}
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] in tops]:
            del sys.modules[name]
        sys.modules.update(saved)


class _DisorderRecorder:
    """Stands in for the predictor's network: keeps each batch it is called on, answers zeros."""

    def __init__(self) -> None:
        self.fed: list[np.ndarray] = []

    def eval(self) -> _DisorderRecorder:
        return self

    def to(self, device: Any) -> _DisorderRecorder:
        return self

    def __call__(self, tensor: Any) -> Any:
        import torch

        self.fed.append(tensor.detach().cpu().numpy().copy())
        return torch.zeros((*tensor.shape[:2], 1))


@contextmanager
def disorder_predictor() -> Iterator[Any]:
    """``feed(sequence) -> (1, L, 20) float32``: what the package's ``predict(sequence)`` (its default network, V3)
    feeds the network for one sequence (the one-hot of ``encode_sequence``), the network a recorder placed in the
    predictor's cache of loaded models. ``feed.predict`` is the package's ``predict`` with its real network."""
    with metapredict_modules() as modules:
        predictor = modules["predictor"]
        key = f"disorder_{predictor.DEFAULT_NETWORK}"
        recorder = _DisorderRecorder()

        def feed(sequence: str) -> np.ndarray:
            real = predictor.loaded_models.pop(key, None)
            predictor.loaded_models[key] = recorder
            try:
                predictor.predict(sequence)
            finally:
                predictor.loaded_models.pop(key)
                if real is not None:
                    predictor.loaded_models[key] = real
            (fed,) = recorder.fed
            recorder.fed.clear()
            return fed.astype(np.float32)

        feed.predict = predictor.predict  # type: ignore[attr-defined]
        yield feed


def protein_sequences(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """sequence (N, 128, 20) float32: one-hot protein-like sequences, as the package's ``predict`` feeds them."""
    rng = np.random.default_rng(seed)
    with disorder_predictor() as feed:
        rows = [feed(protein_like(int(rng.integers(1 << 30)))[0])[0] for _ in range(count)]
    return {"sequence": np.stack(rows)}


def disorder_network() -> Any:
    """The package's V3 network (``BRNN_MtM_lightning.from_checkpoint`` of the sdist's Lightning checkpoint), in
    eval mode."""
    with metapredict_modules() as modules:
        network = modules["architectures"].BRNN_MtM_lightning.from_checkpoint(
            str(fetch.model_file(METAPREDICT, _MP_CKPT)), map_location="cpu")
    return network.eval()


def export_metapredict(path: Path) -> None:
    """``torch.onnx.export`` of :func:`disorder_network` (TorchScript exporter, opset 17) at (1, 128, 20), its input
    named ``sequence`` and its output ``disorder``."""
    import torch

    with torch.no_grad():
        torch.onnx.export(disorder_network(), (torch.zeros((1, PROTEIN_LENGTH, len(AMINO_ACIDS))),), str(path),
                          opset_version=OPSET, dynamo=False, do_constant_folding=True, input_names=["sequence"],
                          output_names=["disorder"])


_npz = zoo._npz  # noqa: SLF001

_DLC = "deeplc/"

DEEPLC_MODEL = _DLC + "package_data/models/multitask_flexcnn_model.pt"

DEEPLC_EXAMPLES = _DLC + "package_data/examples/example_psms.tsv.gz"

#: The package's modules ``deeplc.predict`` runs, in import order (its ``__init__``, which imports its reports and
#: plots, does not run).
_DLC_MODULES = ("deeplc.exceptions", "deeplc._factored", "deeplc._architecture", "deeplc._features",
                "deeplc._batch_features", "deeplc.data", "deeplc._model_ops", "deeplc.calibration",
                "deeplc._reference_selection", "deeplc.core")

DEEPLC = fetch.Wheel(
    requirement="deeplc==4.5.0",
    filename="deeplc-4.5.0-py3-none-any.whl",
    sha256="d7f857ba8804b2722edf62b25a758e4749c99bd2a62ffa9b56ffe68df7cbe676",
    members=(DEEPLC_MODEL, DEEPLC_EXAMPLES, _DLC + "calibration/simple.py", _DLC + "calibration/multihead.py",
             *(name.replace(".", "/") + ("/__init__.py" if name == "deeplc.calibration" else ".py")
               for name in _DLC_MODULES)),
)

_PYT = "pyteomics/"

_PYTEOMICS_MODULES = ("pyteomics.auxiliary", "pyteomics.parser", "pyteomics.mass")

PYTEOMICS = fetch.Wheel(
    requirement="pyteomics==5.0.1",
    filename="pyteomics-5.0.1-py3-none-any.whl",
    sha256="aaf85b4f3f64ef42b2c051d7d8b67d22c3a276fe029e5d5bbf17f3915a3bd286",
    members=(*(_PYT + "auxiliary/" + name + ".py" for name in ("__init__", "constants", "file_helpers", "math",
                                                                 "patch", "psims_util", "structures",
                                                                 "target_decoy", "utils")),
             _PYT + "parser.py", _PYT + "mass/__init__.py", _PYT + "mass/mass.py"),
)

#: The LC setup ``deeplc.predict`` reports when the model knows its setups (``deeplc.core.DEFAULT_TASK_NAME``).
DEFAULT_SETUP = "PXD005573_mcp"

#: The identifications kept of the wheel's example PSMs: 1 % FDR.
MAX_QVALUE = 0.01

#: The window the checkpoint's feature specification asks for (``padding_length``).
WINDOW = 60


class _PSM:
    """Stands in for ``psm_utils.PSM``: a spectrum id and its peptidoform (parsed from a string)."""

    def __init__(self, spectrum_id: Any = None, peptidoform: Any = None, retention_time: float | None = None,
                 **kwargs: Any) -> None:
        self.spectrum_id = spectrum_id
        self.peptidoform = peptidoform if isinstance(peptidoform, _Peptidoform) else _Peptidoform(peptidoform)
        self.retention_time = retention_time


class _Peptidoform:
    """Stands in for ``psm_utils.Peptidoform`` on an unmodified ``SEQUENCE/charge`` (ProForma without
    modifications): what DeepLC's encoders read of it, as psm_utils parses it (residues with no modification,
    no terminal modifications)."""

    def __init__(self, proforma_sequence: str) -> None:
        sequence, _, charge = proforma_sequence.partition("/")
        if not (sequence.isalpha() and sequence.isupper()):
            raise ValueError(f"not an unmodified peptidoform: {proforma_sequence}")
        self.parsed_sequence: list[tuple[str, None]] = [(residue, None) for residue in sequence]
        self.properties: dict[str, Any] = {"n_term": None, "c_term": None, "charge_state": charge or None}
        self.precursor_charge = int(charge) if charge else None

    @property
    def sequence(self) -> str:
        return "".join(position[0] for position in self.parsed_sequence)


class _PSMList:
    """Stands in for ``psm_utils.PSMList``: the PSMs and their columns by name."""

    def __init__(self, psm_list: list[_PSM]) -> None:
        self.psm_list = list(psm_list)

    def __len__(self) -> int:
        return len(self.psm_list)

    def __getitem__(self, column: str) -> list[Any]:
        return [getattr(psm, column) for psm in self.psm_list]


@contextmanager
def deeplc_modules() -> Iterator[dict[str, Any]]:
    """The wheel's ``deeplc.core`` and the modules it runs (name -> module), ``pyteomics.mass`` from the pinned
    pyteomics wheel and ``psm_utils`` stood in for (:class:`_Peptidoform`, :class:`_PSM`, :class:`_PSMList`);
    ``sys.modules`` is restored on exit."""
    stand_ins = {"psm_utils": {"Peptidoform": _Peptidoform, "PSM": _PSM, "PSMList": _PSMList}}
    with standing_in(PYTEOMICS, _PYTEOMICS_MODULES, {}), standing_in(DEEPLC, _DLC_MODULES, stand_ins):
        yield {name.removeprefix("deeplc."): sys.modules[name] for name in _DLC_MODULES}


def example_peptides() -> list[tuple[str, float]]:
    """(peptidoform, observed retention time in minutes) of the wheel's example PSMs: unmodified targets identified
    at 1 % FDR (q-value at most :data:`MAX_QVALUE`; the file also holds the low-confidence rest, up to q 0.15, whose
    retention times a wrong identification makes meaningless), the first PSM of each sequence, in file order."""
    with gzip.open(fetch.model_file(DEEPLC, DEEPLC_EXAMPLES), "rt", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    seen: set[str] = set()
    out = []
    for row in rows:
        sequence = row["peptidoform"].partition("/")[0]
        if row["is_decoy"] != "False" or float(row["qvalue"]) > MAX_QVALUE or sequence in seen:
            continue
        if not (sequence.isalpha() and sequence.isupper()):
            continue
        seen.add(sequence)
        out.append((row["peptidoform"], float(row["retention_time"])))
    return out


@contextmanager
def deeplc_feeder() -> Iterator[Any]:
    """``feed(peptidoforms) -> {"x_atom", "x_atom_sum", "x_global", "x_one_hot"}`` float32 arrays: what the
    package's ``deeplc.predict`` feeds its default model for ``peptidoforms`` (strings), the model a recorder with
    the checkpoint's feature specification and setup names, in the full window (``length_buckets`` off)."""
    import torch

    with deeplc_modules() as modules:
        described = torch.load(fetch.model_file(DEEPLC, DEEPLC_MODEL), weights_only=True, map_location="cpu")
        fed: list[tuple[np.ndarray, ...]] = []
        asked: list[Any] = []

        class Recorder(modules["_architecture"].FlexCNNMultitaskModel):  # type: ignore[misc,name-defined]
            def forward(self, x_atom: Any, x_atom_sum: Any, x_global: Any, x_one_hot: Any,
                        task_idx: Any = None) -> Any:
                fed.append(tuple(t.numpy().copy() for t in (x_atom, x_atom_sum, x_global, x_one_hot)))
                asked.append(task_idx)
                count = len(task_idx) if task_idx is not None else self.n_tasks
                return torch.zeros((x_atom.shape[0], count))

        recorder = Recorder(n_tasks=1).eval()
        recorder.feature_spec = described["feature_spec"]
        recorder.task_names = described["task_names"]

        def feed(peptidoforms: list[str]) -> dict[str, np.ndarray]:
            fed.clear()
            asked.clear()
            modules["core"].predict(list(peptidoforms), model=recorder,
                                    predict_kwargs={"device": "cpu", "show_progress": False,
                                                    "length_buckets": False})
            parts = [np.concatenate(column) for column in zip(*fed)]
            return dict(zip(("x_atom", "x_atom_sum", "x_global", "x_one_hot"), parts))

        feed.asked = asked  # type: ignore[attr-defined]
        feed.task_index = described["task_names"].index(DEFAULT_SETUP)  # type: ignore[attr-defined]
        feed.modules = modules  # type: ignore[attr-defined]
        yield feed


def peptides_with_truth(count: int, seed: int) -> dict[str, np.ndarray]:
    """``count`` example peptides in a seeded order: their features as ``deeplc.predict`` feeds them (``x_atom``
    (N, 60, 6), ``x_global`` (N, 67), ``x_one_hot`` (N, 60, 20) float32) and ``retention_time`` (N,), the observed
    retention times (minutes)."""
    peptides = example_peptides()
    order = np.random.default_rng(seed).permutation(len(peptides))[:count]
    chosen = [peptides[k] for k in order]
    with deeplc_feeder() as feed:
        features = feed([peptide for peptide, _ in chosen])
    features.pop("x_atom_sum")
    return {**features, "retention_time": np.array([rt for _, rt in chosen], np.float32)}


def peptide_features(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """x_atom (N, 60, 6), x_global (N, 67), x_one_hot (N, 60, 20) float32: the wheel's example peptides as the
    package's ``deeplc.predict`` feeds them."""
    data = peptides_with_truth(count, seed)
    data.pop("retention_time")
    return data


def export_deeplc(path: Path) -> None:
    """``torch.onnx.export`` of the package's default model as its own ``load_model`` builds it, its output the
    default setup's (``forward(..., task_idx=[that setup])``, what ``deeplc.predict`` asks for), at one peptide
    (TorchScript exporter, opset 17, static shapes): inputs ``x_atom``, ``x_global``, ``x_one_hot`` (the
    ignored rolling-sum input is given empty), output ``retention_time``."""
    import torch

    with deeplc_modules() as modules:
        network = modules["_model_ops"].load_model(str(fetch.model_file(DEEPLC, DEEPLC_MODEL)), device="cpu")
        task = network.task_names.index(DEFAULT_SETUP)

    class DefaultSetup(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.network = network
            self.register_buffer("task", torch.tensor([task]))

        def forward(self, x_atom: Any, x_global: Any, x_one_hot: Any) -> Any:
            return self.network(x_atom, x_atom[:, :0], x_global, x_one_hot, self.task)

    wrapped = DefaultSetup().eval()
    one = (torch.zeros((1, WINDOW, 6)), torch.zeros((1, 67)), torch.zeros((1, WINDOW, 20)))
    with torch.no_grad():
        torch.onnx.export(wrapped, one, str(path), opset_version=OPSET, dynamo=False, do_constant_folding=True,
                          input_names=["x_atom", "x_global", "x_one_hot"], output_names=["retention_time"])


MODELS: tuple[zoo.ZooModel, ...] = (
    Exported(
        "metapredict_disorder",
        METAPREDICT,
        _MP_CKPT,
        "metapredict's V3 protein disorder predictor, a Lightning checkpoint built by the package's "
        "BRNN_MtM_lightning and exported by torch.onnx at opset 17: a two-layer bidirectional LSTM (hidden 52), "
        "LayerNormalization and a per-residue Linear; (1, 128, 20) one-hot protein-like sequences, as the "
        "package's predict feeds them",
        _npz(protein_sequences),
        {"input_shapes": {"sequence": [1, PROTEIN_LENGTH, len(AMINO_ACIDS)]}},
        export=export_metapredict,
        tools=torch_tools,
    ),
    Exported(
        "deeplc_flexcnn",
        DEEPLC,
        DEEPLC_MODEL,
        "DeepLC's peptide retention time predictor (its default FlexCNN multitask model, a PyTorch checkpoint) "
        "exported by torch.onnx at opset 17 for its default LC setup: ArgMax residues, an Embedding, 1x1 and "
        "5-tap Conv1d + SiLU, masked sum and max pooling, LayerNorm, ScatterElements residue counts, three Gemm "
        "+ SiLU and a low-rank head; (1, 60, 6) atom counts, (1, 67) global features and (1, 60, 20) one-hot "
        "residues of the wheel's example peptides in, minutes out, as the package's predict() feeds them",
        _npz(peptide_features),
        {"input_shapes": {"x_atom": [1, WINDOW, 6], "x_global": [1, 67], "x_one_hot": [1, WINDOW, 20]}},
        export=export_deeplc,
        tools=torch_tools,
    ),
)
