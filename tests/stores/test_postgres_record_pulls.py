"""A worker pulling a session another worker appended to gets the added turns alone:
its file is extended in place to the record's text, byte for byte, with the record's
modification time (the shared index holds that state: nothing is indexed again); a
file that is not the record's previous version (edited here) is fetched whole, and
nothing is lost."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.memory import Memory
from kronika.settings import Settings
from kronika.stores.postgres.connect import open_pool
from kronika.stores.postgres.replica import MarkingRecord, ReplayMark
from kronika.stores.working_copy import WorkingCopy

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

PATH = "sessions/talk.md"


def _settings(home: Path, url: str) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", database_url=url)


def _record_text(url: str) -> tuple[str, str]:
    """The session's whole text in the record (body and parts) and its SHA-256."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT d.body || coalesce((SELECT string_agg(p.text, '' ORDER BY p.change)"
            " FROM record_document_parts p WHERE p.tenant = d.tenant AND p.agent = d.agent"
            " AND p.path = d.path), ''), d.sha256 FROM record_documents d"
            " WHERE d.agent = 'default' AND d.path = %s",
            (PATH,),
        ).fetchone()
    assert row is not None
    return row[0], row[1]


def _file(memory: Memory) -> Path:
    return memory.workspace.agent_dir("default") / PATH


def _matches_the_record(url: str, memory: Memory) -> None:
    raw = _file(memory).read_bytes()
    text, sha = _record_text(url)
    assert raw == text.encode() and hashlib.sha256(raw).hexdigest() == sha


