"""An archived fact given a new value in team mode: the record takes the lines the
change replaced (a part that goes over them), not the archive whole; its text stays the
archive's byte for byte, its item rows those of a fresh parse; another worker pulling it
gets those lines alone and the same file, its kept parse spliced and nothing indexed
again; and a worker whose copy of the rows is not the record's, or a document with many
parts, writes the archive whole instead."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.core.model import MemoryItem
from kronika.memory import Memory
from kronika.settings import Settings
from kronika.stores.markdown.workspace import MarkdownWorkspace
from kronika.stores.postgres.connect import open_pool
from kronika.stores.postgres.record import _STAMP_CLASS, PostgresRecord
from kronika.stores.postgres.record_writes import SPLICED_PARTS
from kronika.testing import archive_document, archived_fact

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

ARCHIVE = "brain_archive.md"
FACTS = 60
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _settings(home: Path, url: str) -> Settings:
    # a Brain with room (in tokens) for every archived fact that comes back: no trim
    return load_settings(
        home, environ={}, embedder="hashing", database_url=url, brain_budget=4000, brain_max=8000
    )


def _archived(n: int) -> MemoryItem:
    at = T0 + timedelta(minutes=n)
    value = f"shelf {n} holds {['plum', 'quince', 'cherry'][n % 3]} jam, jar number {n * 7}"
    return archived_fact(f"jar_{n}", value, at, id=f"f-jar{n:04d}")


def _with_archive(memory: Memory) -> None:
    """An archive of :data:`FACTS` facts, synced into the record."""
    archive = memory.workspace.agent_dir("default") / ARCHIVE
    archive.write_text(archive_document(_archived(n) for n in range(FACTS)), encoding="utf-8")
    memory.sync("default")


def _record(url: str) -> tuple[str | None, str, int]:
    """The archive's text as the record gives it (body with parts put in), the SHA-256
    it keeps, and how many parts it has."""
    pool = open_pool(url, max_size=1)
    try:
        doc = PostgresRecord(pool, "default").document("default", ARCHIVE)
    finally:
        pool.close()
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT sha256, (SELECT count(*) FROM record_document_parts p WHERE p.tenant ="
            " d.tenant AND p.agent = d.agent AND p.path = d.path) FROM record_documents d"
            " WHERE d.agent = 'default' AND d.path = %s",
            (ARCHIVE,),
        ).fetchone()
    assert doc is not None and row is not None
    return doc.text, row[0], int(row[1])


def _rows(url: str) -> set[tuple[str, str, str]]:
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT id, content, status FROM record_items WHERE agent = 'default' AND path = %s",
            (ARCHIVE,),
        ).fetchall()
    return {(str(i), str(c), str(s)) for i, c, s in found}


def _holding(url: str, text: str) -> list[tuple[str, str]]:
    """Where the record holds ``text``: a document's body, a part, an item's row."""
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT 'document', path FROM record_documents WHERE strpos(body, %s) > 0"
            " UNION ALL SELECT 'part', path FROM record_document_parts"
            " WHERE strpos(text, %s) > 0"
            " UNION ALL SELECT 'item', path FROM record_items WHERE strpos(content, %s) > 0",
            (text, text, text),
        ).fetchall()
    return [(str(kind), str(path)) for kind, path in found]


def _matches_the_record(url: str, memory: Memory) -> None:
    """The worker's archive is the record's text, and the record's item rows of it are
    those of a fresh parse of that file."""
    raw = (memory.workspace.agent_dir("default") / ARCHIVE).read_bytes()
    text, sha, _ = _record(url)
    assert text is not None and raw == text.encode()
    assert hashlib.sha256(raw).hexdigest() == sha
    fresh = MarkdownWorkspace(memory.workspace.home, tenant="default")
    items = fresh.parse_source("default", ARCHIVE).items
    assert _rows(url) == {(i.id, i.content, i.status.value) for i in items}


def test_an_archived_fact_given_a_new_value_writes_the_lines_it_replaced(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        _with_archive(first)
        second.sync("default")  # the archive, whole
        with psycopg.connect(postgres_url) as conn:
            body = conn.execute(
                "SELECT body FROM record_documents WHERE path = %s", (ARCHIVE,)
            ).fetchone()
        for n in (3, 31, 58):
            first.remember(f"shelf {n} now holds apricot jam", key=f"jar_{n}")
            _matches_the_record(postgres_url, first)
        with psycopg.connect(postgres_url) as conn:
            now = conn.execute(
                "SELECT body FROM record_documents WHERE path = %s", (ARCHIVE,)
            ).fetchone()
            parts = conn.execute(
                "SELECT text, at, cut FROM record_document_parts WHERE path = %s ORDER BY change",
                (ARCHIVE,),
            ).fetchall()
        assert now == body  # the archive's body was not written again
        # each change wrote the mark its fact left, over the lines the fact had
        assert [text for text, _, _ in parts] == [
            f"<!-- f-jar{n:04d} moved out -->\n" for n in (3, 31, 58)
        ]
        assert all(at is not None and cut > len(text) for text, at, cut in parts)
        archived = {i.key for i in first.workspace.parse_source("default", ARCHIVE).items}
        assert not {"jar_3", "jar_31", "jar_58"} & archived
        report = second.sync("default")  # pulls the three marks alone
        _matches_the_record(postgres_url, second)
        mine, theirs = (m.workspace.agent_dir("default") / ARCHIVE for m in (first, second))
        assert theirs.stat().st_mtime_ns == mine.stat().st_mtime_ns  # the record's time
        # the shared index holds the file as pulled: nothing is indexed again
        assert report.files_indexed == report.items_indexed == 0
        # and its kept parse was spliced from the one before, not read whole again
        with psycopg.connect(postgres_url) as conn:
            last = conn.execute(
                "SELECT base_sha256 FROM record_document_parts WHERE path = %s"
                " ORDER BY change DESC LIMIT 1",
                (ARCHIVE,),
            ).fetchone()
        assert last is not None
        assert second.workspace.spliced_facts("default", ARCHIVE, last[0]) is not None
        hits = second.recall("which jam does shelf 31 hold now", k=3).hits
        assert "apricot" in hits[0].item.content
        # a value that is the same again leaves the archive as it is
        first.remember(
            f"shelf 12 holds {['plum', 'quince', 'cherry'][0]} jam, jar number 84", key="jar_12"
        )
        _matches_the_record(postgres_url, first)


def test_workers_changing_archived_facts_in_turn_keep_one_archive(
    postgres_url: str, tmp_path: Path
) -> None:
    """Each worker's splice follows the other's write: its rows are not the record's,
    so it writes the archive whole; the record stays the archive either way."""
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        _with_archive(first)
        for n in range(6):
            memory = first if n % 2 else second
            memory.remember(f"shelf {n} was emptied on day {n}", key=f"jar_{n}")
            _matches_the_record(postgres_url, memory)
        for n in range(6, 9):  # one worker alone again: its own rows, spliced
            first.remember(f"shelf {n} was given away", key=f"jar_{n}")
            _matches_the_record(postgres_url, first)
        assert _record(postgres_url)[2] >= 2
        second.sync("default")
        _matches_the_record(postgres_url, second)
        keys = {i.key for i in second.workspace.parse_source("default", ARCHIVE).items}
        assert keys == {f"jar_{n}" for n in range(9, FACTS)}


def test_an_archive_with_many_parts_is_written_whole_again(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        _with_archive(memory)
        most = 0
        for n in range(SPLICED_PARTS + 4):
            memory.remember(f"shelf {n} holds honey", key=f"jar_{n}")
            _, _, parts = _record(postgres_url)
            most = max(most, parts)
            assert parts <= SPLICED_PARTS
        assert most == SPLICED_PARTS
        assert _record(postgres_url)[2] < SPLICED_PARTS  # the body was written again
        _matches_the_record(postgres_url, memory)
    with build_memory(_settings(tmp_path / "c", postgres_url)) as fresh:
        fresh.sync("default")  # a new worker's copy, made from the record
        _matches_the_record(postgres_url, fresh)


def test_a_forgotten_fact_leaves_no_text_under_a_part(postgres_url: str, tmp_path: Path) -> None:
    """The archive's body still holds an archived fact's lines after a part went over
    them; once the fact is forgotten, the record holds its text nowhere."""
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        _with_archive(memory)
        old = _archived(17).value
        assert old is not None
        memory.remember("shelf 17 is empty now", key="jar_17")
        memory.remember("shelf 23 is empty now", key="jar_23")
        with psycopg.connect(postgres_url) as conn:
            (body,) = conn.execute(
                "SELECT body FROM record_documents WHERE path = %s", (ARCHIVE,)
            ).fetchone()
        assert old in body  # under the part that went over its lines
        memory.forget(key="jar_17")
        assert _holding(postgres_url, old) == []
        _matches_the_record(postgres_url, memory)
        text, _, parts = _record(postgres_url)
        assert parts == 0 and text is not None and "f-jar0023 moved out" in text
        keys = {i.key for i in memory.workspace.parse_source("default", ARCHIVE).items}
        assert "jar_23" not in keys and "jar_24" in keys


_FORGETTER = textwrap.dedent(
    """
    import sys
    from kronika import build_memory, load_settings

    settings = load_settings(
        sys.argv[1], environ={}, embedder="hashing", database_url=sys.argv[2],
        brain_budget=4000, brain_max=8000,
    )
    with build_memory(settings) as memory:
        memory.forget(key="jar_17")
    """
)


def _waiting(url: str, seconds: float = 60) -> None:
    """Until a session of the database waits for a lock (else fail)."""
    deadline = time.monotonic() + seconds
    with psycopg.connect(url, autocommit=True) as conn:
        while not conn.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()[0]:
            assert time.monotonic() < deadline, "no session came to wait for the lock"
            time.sleep(0.05)


def _alone(url: str, seconds: float = 60) -> None:
    """Until no other client session is connected to the database (the killed
    worker's have ended, their transactions committed or rolled back)."""
    deadline = time.monotonic() + seconds
    with psycopg.connect(url, autocommit=True) as conn:
        while conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        ).fetchone()[0]:
            assert time.monotonic() < deadline, "the killed worker's sessions did not end"
            time.sleep(0.05)


