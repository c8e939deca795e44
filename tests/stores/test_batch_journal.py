"""The batch journal on real files: each way a batch changes a file (a rename, an
append in place, a cut in place, a new file) is put back byte for byte, by a batch
that raises and by the next lock of a writer that was cut short."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kronika.stores.batch import FOLDER, BatchJournal, keep
from kronika.stores.lock import WorkspaceLock
from kronika.stores.markdown.atomic import atomic_write_text

ORIGINAL = {"brain.md": "# Brain\n- a\n", "history.md": "# History\n- old\n- torn"}


def _files(home: Path) -> dict[str, bytes]:
    folder = home / "agents" / "default"
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _batch(home: Path) -> None:
    """What a batch does to the files: a rename, a cut then appends, a new file."""
    folder = home / "agents" / "default"
    atomic_write_text(folder / "brain.md", "# Brain\n- a\n- b\n")  # kept by the write
    history = folder / "history.md"
    keep(history)  # an append in place...
    with open(history, "ab") as out:
        out.write(b"\n- appended")
    keep(history, cutting=True)  # ...then a cut in place (a torn end removed)
    os.truncate(history, 10)
    with open(history, "ab") as out:
        out.write(b"- after the cut\n")
    atomic_write_text(folder / "sessions.md", "a new file\n")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "agents" / "default"
    folder.mkdir(parents=True)
    for name, text in ORIGINAL.items():
        (folder / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_a_batch_that_raises_is_put_back_byte_for_byte(home: Path) -> None:
    before = _files(home)
    journal = BatchJournal(home)
    with pytest.raises(RuntimeError), journal.recording():
        _batch(home)
        assert _files(home) != before
        raise RuntimeError("part way")
    assert _files(home) == before
    assert not (home / FOLDER).exists()


def test_a_batch_cut_short_is_put_back_when_the_lock_is_next_taken(home: Path) -> None:
    before = _files(home)
    with BatchJournal(home).recording():  # never committed: as if the writer were killed
        _batch(home)
    assert (home / FOLDER).exists()
    with WorkspaceLock(home / ".kronika.lock"):
        assert _files(home) == before
    assert not (home / FOLDER).exists()


def test_a_batch_committed_stays(home: Path) -> None:
    journal = BatchJournal(home)
    with journal.recording():
        _batch(home)
    journal.commit()
    after = _files(home)
    assert after["sessions.md"] == b"a new file\n"
    assert after["history.md"] == b"# History\n- after the cut\n"
    assert not (home / FOLDER).exists()
    with WorkspaceLock(home / ".kronika.lock"):
        assert _files(home) == after


def test_files_outside_the_agents_folders_are_not_recorded(home: Path) -> None:
    journal = BatchJournal(home)
    with pytest.raises(RuntimeError), journal.recording():
        atomic_write_text(home / "index.model", "model\n")
        raise RuntimeError("part way")
    assert (home / "index.model").read_text(encoding="utf-8") == "model\n"