def test_a_pulled_append_extends_the_file_and_indexes_the_new_turn_alone(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        for n in range(6):
            first.save_turn("talk", "user", f"turn {n}: the kettle is on")
        second.sync("default")  # the session, whole: the second worker's copy holds it
        _matches_the_record(postgres_url, second)
        inode = _file(second).stat().st_ino
        for n in range(3):
            first.save_turn("talk", "user", f"the heron number {n} stood by the weir")
            report = second.sync("default")  # pulls the new turn, then indexes it
            _matches_the_record(postgres_url, second)
            assert _file(second).stat().st_ino == inode  # extended in place, not rewritten
            # the turn was indexed by the worker that wrote it, in the index both share:
            # the file, as pulled, has the state the index holds and is not read again
            assert report.files_indexed == report.items_indexed == 0
            second.save_turn("talk", "user", f"the second worker's turn {n}")
            _matches_the_record(postgres_url, second)
        for n in range(3):  # several turns between two looks: their parts, in order
            first.save_turn("talk", "user", f"while the other was away, {n}")
        second.sync("default")
        _matches_the_record(postgres_url, second)
        assert _file(second).stat().st_ino == inode
        first.save_turn("talk", "user", "a marmalade cat slept on the piano")
        hits = second.recall("marmalade cat piano").hits
        assert hits and "marmalade cat" in hits[0].item.content
        _matches_the_record(postgres_url, second)
        contents = [t.content for t in second.load_session("talk")]
        assert contents[-5:] == [
            "the second worker's turn 2",
            *(f"while the other was away, {n}" for n in range(3)),
            "a marmalade cat slept on the piano",
        ]
        assert len(contents) == 6 + 3 * 2 + 3 + 1
        first.sync("default")
        assert _file(first).read_bytes() == _file(second).read_bytes()


def test_the_record_gives_a_grown_document_as_its_new_parts(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        memory.save_turn("talk", "user", "first")
        memory.save_turn("talk", "user", "second")
        lock = memory.lock
        assert isinstance(lock, WorkingCopy)
        record = lock.record
        since = max(d.change for d in record.changes(0))
        before = hashlib.sha256(_file(memory).read_bytes()).hexdigest()
        memory.save_turn("talk", "user", "third")
        memory.save_turn("talk", "user", "fourth")
        raw = _file(memory).read_bytes()
        (grown,) = [d for d in record.changes(since, grown=True) if d.path == PATH]
        assert grown.appends is not None
        assert grown.appends.base_sha256 == before
        assert grown.appends.sha256 == hashlib.sha256(raw).hexdigest()
        assert (before_text := raw[: len(raw) - len(grown.text.encode())]) and (
            hashlib.sha256(before_text).hexdigest() == before
        )
        assert "third" in grown.text and "fourth" in grown.text and "first" not in grown.text
        pool = open_pool(postgres_url, max_size=1)
        try:  # a worker with a read replica asks through the record that keeps its mark
            marking = MarkingRecord(record, pool, ReplayMark())
            assert [d for d in marking.changes(since, grown=True) if d.path == PATH] == [grown]
        finally:
            pool.close()
        (whole,) = [d for d in record.changes(since) if d.path == PATH]
        assert whole.appends is None and whole.text is not None
        assert whole.text.encode() == raw
        # a session written whole after ``since`` comes whole, even when grown since
        memory.save_turn("talk", "user", "fifth", turn_id="t-5")
        memory.save_turn("talk", "user", "fifth again", turn_id="t-5")  # written whole
        rewritten = max(d.change for d in record.changes(0))
        memory.save_turn("talk", "user", "sixth")
        (after,) = [d for d in record.changes(since, grown=True) if d.path == PATH]
        assert after.appends is None and after.text == _file(memory).read_text()
        (part,) = [d for d in record.changes(rewritten, grown=True) if d.path == PATH]
        assert part.appends is not None and "sixth" in part.text and "fifth" not in part.text


def test_a_file_edited_here_is_fetched_whole_and_kept_aside(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        for n in range(4):
            first.save_turn("talk", "user", f"turn {n}")
        second.sync("default")
        file = _file(second)
        edited = file.read_text().replace("turn 1", "turn one, by hand")
        file.write_text(edited)  # not pushed: the other worker writes first
        first.save_turn("talk", "user", "the other worker's new turn")
        second.sync("default")
        _matches_the_record(postgres_url, second)
        kept = list((second.workspace.agent_dir("default") / ".corrupt").rglob("*conflict*"))
        assert [p.read_text() for p in kept] == [edited]  # the hand edit is not lost
        assert any("edited here" in note for note in second.notes)
        contents = [t.content for t in second.load_session("talk")]
        assert contents == [*(f"turn {n}" for n in range(4)), "the other worker's new turn"]
        assert second.recall("the other worker's new turn").hits


def test_a_pull_stopped_while_extending_its_file_keeps_no_edited_copy(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        for n in range(4):
            first.save_turn("talk", "user", f"turn {n}")
        second.sync("default")
        file = _file(second)
        before = file.read_bytes()
        first.save_turn("talk", "user", "the other worker's new turn")
        text, _ = _record_text(postgres_url)
        # the worker was killed while adding the new turn's bytes to its file: the file
        # holds its last version and part of what the record added, and what this copy
        # saw still names the last version
        cut = text.encode()[: len(before) + 12]
        assert cut.startswith(before) and len(cut) < len(text.encode())
        file.write_bytes(cut)
        second.sync("default")
        _matches_the_record(postgres_url, second)
        # nobody edited the file: nothing is kept aside, and no note says so
        assert not list((second.workspace.agent_dir("default") / ".corrupt").rglob("*conflict*"))
        assert not any("edited here" in note for note in second.notes)
        contents = [t.content for t in second.load_session("talk")]
        assert contents == [*(f"turn {n}" for n in range(4)), "the other worker's new turn"]


def test_a_file_changed_without_its_time_and_size_is_fetched_whole(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        for n in range(4):
            first.save_turn("talk", "user", f"turn {n}")
        second.sync("default")
        file = _file(second)
        stat = file.stat()
        damaged = file.read_bytes().replace(b"turn 2", b"turn X")  # same size
        file.write_bytes(damaged)
        os.utime(file, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the old time put back
        first.save_turn("talk", "user", "after the change")
        second.sync("default")
        _matches_the_record(postgres_url, second)
        contents = [t.content for t in second.load_session("talk")]
        assert contents == [*(f"turn {n}" for n in range(4)), "after the change"]
