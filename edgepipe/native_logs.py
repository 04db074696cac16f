"""Capture what native libraries (TensorFlow, LiteRT) write straight to file descriptor 2.

TensorFlow's C++ side prints CUDA probes and absl banners on import, and LiteRT
announces its XNNPACK delegate; none of it is actionable for a user, and it
buries edgepipe's own one-line errors. These lines are re-logged at DEBUG
(visible with ``edgepipe --debug``) instead of going to the terminal.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("edgepipe.native")


@contextmanager
def native_stderr_to_log() -> Iterator[None]:
    """Send fd-2 output of the body to the ``edgepipe.native`` logger (DEBUG)."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # no real stderr (e.g. captured by a test runner)
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), fd)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, fd)
            os.close(saved)
            sink.seek(0)
            for line in sink.read().decode(errors="replace").splitlines():
                if line.strip():
                    log.debug("%s", line)
