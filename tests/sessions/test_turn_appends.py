"""save_turn appends the turn to its session file and indexes that turn alone, and the
result is the one a full re-index of the file gives."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from kronika import Memory, build_memory, load_settings
from kronika.core.model import RecallFilter
from kronika.testing import FrozenClock

SPEAKERS = ("user", "assistant", "Bob", "user", "user", "assistant")
QUERIES = ("turn 7 lighthouse", "Bob heron", "assistant reply 12", "user says 30 tide")


def _rows(memory: Memory, path: str) -> list[tuple[object, ...]]:
    """The index rows of one file: every column a recall reads, with each row's place
    in its file (neighbours are found by it), in rowid order."""
    with sqlite3.connect(memory.settings.home / "index.sqlite") as conn:
        found = conn.execute(
            "SELECT i.pos, i.id, i.content, i.speaker, i.line, i.session_id, i.turn_ids,"
            " i.created_at, i.text_hash, i.entities, f.content, f.speaker"
            " FROM items AS i JOIN items_fts AS f ON f.rowid = i.rowid"
            " WHERE i.source_path = ? ORDER BY i.rowid",
            (path,),
        ).fetchall()
        (vectors,) = conn.execute(
            "SELECT count(*) FROM items AS i JOIN embeddings AS e ON e.text_hash = i.text_hash"
            " WHERE i.source_path = ?",
            (path,),
        ).fetchone()
    return [tuple(row) for row in found] + [("vectors", vectors)]


def _rowids(memory: Memory, path: str) -> dict[str, int]:
    with sqlite3.connect(memory.settings.home / "index.sqlite") as conn:
        found = conn.execute("SELECT id, rowid FROM items WHERE source_path = ?", (path,))
        return {str(i): int(r) for i, r in found}


def _neighbours(memory: Memory) -> dict[str, list[tuple[str, int]]]:
    ids = [item.id for item in memory.items()]
    return memory.index.neighbours(sorted(ids), RecallFilter(), 3)


def _recalls(memory: Memory) -> list[list[str]]:
    return [[hit.item.id for hit in memory.recall(q, k=8).hits] for q in QUERIES]


def _talk(memory: Memory, clock: FrozenClock, turns: int) -> None:
    for n in range(1, turns + 1):
        speaker = SPEAKERS[n % len(SPEAKERS)]
        memory.save_turn("s1", speaker, f"{speaker} says {n}: lighthouse heron tide {n * 7}")
        clock.advance(seconds=30)


def test_a_turn_is_appended_in_place_and_indexed_alone(memory: Memory, clock: FrozenClock) -> None:
    _talk(memory, clock, 5)
    file = memory.workspace.agent_dir("default") / "sessions" / "s1.md"
    before = file.read_bytes()
    inode = file.stat().st_ino
    rows = _rows(memory, "sessions/s1.md")[:-1]
    rowids = _rowids(memory, "sessions/s1.md")
    memory.save_turn("s1", "user", "one more line about the harbour")
    assert file.stat().st_ino == inode  # not rewritten through a temporary file
    assert file.read_bytes().startswith(before)
    after = _rows(memory, "sessions/s1.md")[:-1]
    # the rows already there were left alone: same rowids, nothing deleted
    assert after[: len(rows)] == rows
    assert _rowids(memory, "sessions/s1.md").items() >= rowids.items()
    assert after[-1][1:4] == (after[-1][1], "one more line about the harbour", "user")


def test_sessions_growing_side_by_side_are_appended_not_reindexed(
    memory: Memory, clock: FrozenClock, tmp_path: Path
) -> None:
    # writers on sessions of their own: each turn follows another session's turn
    for n in range(10):
        for sid in ("s1", "s2", "s3"):
            speaker = "user" if n % 2 == 0 else "assistant"
            memory.save_turn(sid, speaker, f"{sid} {speaker} {n}: lighthouse heron tide {n}")
        clock.advance(seconds=30)
    rowids = {sid: _rowids(memory, f"sessions/{sid}.md") for sid in ("s1", "s2", "s3")}
    memory.save_turn("s2", "user", "s2 user 10: the harbour at dawn")
    memory.save_turn("s1", "user", "s1 user 10: the harbour at dusk")
    for sid in ("s1", "s2", "s3"):  # no turn was indexed again
        assert _rowids(memory, f"sessions/{sid}.md").items() >= rowids[sid].items()
    fresh = tmp_path / "fresh"
    shutil.copytree(memory.settings.home / "agents", fresh / "agents")
    settings = load_settings(fresh, environ={}, embedder="hashing")
    with build_memory(settings, clock=clock) as other:
        other.sync()
        for sid in ("s1", "s2", "s3"):
            assert _rows(other, f"sessions/{sid}.md") == _rows(memory, f"sessions/{sid}.md")
        assert _neighbours(other) == _neighbours(memory)
        assert any(_neighbours(memory).values())
        assert _recalls(other) == _recalls(memory)


def test_ids_and_order_after_many_appends(memory: Memory, clock: FrozenClock) -> None:
    _talk(memory, clock, 60)
    turns = memory.load_session("s1")
    assert [t.provenance.turn_ids[0] for t in turns] == [f"s1_{n}" for n in range(1, 61)]
    assert [t.content.split(":")[0] for t in turns] == [
        f"{SPEAKERS[n % len(SPEAKERS)]} says {n}" for n in range(1, 61)
    ]
    assert len({t.id for t in turns}) == 60


def test_appended_then_synced_equals_a_fresh_reindex(
    memory: Memory, clock: FrozenClock, tmp_path: Path
) -> None:
    # people replying to each other (their exchange context changes the turn before),
    # the assistant, a fact written between turns, repeated turn ids
    _talk(memory, clock, 20)
    memory.remember("the lighthouse keeper is called Ada", key="keeper")
    _talk(memory, clock, 10)
    memory.save_turn("s1", "user", "a repeated id", turn_id="again")
    memory.save_turn("s1", "user", "the same id once more", turn_id="again")
    memory.save_turn("s1", "Bob", "Bob answers with a heron", turn_id="again")
    _talk(memory, clock, 12)
    memory.sync()
    assert len(memory.load_session("s1")) == 45
    # the same Markdown indexed from scratch in another home
    fresh = tmp_path / "fresh"
    shutil.copytree(memory.settings.home / "agents", fresh / "agents")
    settings = load_settings(fresh, environ={}, embedder="hashing")
    with build_memory(settings, clock=clock) as other:
        other.sync()
        assert _rows(other, "sessions/s1.md") == _rows(memory, "sessions/s1.md")
        assert _recalls(other) == _recalls(memory)


def test_a_turn_header_torn_by_a_crash(memory: Memory, clock: FrozenClock) -> None:
    _talk(memory, clock, 3)
    file = memory.workspace.agent_dir("default") / "sessions" / "s1.md"
    whole = [t.content for t in memory.load_session("s1")]
    with file.open("a", encoding="utf-8") as torn:  # what a crash mid-append leaves
        torn.write("\n### [s1_4] assis")
    memory.sync()
    assert [t.content for t in memory.load_session("s1")] == whole
    # the torn header is no turn: "assis" is held by no memory, so it finds only the
    # whole turns of its form "assistant", never a fragment
    found = memory.recall("assis", k=3, mode="lexical").hits
    assert found and all(hit.item.content in whole for hit in found)
    memory.save_turn("s1", "assistant", "after the crash")
    turns = memory.load_session("s1")
    assert [t.provenance.turn_ids[0] for t in turns] == ["s1_1", "s1_2", "s1_3", "s1_4"]
    assert [t.content for t in turns] == [*whole, "after the crash"]
    assert "assis\n" not in file.read_text(encoding="utf-8")
    copies = list((memory.workspace.agent_dir("default") / ".corrupt").iterdir())
    assert any(c.read_bytes().endswith(b"### [s1_4] assis") for c in copies)
    assert any("cut off by a crash" in note for note in memory.workspace.notes)


def test_hand_edits_between_appends_are_picked_up(memory: Memory, clock: FrozenClock) -> None:
    _talk(memory, clock, 6)
    file = memory.workspace.agent_dir("default") / "sessions" / "s1.md"
    text = file.read_text(encoding="utf-8")
    file.write_text(text.replace("says 3:", "says (edited) zebra:"), encoding="utf-8")
    memory.save_turn("s1", "user", "typed after the edit")
    hits = memory.recall("zebra", k=3, mode="lexical").hits
    assert hits and "zebra" in hits[0].item.content
    with file.open("a", encoding="utf-8") as editor:  # a turn added by hand
        editor.write("\n### [mine] user · 2026-11-22T10:00:00Z\nwritten by hand, okapi\n")
    memory.save_turn("s1", "user", "and one more")
    turns = memory.load_session("s1")
    assert [t.provenance.turn_ids[0] for t in turns][-2:] == ["mine", "s1_9"]
    assert memory.recall("okapi", k=3, mode="lexical").hits
    appended = _rows(memory, "sessions/s1.md")
    memory.reindex()
    assert _rows(memory, "sessions/s1.md") == appended


def test_an_edit_that_keeps_the_size_and_the_old_time_is_picked_up(
    memory: Memory, clock: FrozenClock
) -> None:
    _talk(memory, clock, 4)  # the turns after the first are appended without reading
    file = memory.workspace.agent_dir("default") / "sessions" / "s1.md"
    stat = file.stat()
    text = file.read_text(encoding="utf-8")
    file.write_text(text.replace("heron", "egret", 1), encoding="utf-8")  # same size
    os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the old time put back
    memory.save_turn("s1", "user", "after the quiet edit")
    hits = memory.recall("egret", k=3, mode="lexical").hits
    assert hits and "egret" in hits[0].item.content
    appended = _rows(memory, "sessions/s1.md")
    memory.reindex()
    assert _rows(memory, "sessions/s1.md") == appended


_WRITER = """
import sys
from kronika import build_memory, load_settings
settings = load_settings(sys.argv[1], environ={}, embedder="hashing")
with build_memory(settings) as memory:
    for n in range(int(sys.argv[3])):
        memory.save_turn("shared", sys.argv[2], f"{sys.argv[2]} writes {n}")
