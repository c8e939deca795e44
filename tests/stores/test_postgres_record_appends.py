"""A turn saved into a session in team mode reaches the store of record as its own
bytes and its own item row: the session's body is not written again and its other
rows are neither rewritten nor moved, and the record ends as a whole write of the file
leaves it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory, load_settings
from kronika.memory import Memory
from kronika.settings import Settings

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

PATH = "sessions/talk.md"


def _settings(home: Path, url: str) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", database_url=url)


def _document(url: str, path: str = PATH) -> tuple[str, list[str], str, str]:
    """The document's (the session's) body, its parts in order, its whole text and its
    SHA-256."""
    with psycopg.connect(url) as conn:
        body, sha = conn.execute(
            "SELECT body, sha256 FROM record_documents WHERE agent = 'default' AND path = %s",
            (path,),
        ).fetchone()
        parts = [
            text
            for (text,) in conn.execute(
                "SELECT text FROM record_document_parts WHERE agent = 'default' AND path = %s"
                " ORDER BY change",
                (path,),
            )
        ]
    return body, parts, body + "".join(parts), sha


def _rows(url: str) -> dict[str, tuple[Any, ...]]:
    """``id -> (xmin, position, digest)`` of the session's item rows."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT id, xmin::text, position, digest FROM record_items"
            " WHERE agent = 'default' AND path = %s",
            (PATH,),
        ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def _holds_the_file(url: str, memory: Memory) -> None:
    """The record's text of the session is the file, byte for byte, and its rows are
    the file's turns in its order."""
    raw = (memory.workspace.agent_dir("default") / PATH).read_bytes()
    _, _, text, sha = _document(url)
    assert text.encode() == raw and sha == hashlib.sha256(raw).hexdigest()
    parsed = memory.workspace.parse_source("default", PATH).items
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT id, position, content, speaker FROM record_items"
            " WHERE agent = 'default' AND path = %s ORDER BY position",
            (PATH,),
        ).fetchall()
    assert rows == [(i.id, n, i.content, i.speaker) for n, i in enumerate(parsed)]


