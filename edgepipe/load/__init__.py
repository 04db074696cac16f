"""Stage 1, load: read a user's model safely, whatever its format, and describe its signature."""

from edgepipe.load.detect import ModelFormat, detect_format
from edgepipe.load.source import SourceModel, load_model

__all__ = ["ModelFormat", "SourceModel", "detect_format", "load_model"]