"""


def test_two_writers_appending_to_one_session(memory: Memory, tmp_path: Path) -> None:
    memory.save_turn("shared", "user", "first")
    home = str(memory.settings.home)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, home, who, "15"], env=env)
        for who in ("user", "Bob")
    ]
    assert [w.wait(timeout=300) for w in writers] == [0, 0]
    memory.sync()
    turns = memory.load_session("shared")
    assert [t.provenance.turn_ids[0] for t in turns] == [f"shared_{n}" for n in range(1, 32)]
    for who in ("user", "Bob"):
        mine = [t.content for t in turns if t.speaker == who and t.content != "first"]
        assert mine == [f"{who} writes {n}" for n in range(15)]
    appended = _rows(memory, "sessions/shared.md")
    memory.reindex()
    assert _rows(memory, "sessions/shared.md") == appended


def test_a_damaged_session_file_is_written_whole_not_appended_to(
    memory: Memory, clock: FrozenClock
) -> None:
    _talk(memory, clock, 3)
    file = memory.workspace.agent_dir("default") / "sessions" / "s1.md"
    file.write_bytes(file.read_bytes().replace(b"heron", b"her\xffon", 1))
    memory.save_turn("s1", "user", "after the damage")
    text = file.read_bytes().decode("utf-8")  # the repaired text was saved
    assert "her\ufffdon" in text and text.endswith("after the damage\n")
    assert [t.provenance.turn_ids[0] for t in memory.load_session("s1")][-1] == "s1_4"
    assert any((memory.workspace.agent_dir("default") / ".corrupt").iterdir())
