"""Atomic output folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.errors import UserError
from edgepipe.output import StagingFolder, check_writable


def test_commit_replaces_final_folder(tmp_path: Path) -> None:
    final = tmp_path / "out" / "target"
    final.mkdir(parents=True)
    (final / "old.txt").write_text("old")
    with StagingFolder(final) as staged:
        assert staged.path is not None and staged.path.parent == final.parent
        (staged.path / "new.txt").write_text("new")
        assert (final / "old.txt").exists()  # nothing changes until commit
        staged.commit()
    assert sorted(p.name for p in final.iterdir()) == ["new.txt"]
    assert sorted(p.name for p in final.parent.iterdir()) == ["target"]


def test_failure_leaves_nothing_and_removes_created_parents(tmp_path: Path) -> None:
    final = tmp_path / "a" / "b" / "target"
    with pytest.raises(RuntimeError), StagingFolder(final) as staged:
        assert staged.path is not None
        (staged.path / "half.txt").write_text("x")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_interrupt_leaves_nothing(tmp_path: Path) -> None:
    final = tmp_path / "target"
    with pytest.raises(KeyboardInterrupt), StagingFolder(final):
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_unwritable_output_is_a_user_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        import os

        if os.access(locked, os.W_OK):  # root ignores permissions: use a file as the parent instead
            blocker = tmp_path / "file"
            blocker.write_text("")
            with pytest.raises(UserError, match="not writable"):
                check_writable(blocker / "out")
        else:
            with pytest.raises(UserError, match="not writable"):
                check_writable(locked / "out")
    finally:
        locked.chmod(0o700)


def test_an_interrupt_held_off_while_the_folder_is_made_leaves_nothing(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # the full test run under load sent SIGINT while __enter__ held signals off: it was raised as they were let
    # through, still inside __enter__, so no __exit__ ran and the staging folder stayed (tests/corpus/test_faults.py)
    import os
    import signal

    made = StagingFolder._make_temporary  # noqa: SLF001 - the step an interrupt is let through after

    def make_then_interrupt(self: StagingFolder) -> Path:
        path = made(self)
        os.kill(os.getpid(), signal.SIGINT)  # pending: __enter__ holds it off until the folder is ready
        return path

    monkeypatch.setattr(StagingFolder, "_make_temporary", make_then_interrupt)
    final = tmp_path / "new" / "out"
    with pytest.raises(KeyboardInterrupt):
        with StagingFolder(final):
            raise AssertionError("the body must not run")
    assert list(tmp_path.iterdir()) == []
