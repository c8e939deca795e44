"""A worker killed between the file edits of one write and their push leaves its
folder holding part of that write. The next hold of the folder gives every file that
differs from the record's version that version again, before it pulls, so no later
push sends part of a write: an archived fact given a new value by a killed worker
keeps its old value, where the Brain's edit met another worker's change and the
archive's did not."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory, load_settings
from kronika.testing import archive_document, archived_fact

pytest.importorskip("psycopg", reason="the postgres extra is not installed")


@pytest.mark.parametrize("killed", [True, False], ids=["killed-in-a-hold", "hand-edit"])
def test_a_write_cut_short_in_one_folder_never_reaches_the_record_in_part(
    postgres_url: str, tmp_path: Path, killed: bool
) -> None:
    def settings(folder: str) -> Any:
        return load_settings(
            tmp_path / folder, environ={}, embedder="hashing", database_url=postgres_url
        )

    now = datetime.now(UTC).replace(microsecond=0)
    facts = [archived_fact(f"o{j}", f"seeded {j}", now, id=f"f-ox{j:03d}") for j in range(3)]
    with build_memory(settings("a"), create=True) as first:
        archive = first.workspace.agent_dir("default") / "brain_archive.md"
        archive.write_text(archive_document(facts), encoding="utf-8")
        first.sync("default")
        first.remember("Kraków", key="city")
    # what the write of a new value for o1 leaves after its first two file writes:
    # the fact moved from the archive into the Brain, nothing sent to the record
    folder = tmp_path / "a" / "agents" / "default"
    lines = (folder / "brain_archive.md").read_text("utf-8").splitlines(keepends=True)
    [at] = [n for n, line in enumerate(lines) if line.startswith("- **o1**:")]
    (folder / "brain_archive.md").write_text("".join(lines[:at] + lines[at + 1 :]), "utf-8")
    brain = (folder / "brain.md").read_text("utf-8")
    (folder / "brain.md").write_text(brain.rstrip("\n") + "\n" + lines[at], "utf-8")
    if killed:  # the hold's marker, which its end would have removed
        (tmp_path / "a" / "record.writing").touch()
    with build_memory(settings("b"), create=True) as second:
        second.remember("Gdańsk", key="city")  # the Brain changes in the record meanwhile
    with build_memory(settings("a")) as again:  # the killed worker, started again
        held = sorted((f.key, f.value) for f in again.facts() if (f.key or "").startswith("o"))
        notes = again.notes
    with build_memory(settings("c"), create=True) as fresh:
        kept = sorted((f.key, f.value) for f in fresh.facts() if (f.key or "").startswith("o"))
    if killed:
        assert held == kept == [("o0", "seeded 0"), ("o1", "seeded 1"), ("o2", "seeded 2")]
        assert not (tmp_path / "a" / "record.writing").exists()
        assert list((folder / ".corrupt").glob("brain_archive.md.unsent*")), notes
    else:  # a hand edit met by another worker's change: the documented conflict rule
        assert any("edited here while another worker changed it" in n for n in notes)
        assert held == kept
