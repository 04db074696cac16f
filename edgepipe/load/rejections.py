"""A library's rejection of a user's file, told apart from a bug in edgepipe.

A loader turns an exception into a user error (exit 1) only when it is one the library
raises for a file it cannot read (``onnx.checker.ValidationError``, protobuf's
``DecodeError``, LiteRT's ``ValueError`` on a bad flatbuffer, ...) *and* the innermost
frame that raised it, past generic helpers (numpy, the standard library), belongs to that
library. Anything else keeps its traceback and exit 3. The converted error keeps the
library's exception as ``__cause__`` and names the library in ``rejected_by``, so the
fuzzers can check that every refusal really is one (:func:`is_expected_rejection`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from edgepipe.errors import EdgepipeError, ModelLoadError

#: Packages libraries call into: a failure raised there is decided by the library frame that called them.
HELPERS = frozenset({"numpy", "onnx", "google", "sympy", "packaging", "absl", "flatbuffers", "ml_dtypes", "keras",
                     "h5py", "tensorflow"})


def _package(frame: TracebackType) -> str:
    return str(frame.tb_frame.f_globals.get("__name__", "")).split(".")[0]


def raised_by(exc: BaseException, packages: tuple[str, ...]) -> bool:
    """True when the innermost frame of ``exc``'s traceback outside generic helpers is in ``packages``.

    ``packages`` are never skipped as helpers (so ``("onnx",)`` claims what onnx itself raised).
    """
    frames: list[TracebackType] = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    for frame in reversed(frames):
        package = _package(frame)
        if package in packages:
            return True
        if package in HELPERS or package in sys.stdlib_module_names:
            continue
        return False
    return False


def first_line(exc: BaseException) -> str:
    """The exception's first line (its type name when it has no message), without ONNX Runtime's error-code
    prefix and C++ source paths."""
    text = str(exc).strip()
    line = (text.splitlines()[0] if text else type(exc).__name__).split(" : FAIL : ")[-1]
    return line.split("] ")[-1] if line.startswith("/onnxruntime_src") else line


@contextmanager
def rejected_by(library: str, packages: tuple[str, ...], errors: tuple[type[BaseException], ...], problem: str,
                path: Path, fix: str) -> Iterator[None]:
    """Run the body; ``errors`` raised inside ``packages`` become ``ModelLoadError("<problem> (<message>)")``."""
    try:
        yield
    except errors as exc:
        if not raised_by(exc, packages):
            raise
        error = ModelLoadError(f"{problem} ({first_line(exc)[:300]})", path=path, fix=fix)
        error.rejected_by = library  # type: ignore[attr-defined]
        raise error from exc


def is_expected_rejection(error: EdgepipeError) -> bool:
    """True for edgepipe's own refusal (no cause) or a library's rejection converted by :func:`rejected_by`.

    The fuzzers count anything else, an error wrapping an unexpected exception, as a finding.
    """
    cause = error.__cause__
    return cause is None or getattr(error, "rejected_by", None) is not None
