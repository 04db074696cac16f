"""Held-out genomics model: splice-site prediction from DNA (CI-SpliceAI).

- cispliceai 1.2.2: CI-SpliceAI, a splice-site predictor trained on all annotated isoforms (CC BY 4.0), shipped
  as a frozen TensorFlow GraphDef (``cispliceai/data/CI-SpliceAI.pb``, 16 MB, 11385 nodes): an ensemble of five
  SpliceAI-10k networks (3.5M parameters in all) whose residual blocks of dilated 1-D convolutions (kernels 11,
  21 and 41, dilations 1, 4, 10 and 25) TensorFlow lowered to SpaceToBatchND/BatchToSpaceND; each crops the 5000
  nt of context either side and ends in a softmax; their mean is the output. Exported by tf2onnx (opset 17, 14 MB;
  the dilations folded back into 195 Conv, each between an Unsqueeze and a Squeeze; 160 BatchNorm as Mul + Add,
  ReLU, 455 Add, Slice, softmax as ReduceMax/Exp/ReduceSum/Div, Concat + ReduceMean) with its input fixed:
  ``one_hot`` (1, 10102, 4) float32 (A, C, G, T; N all zero) in, ``splice_probs`` (1, 102, 3) out (neither,
  acceptor, donor, for the 102 central bases).

Data are made as the package feeds its model, with the package's own code from the pinned wheel, its model replaced
by a recorder of what it is fed: the package's ``Annotator.run_jobs`` (``annotation.py``, ``data.py``: the window of
2 x (50 + 5000) + 1 nt around an SNV at ``max_dist_from_var`` 50, made even, masked to N outside the gene, REF and
ALT, reverse-complemented on the minus strand) with :class:`SyntheticFasta` for pyfaidx, its model a recorder, and
the gene lookup (``get_overlapping_areas``, a pandas table) answering the synthetic gene. Each pair of samples is the
REF and ALT window of one SNV on a new synthetic gene (:func:`gene_like`: eight GC-rich exons, AT-rich introns with
consensus donors, branch points, polypyrimidine tracts and acceptors, 6 kb intergenic flanks), the strand
alternating and the variant kinds cycled (:data:`SPLICE_VARIANTS`: a donor's GT or an acceptor's AG broken, an
exonic and an intronic SNV).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, rename_tensors, tf2onnx_tools, wheel_modules

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

#: The ONNX opset of the exports written here.
OPSET = 17

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


_npz = zoo._npz  # noqa: SLF001


MODELS: tuple[zoo.ZooModel, ...] = (
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
        tools=tf2onnx_tools,
    ),
)