def test_a_forget_killed_while_sending_leaves_no_text_under_a_part(
    postgres_url: str, tmp_path: Path
) -> None:
    """A worker killed while its forget goes into the record (its statements sent,
    the write waiting for the record's lock) leaves the record as it was or forgotten
    whole; the next write from its folder sends the forget with the parts folded, so
    the fact's old lines are held nowhere."""
    home = tmp_path / "a"
    with build_memory(_settings(home, postgres_url)) as memory:
        _with_archive(memory)
        memory.remember("shelf 17 is empty now", key="jar_17")
        memory.remember("shelf 23 is empty now", key="jar_23")
    old = _archived(17).value
    assert old is not None
    with psycopg.connect(postgres_url, autocommit=True) as stamp:
        # the lock that numbers the tenant's changes: every write to the record waits
        stamp.execute("SELECT pg_advisory_lock(%s, hashtext('default'))", (_STAMP_CLASS,))
        worker = subprocess.Popen(
            [sys.executable, "-c", _FORGETTER, str(home), postgres_url],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            _waiting(postgres_url)
        finally:
            worker.kill()
            worker.communicate()
    _alone(postgres_url)
    with build_memory(_settings(home, postgres_url)) as memory:
        memory.remember("the pantry door sticks", key="pantry")  # the folder's edits go too
        assert "jar_17" not in {f.key for f in memory.facts()}
        assert _holding(postgres_url, old) == []
        _matches_the_record(postgres_url, memory)
