"""The kept parse of the fact files: used while the file is unchanged, never after an edit."""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.engine.changes import SupersedeFact, TouchFact
from kronika.stores.markdown.atomic import set_pulled_time, stamp_own_write
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.facts.cache import RACY_NS, SMALL_FILE, FactParse
from kronika.stores.markdown.lines import ParsedItems
from kronika.testing import FrozenClock

_NOW = 1_700_000_000_123_456_789


def _entry(stat: tuple[int, int, int, int], checked_ns: int) -> FactParse:
    when = datetime(2024, 1, 1, tzinfo=UTC)
    return FactParse(stat, checked_ns, [], ParsedItems((), {}), hashlib.sha256(), when, ())


def test_a_parse_is_trusted_only_when_its_file_is_older_than_a_clock_tick() -> None:
    stat = (7, 100, _NOW, _NOW)
    settled = _entry(stat, _NOW + RACY_NS)
    assert settled.trusted(stat, _NOW + 10 * RACY_NS) is True
    # another size, modification time or inode: read again
    assert settled.trusted((7, 100, _NOW + 1, _NOW + 1), _NOW + 10 * RACY_NS) is False
    assert settled.trusted((7, 101, _NOW, _NOW + 1), _NOW + 10 * RACY_NS) is False
    assert settled.trusted((8, 100, _NOW, _NOW), _NOW + 10 * RACY_NS) is False
    # only the status time moved (a link added or removed, the mode changed): its bytes
    # are compared before it is used
    assert settled.trusted((7, 100, _NOW, _NOW + 1), _NOW + 10 * RACY_NS) is None
    # read within a tick of its last change: its bytes are checked before it is used
    racy = _entry(stat, _NOW + RACY_NS // 2)
    assert racy.trusted(stat, _NOW + 10 * RACY_NS) is None
    # times of whole seconds (FAT, network shares) make a window of seconds
    whole = (7, 100, 1_700_000_000_000_000_000, 1_700_000_000_000_000_000)
    assert _entry(whole, whole[3] + RACY_NS).trusted(whole, whole[3] + 10 * RACY_NS) is None
    # a large racy file is checked once the tick is over, not at every use within it
    big = (7, SMALL_FILE + 1, _NOW, _NOW)
    assert _entry(big, _NOW).trusted(big, _NOW + 1) is True
    assert _entry(big, _NOW).trusted(big, _NOW + RACY_NS) is None


def test_a_parse_of_what_kronika_stamped_is_trusted_within_the_tick() -> None:
    stat = (7, 100, _NOW - 1, _NOW)
    own = _entry(stat, _NOW)
    own.own = True
    assert own.trusted(stat, _NOW + 1) is True  # no read, however soon after the write
    # any later write leaves another time (or size, inode): read again, or (the status
    # time alone) its bytes compared first
    assert own.trusted((7, 100, _NOW + 5, _NOW + 5), _NOW + 10) is False
    assert own.trusted((7, 100, _NOW - 1, _NOW + 5), _NOW + 10) is None
    unstamped = _entry(stat, _NOW)
    assert unstamped.trusted(stat, _NOW + 1) is None


def test_no_write_after_kronikas_stamp_leaves_the_stamp(tmp_path: Path) -> None:
    """What the stamp rests on: however soon a write follows kronika's, even in the
    same clock tick, the file's modification time is no longer the stamp."""
    file = tmp_path / "facts.md"
    file.write_bytes(b"- one\n")
    fd = os.open(file, os.O_WRONLY | os.O_APPEND)
    try:
        for n in range(300):
            os.write(fd, b"- more\n")
            stamp = stamp_own_write(fd)
            assert stamp is not None and file.stat().st_mtime_ns == stamp
            with open(file, "r+b") as other:  # another writer, at once, same size
                other.write(b"- ONE\n" if n % 2 else b"- one\n")
            assert file.stat().st_mtime_ns != stamp
    finally:
        os.close(fd)


def test_a_pulled_files_record_time_is_a_stamp_only_when_it_is_in_the_past(
    tmp_path: Path,
) -> None:
    """A file a working copy pulled takes the record's time. That time says nobody has
    written since, as kronika's own stamp does, only when it is earlier than the
    write's: then a write that follows at once, same size, leaves another time. A
    record time ahead of this machine's clock is no stamp."""
    file = tmp_path / "brain_archive.md"
    file.write_bytes(b"- one\n")
    for n in range(200):
        with open(file, "ab") as handle:
            handle.write(b"- more\n")
        written = file.stat().st_mtime_ns
        record_time = written - 1_000_000 * (n % 7 + 1)  # another worker's, just before
        assert set_pulled_time(file, record_time) == record_time
        assert file.stat().st_mtime_ns == record_time
        with open(file, "r+b") as other:  # another writer, at once, same size
            other.write(b"- ONE\n" if n % 2 else b"- one\n")
        assert file.stat().st_mtime_ns != record_time
    ahead = file.stat().st_mtime_ns + 5_000_000_000  # a clock five seconds ahead
    assert set_pulled_time(file, ahead) is None
    assert file.stat().st_mtime_ns == ahead  # the record's time all the same


def test_a_same_size_edit_right_after_kronikas_write_is_seen(small_brain: Memory) -> None:
    """An editor saving in place within milliseconds of kronika's own write, to the
    Brain and to the archive kronika has just appended to, is read by the next call."""
    with small_brain as mem:
        for n in range(30):
            mem.remember(f"value number {n:02d}", key=f"k{n:02d}")
        folder = mem.workspace.agent_dir("default")
        archive = folder / "brain_archive.md"
        for n in range(30, 60):  # until a write appends to the archive
            size = archive.stat().st_size
            mem.remember(f"value number {n:02d}", key=f"k{n:02d}")
            if archive.stat().st_size != size:
                break
        else:
            raise AssertionError("no write moved facts to the archive")
        last = mem.workspace.archived_facts("default")[-1]
        assert last.key is not None and last.value is not None
        edited = last.value.replace("value", "valor")
        text = archive.read_text(encoding="utf-8")
        with open(archive, "r+", encoding="utf-8") as handle:  # the same inode and size
            handle.write(text.replace(f"**{last.key}**: {last.value}", f"**{last.key}**: {edited}"))
        assert isinstance(mem.remember(edited, key=last.key).change, TouchFact)
        brain = folder / "brain.md"
        mem.remember("green tea", key="drink")
        text = brain.read_text(encoding="utf-8")
        with open(brain, "r+", encoding="utf-8") as handle:
            handle.write(text.replace("green tea", "black tea"))
        assert isinstance(mem.remember("black tea", key="drink").change, TouchFact)
        assert [f.value for f in mem.facts() if f.key == "drink"] == ["black tea"]


def _same_size_edit(file: Path, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` (same length) in place, then set the modification
    time back, as a quick editor or a script within the same clock tick would leave it."""
    assert len(old.encode()) == len(new.encode())
    before = file.stat()
    text = file.read_text(encoding="utf-8")
    assert old in text
    with open(file, "r+", encoding="utf-8") as handle:  # the same inode, as vi -c wq does
        handle.write(text.replace(old, new))
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = file.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_a_same_size_hand_edit_of_the_brain_is_seen_by_the_next_call(memory: Memory) -> None:
    memory.remember("green tea", key="drink")
    brain = memory.workspace.agent_dir("default") / "brain.md"
    _same_size_edit(brain, "green tea", "black tea")
    again = memory.remember("black tea", key="drink")
    assert isinstance(again.change, TouchFact)  # the edited value, not a new one
    assert [f.value for f in memory.facts() if f.key == "drink"] == ["black tea"]
    assert memory.recall("black tea", k=1).hits[0].item.value == "black tea"


@pytest.fixture
def small_brain(home: Path, clock: FrozenClock) -> Memory:
    settings = load_settings(home, environ={}, embedder="hashing").with_overrides(
        brain_max=60, brain_budget=40
    )
    return build_memory(settings, create=True, clock=clock)


def test_a_same_size_hand_edit_of_the_archive_is_seen_by_the_next_call(
    small_brain: Memory,
) -> None:
    with small_brain as mem:
        for n in range(30):
            mem.remember(f"value number {n:02d}", key=f"k{n:02d}")
        archived = mem.workspace.archived_facts("default")
        first = archived[0]
        assert first.key is not None and first.value is not None
        edited = first.value.replace("value", "valor")
        archive = mem.workspace.agent_dir("default") / "brain_archive.md"
        _same_size_edit(archive, f"**{first.key}**: {first.value}", f"**{first.key}**: {edited}")
        assert isinstance(mem.remember(edited, key=first.key).change, TouchFact)
        # the old value is no longer stored: saying it again replaces the edited one
        assert isinstance(mem.remember(first.value, key=first.key).change, SupersedeFact)


def test_a_link_to_a_fact_file_made_and_taken_away_keeps_its_parse(small_brain: Memory) -> None:
    """What a batch's journal does to a file it appends to: a hard link made before the
    batch and removed after it moves the file's status time alone. The same bytes keep
    their parse (and what it knows of the facts appended since); other bytes are read."""
    with small_brain as mem:
        for n in range(30):
            mem.remember(f"value number {n:02d}", key=f"k{n:02d}")
        folder = mem.workspace.agent_dir("default")
        archive = folder / "brain_archive.md"
        facts = mem.workspace.state.facts
        kept = facts.get(str(folder), "brain_archive.md")
        assert kept is not None
        os.link(archive, folder / "linked.md")
        os.unlink(folder / "linked.md")
        assert facts.get(str(folder), "brain_archive.md") is kept
        first = mem.workspace.archived_facts("default")[0]
        assert first.key is not None and first.value is not None
        edited = first.value.replace("value", "valor")
        _same_size_edit(archive, f"**{first.key}**: {first.value}", f"**{first.key}**: {edited}")
        assert facts.get(str(folder), "brain_archive.md") is None
        assert any(f.value == edited for f in mem.workspace.archived_facts("default"))


def test_the_archive_grows_at_its_end_and_its_rows_match_a_rebuild(small_brain: Memory) -> None:
    with small_brain as mem:
        for n in range(20):
            mem.remember(f"value number {n:02d}", key=f"k{n:02d}")
        archive = mem.workspace.agent_dir("default") / "brain_archive.md"
        before = archive.read_bytes()
        inode = archive.stat().st_ino
        for n in range(20, 60):
            mem.remember(f"value number {n:02d}", key=f"k{n:02d}")
        after = archive.read_bytes()
        assert after.startswith(before) and len(after) > len(before)
        assert archive.stat().st_ino == inode  # appended in place, not rewritten
        rows = {
            path: sorted(
                (it.id, it.provenance.line, it.content, it.section)
                for it in mem.index.source_items("default", path)
            )
            for path in ("brain.md", "brain_archive.md")
        }
        state = mem.index.source_states("default")["brain_archive.md"]
        assert state.content_hash == hashlib.sha256(after).hexdigest()
        mem.reindex()
        rebuilt = {
            path: sorted(
                (it.id, it.provenance.line, it.content, it.section)
                for it in mem.index.source_items("default", path)
            )
            for path in ("brain.md", "brain_archive.md")
        }
        assert rows == rebuilt
        assert len(mem.facts()) == 60


def test_a_batch_grows_the_archive_and_the_history_at_their_end(small_brain: Memory) -> None:
    """The batch journal's link to a file (made before the batch first appends to it)
    changes the file's change time only: the append still goes in place."""
    with small_brain as mem:
        for n in range(20):
            mem.remember(f"value number {n:02d}", key=f"k{n:02d}")
        mem.remember("first value", key="moving")
        mem.remember("second value", key="moving")
        folder = mem.workspace.agent_dir("default")
        files = [folder / "brain_archive.md", folder / "history.md"]
        before = [(f.read_bytes(), f.stat().st_ino) for f in files]
        facts: list[str | dict[str, str]] = [
            {"key": f"k{n:02d}", "value": f"value number {n:02d}"} for n in range(20, 60)
        ]
        mem.remember_many([{"key": "moving", "value": "third value"}, *facts])
        for file, (old, inode) in zip(files, before, strict=True):
            after = file.read_bytes()
            assert after.startswith(old) and len(after) > len(old), file.name
            assert file.stat().st_ino == inode, f"{file.name} was rewritten, not appended to"
        state = mem.index.source_states("default")["brain_archive.md"]
        assert state.content_hash == hashlib.sha256(files[0].read_bytes()).hexdigest()
        assert len(mem.facts()) == 61
        assert [h.value for h in mem.history("moving")] == [
            "first value",
            "second value",
            "third value",
        ]


def test_a_hand_edit_of_the_archive_between_processes_is_picked_up(
    home: Path, clock: FrozenClock
) -> None:
    settings = load_settings(home, environ={}, embedder="hashing").with_overrides(
        brain_max=60, brain_budget=40
    )
    with build_memory(settings, create=True, clock=clock) as mem:
        for n in range(30):
            mem.remember(f"value number {n:02d}", key=f"k{n:02d}")
    archive = home / "agents" / "default" / "brain_archive.md"
    text = archive.read_text(encoding="utf-8")
    archive.write_text(text + "- **hand**: written by hand\n", encoding="utf-8")
    with build_memory(settings, clock=clock) as mem:
        assert isinstance(mem.remember("written by hand", key="hand").change, TouchFact)


def test_two_writers_on_one_workspace_read_each_others_facts_as_a_rebuild_would(
    home: Path, clock: FrozenClock
) -> None:
    """Two memories on one workspace (two workers of a server) take turns: each reads
    the Brain and the archive the other changed (spliced from its earlier parse, not
    parsed whole), and what each sees, and the index, are what a full read gives."""
    settings = load_settings(home, environ={}, embedder="hashing").with_overrides(
        brain_max=120, brain_budget=80
    )
    with (
        build_memory(settings, create=True, clock=clock) as one,
        build_memory(settings, clock=clock) as two,
    ):
        folder = one.workspace.agent_dir("default")
        for n in range(60):
            writer = (one, two)[n % 2]
            writer.remember(f"value {n} of k{n % 17}", key=f"k{n % 17}")
            clock.advance(seconds=1)
            if n == 31:  # a hand edit between the two
                brain_md = folder / "brain.md"
                text = brain_md.read_text(encoding="utf-8")
                brain_md.write_text(text + "- written by hand\n", encoding="utf-8")
        for mem in (one, two):
            text = (folder / "brain.md").read_text(encoding="utf-8")
            full = brain.parse_facts(
                text, spec=brain.BRAIN, agent="default", tenant="default", mtime=clock.now()
            )
            seen = mem.workspace.brain_facts("default")
            assert [(f.id, f.key, f.value) for f in seen] == [
                (f.id, f.key, f.value) for f in full.items
            ]
            assert any(f.content == "written by hand" for f in mem.facts())
        assert sorted(f.value or "" for f in one.facts()) == sorted(
            f.value or "" for f in two.facts()
        )
        rows = _index_rows(one)
        one.reindex()
        assert rows == _index_rows(one)


def _index_rows(mem: Memory) -> dict[str, list[tuple[object, ...]]]:
    return {
        path: sorted(
            (it.id, it.provenance.line, it.content, it.section)
            for it in mem.index.source_items("default", path)
        )
        for path in ("brain.md", "brain_archive.md", "history.md")
    }


def _history_rows(mem: Memory, path: str = "history.md") -> dict[str, int]:
    """The rows of a fact file in the local index: each id with its rowid (a row
    written again gets a new one)."""
    index: Any = getattr(mem.index, "inner", mem.index)
    with index.state.reading() as conn:
        found = conn.execute("SELECT id, rowid FROM items WHERE source_path = ?", (path,))
        return {str(i): int(r) for i, r in found.fetchall()}


def test_an_archived_fact_given_a_new_value_adds_its_one_row_to_the_history(
    small_brain: Memory,
) -> None:
    """The old value goes to the history's end, and the index adds its row to those of
    the history without writing the others again (a history of thousands of values
    would otherwise be indexed whole at every change); the rows are a rebuild's."""
    with small_brain as mem:
        for n in range(60):
            mem.remember(f"value number {n:02d}", key=f"k{n:02d}")
        archived = [f for f in mem.workspace.archived_facts("default") if f.key]
        assert len(archived) >= 6, "the Brain's budget archived facts"
        for n, fact in enumerate(archived[:6]):
            assert fact.key is not None
            before = _history_rows(mem)
            mem.remember(f"a new value {n}", key=fact.key)
            after = _history_rows(mem)
            assert set(after) - set(before) == {fact.id}
            assert {i: after[i] for i in before} == before, "a history row was written again"
        rows = sorted(
            (it.id, it.provenance.line, it.content, it.valid_to)
            for it in mem.index.source_items("default", "history.md")
        )
        mem.reindex()
        assert rows == sorted(
            (it.id, it.provenance.line, it.content, it.valid_to)
            for it in mem.index.source_items("default", "history.md")
        )
        assert [h.value for h in mem.history(archived[0].key or "")][-1] == "a new value 0"


def test_a_forgotten_archived_fact_takes_its_row_alone_out_of_the_index(
    small_brain: Memory,
) -> None:
    """The rows of the archive's other facts stay (they get their new lines), and the
    rows are a rebuild's; the forgotten text is in no row."""
    archive = "brain_archive.md"
    with small_brain as mem:
        for n in range(60):
            mem.remember(f"value number {n:02d}", key=f"k{n:02d}")
        archived = [f for f in mem.workspace.archived_facts("default") if f.key]
        assert len(archived) >= 10
        for fact in (archived[2], archived[7]):
            before = _history_rows(mem, archive)
            mem.forget(fact.id)
            after = _history_rows(mem, archive)
            assert set(before) - set(after) == {fact.id}
            assert after == {i: r for i, r in before.items() if i != fact.id}
            hits = mem.recall(fact.value or "", k=5, mode="lexical").hits
            assert all(hit.item.id != fact.id for hit in hits)
        rows = sorted(
            (it.id, it.provenance.line, it.content)
            for it in mem.index.source_items("default", archive)
        )
        mem.reindex()
        assert rows == sorted(
            (it.id, it.provenance.line, it.content)
            for it in mem.index.source_items("default", archive)
        )
