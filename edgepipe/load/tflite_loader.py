"""TFLite flatbuffers, read through the LiteRT interpreter."""

from __future__ import annotations

from pathlib import Path

from edgepipe.errors import ModelLoadError
from edgepipe.load.rejections import rejected_by
from edgepipe.tensors import Signature

TFLITE_IDENTIFIER = b"TFL3"


def load(path: Path) -> tuple[bytes, Signature]:
    """The flatbuffer bytes of ``path`` and the signature the interpreter reports."""
    from edgepipe.limits import check_model_file
    from edgepipe.load.tflite_checks import check_tflite

    check_model_file(path)
    content = path.read_bytes()
    if len(content) < 8 or content[4:8] != TFLITE_IDENTIFIER:
        raise ModelLoadError("not a TFLite flatbuffer (no TFL3 identifier)", path=path,
                             fix="Convert the model again with the TFLite converter")
    check_tflite(content, path)  # bounded pure-Python walk first: the interpreter never sees a corrupt file
    from edgepipe.runtimes.litert_runner import read_signature

    with rejected_by("LiteRT", ("ai_edge_litert", "tensorflow"), (ValueError, RuntimeError),
                     "cannot read TFLite model", path, "Convert the model again; check the file is complete"):
        signature = read_signature(content)
    from edgepipe.load.tflite_checks import check_allocates

    check_allocates(content, path)  # else the build's first LiteRT runner fails with exit 3
    return content, signature
