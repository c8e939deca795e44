"""Two workers remembering facts of one agent in turn, in team mode: the facts each
moves to the archive reach the other as added text, which its archive takes in place,
and what that worker then reads of its archive is what a fresh read of the file gives."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.engine.changes import TouchFact
from kronika.settings import Settings
from kronika.stores.markdown.workspace import MarkdownWorkspace

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

ARCHIVE = "brain_archive.md"


def _settings(home: Path, url: str) -> Settings:
    return load_settings(
        home, environ={}, embedder="hashing", database_url=url, brain_budget=40, brain_max=60
    )


def _record(url: str) -> tuple[str, str]:
    """The archive's whole text as the record holds it, and its SHA-256."""
    with psycopg.connect(url) as conn:
        body, sha = conn.execute(
            "SELECT body, sha256 FROM record_documents WHERE agent = 'default' AND path = %s",
            (ARCHIVE,),
        ).fetchone()
        parts = conn.execute(
            "SELECT coalesce(string_agg(text, '' ORDER BY change), '')"
            " FROM record_document_parts WHERE agent = 'default' AND path = %s",
            (ARCHIVE,),
        ).fetchone()[0]
    return body + parts, sha


def _archive_pulled(first: Memory, second: Memory) -> int:
    """The first worker remembers facts until it has an archive, the second pulls it
    whole; how many facts that took."""
    n = 0
    while not (first.workspace.agent_dir("default") / ARCHIVE).exists():
        first.remember(f"jar {n} on the shelf holds plum jam", key=f"jar_{n}")
        n += 1
    second.remember("the cellar door sticks", key="door")  # pulls the archive whole
    return n


def test_workers_in_turn_keep_one_archive_and_read_it_as_a_fresh_parse(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        n = _archive_pulled(first, second)
        inodes = set()
        for m in range(n, n + 10):
            for name, memory in (("first", first), ("second", second)):
                memory.remember(f"{name} jar {m} holds quince jelly", key=f"{name}_{m}")
                inodes.add((memory.workspace.agent_dir("default") / ARCHIVE).stat().st_ino)
        first.remember("the last jar is cherry", key="last")  # pulls the second's moves
        text, sha = _record(postgres_url)
        for memory in (first, second):
            memory.remember("a lid is missing", key="lid")  # each brought up to date
            raw = (memory.workspace.agent_dir("default") / ARCHIVE).read_bytes()
            text, sha = _record(postgres_url)
            assert raw == text.encode() and hashlib.sha256(raw).hexdigest() == sha
            kept = memory.workspace.parse_source("default", ARCHIVE)
            fresh = MarkdownWorkspace(memory.workspace.home, tenant="default")
            assert kept.items == fresh.parse_source("default", ARCHIVE).items
            assert kept.content_hash == sha
        archived = {item.key for item in kept.items}
        assert {"first_" + str(n), "second_" + str(n)} <= archived  # both moved facts
        assert len(inodes) <= 2  # each worker's archive was added to in place, not replaced
        found = second.recall(f"first jar {n} holds quince jelly", k=5).hits
        assert f"first_{n}" in {hit.item.key for hit in found}


def test_a_same_size_edit_right_after_a_pull_is_seen(postgres_url: str, tmp_path: Path) -> None:
    """The archive a worker has just extended with what another worker moved there is
    trusted without reading it again, yet an editor saving it in place at once (the same
    size, its time set back) is read by that worker's next call."""
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        n = _archive_pulled(first, second)
        archive = second.workspace.agent_dir("default") / ARCHIVE
        size = archive.stat().st_size
        while archive.stat().st_size == size:  # until a pull adds to the second's archive
            first.remember(f"jar {n} on the shelf holds fig jam", key=f"jar_{n}")
            # the same again: nothing of the second's own moves to the archive
            again = second.remember("the cellar door sticks", key="door")
            assert isinstance(again.change, TouchFact)
            n += 1
            assert n < 200, "no fact reached the archive"
        last = second.workspace.archived_facts("default")[-1]
        assert last.key is not None and last.value is not None and "jam" in last.value
        edited = last.value.replace("jam", "jel")
        before = archive.stat()
        text = archive.read_text(encoding="utf-8")
        old, new = f"**{last.key}**: {last.value}", f"**{last.key}**: {edited}"
        with open(archive, "r+", encoding="utf-8") as handle:  # the same inode and size
            handle.write(text.replace(old, new))
        os.utime(archive, ns=(before.st_atime_ns, before.st_mtime_ns))
        # the edited value is the one stored: saying it again refreshes it
        assert isinstance(second.remember(edited, key=last.key).change, TouchFact)
        assert [f.value for f in second.facts() if f.key == last.key] == [edited]