def test_a_saved_turn_adds_its_own_bytes_and_row_and_ends_as_a_whole_write(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        for n in range(5):
            memory.save_turn("talk", "user", f"turn {n}: the kettle is on")
        body, _, _, _ = _document(postgres_url)
        before = _rows(postgres_url)
        for n in range(3):
            memory.save_turn("talk", "assistant", f"answer {n}\nover two lines")
        after = _rows(postgres_url)
        again, parts, _, _ = _document(postgres_url)
        _holds_the_file(postgres_url, memory)

        assert again == body  # the body was not written again
        assert len(parts) >= 3 and all(p.startswith("\n### [talk_") for p in parts[-3:])
        assert "answer 2\nover two lines\n" in parts[-1]
        assert len(after) == len(before) + 3
        assert all(after[i] == before[i] for i in before)  # no row rewritten or moved

        # the same file written whole (its time changed: pushed as a hand edit would be)
        file = memory.workspace.agent_dir("default") / PATH
        os.utime(file, ns=(file.stat().st_mtime_ns + 10**9,) * 2)
        memory.remember("tea", key="drink")  # a write lock taken and given back
        whole, parts, _, _ = _document(postgres_url)
        assert parts == [] and whole.encode() == file.read_bytes()
        assert _rows(postgres_url) == after  # the appended rows are the whole write's
        _holds_the_file(postgres_url, memory)

    with build_memory(_settings(tmp_path / "b", postgres_url)) as fresh:  # another machine
        turns = fresh.load_session("talk")
        assert [t.content for t in turns][-1] == "answer 2\nover two lines"
        assert len(turns) == 8


def test_a_working_copy_reads_a_session_as_its_body_and_parts(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        for n in range(4):
            memory.save_turn("talk", "user", f"turn {n}")
        raw = (memory.workspace.agent_dir("default") / PATH).read_bytes()
    assert _document(postgres_url)[1]  # parts there
    with build_memory(_settings(tmp_path / "b", postgres_url)) as other:
        assert (other.workspace.agent_dir("default") / PATH).read_bytes() == raw
        other.save_turn("talk", "assistant", "the other worker's turn")
        _holds_the_file(postgres_url, other)


def test_a_repeated_turn_id_and_a_record_changed_underneath_are_written_whole(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        memory.save_turn("talk", "user", "first")
        memory.save_turn("talk", "user", "second")
        memory.save_turn("talk", "user", "by hand", turn_id="mine")
        memory.save_turn("talk", "user", "by hand again", turn_id="mine")  # its id is there
        _holds_the_file(postgres_url, memory)
        assert len(_rows(postgres_url)) == 4  # the repeat has an item id of its own

        with psycopg.connect(postgres_url) as conn:  # the record's body is not the file's
            conn.execute("UPDATE record_documents SET sha256 = 'another' WHERE path = %s", (PATH,))
        memory.save_turn("talk", "assistant", "after the change")
        _holds_the_file(postgres_url, memory)
        assert _document(postgres_url)[1] == []  # written whole


def test_workers_taking_turns_in_one_session_lose_no_turn(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        for n in range(3):
            first.save_turn("talk", "user", f"first {n}")
            first.save_turn("talk", "user", f"first {n} again")
            second.save_turn("talk", "assistant", f"second {n}")
        _holds_the_file(postgres_url, second)
        first.save_turn("talk", "user", "the last")  # the first takes the lock: pulls
        _holds_the_file(postgres_url, first)
        contents = [t.content for t in first.load_session("talk")]
        assert contents == [
            text for n in range(3) for text in (f"first {n}", f"first {n} again", f"second {n}")
        ] + ["the last"]
        ids = [t.provenance.turn_ids[0] for t in first.load_session("talk")]
        assert len(set(ids)) == len(ids)


ARCHIVE = "brain_archive.md"


def _archive(url: str) -> tuple[str, list[str], str]:
    """The archive's body, its parts in order, and its SHA-256."""
    body, parts, _, sha = _document(url, ARCHIVE)
    return body, parts, sha


def test_facts_moved_to_the_archive_add_their_own_bytes_and_rows(
    postgres_url: str, tmp_path: Path
) -> None:
    settings = load_settings(
        tmp_path / "a",
        environ={},
        embedder="hashing",
        database_url=postgres_url,
        brain_budget=40,
        brain_max=60,
    )
    with build_memory(settings) as memory:
        n = 0
        while not (memory.workspace.agent_dir("default") / ARCHIVE).exists():
            memory.remember(f"the shelf number {n} holds jars of plum jam", key=f"shelf_{n}")
            n += 1
        body, _, _ = _archive(postgres_url)
        with psycopg.connect(postgres_url) as conn:
            before = dict(
                conn.execute(
                    "SELECT id, xmin::text FROM record_items WHERE agent = 'default' AND path = %s",
                    (ARCHIVE,),
                ).fetchall()
            )
        for m in range(n, n + 12):  # each new fact sends an older one to the archive
            memory.remember(f"the shelf number {m} holds jars of plum jam", key=f"shelf_{m}")
        file = memory.workspace.agent_dir("default") / ARCHIVE
        raw = file.read_bytes()
        again, parts, sha = _archive(postgres_url)
        assert again == body and parts  # the body was not written again
        assert (again + "".join(parts)).encode() == raw
        assert sha == hashlib.sha256(raw).hexdigest()
        parsed = memory.workspace.parse_source("default", ARCHIVE).items
        with psycopg.connect(postgres_url) as conn:
            rows = conn.execute(
                "SELECT id, xmin::text, position, content FROM record_items"
                " WHERE agent = 'default' AND path = %s ORDER BY position",
                (ARCHIVE,),
            ).fetchall()
        # a fact file's rows take their line as their place (a fact leaving moves none)
        assert [(r[0], r[2], r[3]) for r in rows] == [
            (i.id, i.provenance.line, i.content) for i in parsed
        ]
        assert len(rows) > len(before)
        assert all(xmin == before[i] for i, xmin, _, _ in rows if i in before)  # untouched

        with file.open("a", encoding="utf-8") as out:  # a hand edit after kronika's appends
            out.write("- jars of quince jelly are in the cellar\n")
        memory.remember("the shelf by the door holds honey", key="shelf_door")
        raw = file.read_bytes()
        whole, parts, sha = _archive(postgres_url)
        assert (whole + "".join(parts)).encode() == raw  # sent whole, with the edit
        assert sha == hashlib.sha256(raw).hexdigest() and b"quince" in raw
        parsed = memory.workspace.parse_source("default", ARCHIVE).items

    other = load_settings(tmp_path / "b", environ={}, embedder="hashing", database_url=postgres_url)
    with build_memory(other) as fresh:  # another machine reads the archive whole
        assert (fresh.workspace.agent_dir("default") / ARCHIVE).read_bytes() == raw
        archived = parsed[-1]
        found = fresh.recall(archived.content, k=5)
        assert archived.id in [hit.item.id for hit in found.hits]
