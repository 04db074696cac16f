"""Report files: strict typed records, written as JSON beside their Markdown, atomically.

Every report edgepipe writes (a build's ``summary.{json,md}``, a fleet's
``fleet.{json,md}``) is a strict pydantic record (an unknown key is an error
when it is read back) dumped as indented JSON, next to a Markdown rendering of
the same record. Both go through a temporary file and a rename, so a reader
(or an interrupted run) never sees half a file.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from edgepipe.output import write_text_atomic


class Record(BaseModel):
    """A report record: unknown keys are rejected when a file is read back (a newer writer, a typo)."""

    model_config = ConfigDict(extra="forbid")


def write_record(folder: Path, record: BaseModel, json_name: str, markdown: str, markdown_name: str) -> list[Path]:
    """``record`` as ``folder/json_name`` and its rendering ``markdown`` as ``folder/markdown_name``."""
    return [write_text_atomic(folder / json_name, record.model_dump_json(indent=2) + "\n"),
            write_text_atomic(folder / markdown_name, markdown)]
