"""The published JSON Schema of ``report.json`` (and of ``summary.json``), generated from the pydantic models.

The schema is the models' own (``model_json_schema``), so it never drifts from
what edgepipe writes; ``$id`` carries the schema version a reader should check.
"""

from __future__ import annotations

from typing import Any, Literal

from edgepipe.report.schema import SCHEMA_VERSION, BuildReport
from edgepipe.report.summary import SUMMARY_VERSION, BuildSummary

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def report_json_schema(document: Literal["report", "summary"] = "report") -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``report.json`` or ``summary.json``."""
    model, version = (BuildReport, SCHEMA_VERSION) if document == "report" else (BuildSummary, SUMMARY_VERSION)
    schema = model.model_json_schema(mode="serialization")
    return {"$schema": DIALECT, "$id": f"urn:edgepipe:{document}:{version}", **schema,
            "title": f"edgepipe {document}.json {version}"}
