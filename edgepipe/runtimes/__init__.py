"""Real inference runtimes behind one interface: ONNX Runtime and LiteRT."""

from __future__ import annotations

from pathlib import Path

from edgepipe.runtimes.base import Runner

RUNTIME_BY_SUFFIX = {".onnx": "onnxruntime", ".tflite": "litert"}


def open_runner(path: Path, runtime: str | None = None, threads: int | None = None, *,
                reference_int8: bool = False, graph_as_written: bool = False) -> Runner:
    """A runner for ``path`` (by suffix unless ``runtime`` is given), not yet activated.

    ``reference_int8``: run int8 (QDQ) graphs with exact integer semantics instead of this host's fused int8
    kernels — what accuracy is judged on (see :class:`~edgepipe.runtimes.ort_runner.OnnxRuntimeRunner`).
    ``graph_as_written``: ONNX Runtime runs the nodes as the file has them, without its graph optimizations (two
    graphs of the same function then give the same values; fused kernels round differently).
    """
    runtime = runtime or RUNTIME_BY_SUFFIX[path.suffix.lower()]
    if runtime == "onnxruntime":
        from edgepipe.runtimes.ort_runner import OnnxRuntimeRunner

        return OnnxRuntimeRunner(path, threads=threads, reference_int8=reference_int8,
                                 graph_as_written=graph_as_written)
    if runtime == "litert":
        from edgepipe.runtimes.litert_runner import LiteRTRunner

        return LiteRTRunner(path, threads=threads)
    raise ValueError(f"unknown runtime {runtime!r}")


__all__ = ["RUNTIME_BY_SUFFIX", "Runner", "open_runner"]
