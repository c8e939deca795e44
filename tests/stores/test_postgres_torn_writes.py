"""A worker killed between the file edits of one write and their push leaves its
folder holding part of that write. The next hold of the folder gives every file that
differs from the record's version that version again, before it pulls, so no later
push sends part of a write: an archived fact given a new value by a killed worker
keeps its old value, where the Brain's edit met another worker's change and the
archive's did not."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory, load_settings
from kronika.testing import archive_document, archived_fact

pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def _seed(memory: Any) -> None:
    """Three archived facts, ``o0``–``o2`` (``seeded 0``…), and ``city`` in the Brain."""
    now = datetime.now(UTC).replace(microsecond=0)
    facts = [archived_fact(f"o{j}", f"seeded {j}", now, id=f"f-ox{j:03d}") for j in range(3)]
    archive = memory.workspace.agent_dir("default") / "brain_archive.md"
    archive.write_text(archive_document(facts), encoding="utf-8")
    memory.sync("default")
    memory.remember("Kraków", key="city")


@pytest.mark.parametrize("killed", [True, False], ids=["killed-in-a-hold", "hand-edit"])
def test_a_write_cut_short_in_one_folder_never_reaches_the_record_in_part(
    postgres_url: str, tmp_path: Path, killed: bool
) -> None:
    def settings(folder: str) -> Any:
        return load_settings(
            tmp_path / folder, environ={}, embedder="hashing", database_url=postgres_url
        )

    with build_memory(settings("a"), create=True) as first:
        _seed(first)
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


_WRITER = textwrap.dedent(
    """
    import os, sys
    from kronika import build_memory, load_settings

    kill_at, writes = int(sys.argv[3]), None
    real, write, unlink = os.replace, os.write, os.unlink

    def written(name):
        writes.append(os.path.basename(name))
        if len(writes) == kill_at:
            os._exit(9)  # killed right after this file write

    def replace(source, target, *args, **kwargs):
        real(source, target, *args, **kwargs)
        if str(target).endswith(".md") and writes is not None:
            written(target)

    def write_(fd, data):  # a file's text appended in place
        done = write(fd, data)
        name = os.readlink(f"/proc/self/fd/{fd}")
        if name.endswith(".md") and writes is not None:
            written(name)
        return done

    def unlink_(path, *args, **kwargs):
        if str(path).endswith("record.writing") and writes is not None and kill_at < 0:
            os._exit(9)  # killed once the hold has pushed, before it ends
        unlink(path, *args, **kwargs)

    os.replace, os.write, os.unlink = replace, write_, unlink_
    settings = load_settings(sys.argv[1], environ={}, embedder="hashing", database_url=sys.argv[2])
    with build_memory(settings) as memory:
        writes = []  # the write's own, from here
        memory.remember(sys.argv[5], key=sys.argv[4])
        print(" ".join(writes))
        writes = None
    """
)


@pytest.mark.parametrize(
    ("key", "old", "least"),
    [("o1", "seeded 1", {"brain.md", "brain_archive.md"}), ("p1", "first", {"brain.md"})],
    ids=["archived-fact", "current-fact"],
)
def test_a_worker_killed_after_any_file_write_of_a_facts_new_value_loses_none(
    postgres_url: str, tmp_path: Path, key: str, old: str, least: set[str]
) -> None:
    """Kill the worker after each file write of the write that gives a fact a new value
    (an archived fact: into the Brain, the archive, its history, the Brain again; a
    current one: the Brain, its history), and once a write of a newer value has pushed,
    while another worker changes the Brain: every fact keeps one value and one history,
    the old ones when the kill came before the push, and the killed worker's folder,
    started again, agrees with a fresh one."""

    def settings(folder: str) -> Any:
        return load_settings(
            tmp_path / folder, environ={}, embedder="hashing", database_url=postgres_url
        )

    def state(memory: Any) -> tuple[dict[str, str | None], list[str | None]]:
        facts = sorted((f.key, f.value) for f in memory.facts() if f.key)
        assert len(facts) == len(dict(facts)), facts  # one value a key
        return dict(facts), [f.value for f in memory.history(key)]

    with build_memory(settings("seed"), create=True) as first:
        _seed(first)
        first.remember("first", key="p1")
        before = state(first)
    kill_at, killed, value = 1, [], "given again"
    while True:
        home = tmp_path / f"killed{kill_at}"
        with build_memory(settings(home.name), create=True):
            pass  # the folder as the record has it
        done = subprocess.run(
            [sys.executable, "-c", _WRITER, str(home), postgres_url, str(kill_at), key, value],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode in (0, 9), done.stderr[-2000:]
        with build_memory(settings(f"other{kill_at}"), create=True) as other:
            other.remember(f"city {kill_at}", key="city")  # the Brain changes meanwhile
        with build_memory(settings(home.name)) as again:  # the killed worker, again
            held = state(again)
        with build_memory(settings(f"fresh{kill_at}"), create=True) as fresh:
            kept = state(fresh)
        assert held == kept, kill_at
        values, history = kept
        assert values == {**before[0], "city": f"city {kill_at}", key: values[key]}, kill_at
        if kill_at < 0:  # killed after its push: the new value holds
            assert done.returncode == 9 and values[key] == value
            break
        if done.returncode == 0:  # no file write left to be killed after
            assert values[key] == value
            files = done.stdout.split()  # the file writes of the whole write
            kill_at, value = -1, "given once more"
            continue
        # not sent, so not acknowledged: the value and the history as they were
        assert (values[key], history) == (old, before[1]), (kill_at, kept)
        killed.append(kill_at)
        kill_at += 1
    assert len(killed) == len(files) >= len(least) + 1 and least <= set(files), files
