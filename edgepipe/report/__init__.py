"""Stage 6, report: ``report.json`` (versioned schema) and ``report.md`` for people."""

from edgepipe.report.schema import SCHEMA_VERSION, BuildReport

__all__ = ["SCHEMA_VERSION", "BuildReport"]
