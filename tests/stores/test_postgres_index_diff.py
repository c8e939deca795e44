"""Re-indexing a file on PostgreSQL writes only the rows that changed, and leaves the
index exactly as a full rebuild of the same files does.

A real server: a file's items are replaced step by step (facts added, removed, edited,
moved, repeated, taken by another file and back), then every column of every row, the
keyword postings, the corpus counts and the vectors are compared with a fresh build of
the same files, and the rows the steps left alone are shown to be the same rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from tests.stores.source_files import SourceFiles

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.ports import SourceState

T0 = datetime(2025, 11, 1, 12, 0, tzinfo=UTC)
DIM = 4


def fact(n: int, text: str | None = None, *, line: int | None = None) -> MemoryItem:
    return MemoryItem(
        id=f"f{n}",
        agent="jaskier",
        content=text or f"fact number {n} about Kraków and the river",
        type=ItemType.SEMANTIC,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=T0,
        updated_at=T0,
        provenance=Provenance("brain_archive.md", line if line is not None else n + 3),
        entities=("Kraków",) if n % 3 == 0 else (),
        tags=("t",) if n % 2 else (),
    )


def text_hash(item: MemoryItem) -> str:
    return "h-" + item.content.replace(" ", "_")[:40]


def vectors(items: Sequence[MemoryItem]) -> dict[str, list[float]]:
    return {text_hash(it): [1.0 + len(it.content) % 7, 2.0, float(len(it.id)), 0.5] for it in items}


def dump(url: str) -> dict[str, Any]:
    """Every column of every row of the search index (row ids aside: a posting names
    its item by id), the corpus counts, the files' states and the vector cache."""
    import psycopg

    with psycopg.connect(url) as conn:

        def rows(sql: str) -> list[str]:
            return sorted(json.dumps(r, sort_keys=True) for (r,) in conn.execute(sql).fetchall())

        return {
            "items": rows("SELECT to_jsonb(i) - 'rowid' FROM idx_items AS i"),
            "terms": rows(
                "SELECT to_jsonb(t) - 'item_rowid' || jsonb_build_object('item', i.id)"
                " FROM idx_terms AS t JOIN idx_items AS i ON i.rowid = t.item_rowid"
            ),
            "corpus": rows("SELECT to_jsonb(c) - 'generation' FROM idx_corpus AS c"),
            "sources": rows("SELECT to_jsonb(s) FROM idx_sources AS s"),
            "embeddings": rows("SELECT to_jsonb(e) FROM idx_embeddings AS e"),
        }


def rowids(url: str, path: str = "%") -> dict[str, int]:
    """The row id of each item id (of the files named like ``path``)."""
    import psycopg

    with psycopg.connect(url) as conn:
        found = conn.execute("SELECT id, rowid FROM idx_items WHERE source_path LIKE %s", (path,))
        return {str(i): int(r) for i, r in found}


def written(index: Any) -> SourceFiles:
    """The files as they are now, written to ``index`` step by step."""
    return SourceFiles(index, text_hash=text_hash, vectors=vectors)


def test_each_step_writes_only_what_changed_and_ends_as_a_rebuild(postgres_url: str) -> None:
    pytest.importorskip("psycopg")
    from kronika.stores.postgres.index import PostgresIndex

    with PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as ix:
        files = written(ix)

        def as_rebuilt() -> dict[str, int]:
            """The index equals a rebuild of the files (made in its place: the rows are
            the same, so ``ix`` goes on writing only what changes); the row ids before."""
            held = rowids(ix.url)
            diffed = dump(ix.url)
            with PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as fresh:
                files.rebuild(fresh)
            assert dump(ix.url) == diffed
            return held

        archive = [fact(n) for n in range(40)]
        files.write("brain_archive.md", archive)
        files.write("brain.md", [fact(100), fact(101)])
        as_rebuilt()
        first = rowids(ix.url)

        # facts added at the end and one near the top (the facts below it move down)
        archive = [*archive[:5], fact(200), *archive[5:], fact(201), fact(202)]
        archive = [
            replace(it, provenance=Provenance(it.provenance.path, n + 3))
            for n, it in enumerate(archive)
        ]
        files.write("brain_archive.md", archive)
        now = as_rebuilt()
        assert all(now[f"f{n}"] == first[f"f{n}"] for n in range(40))  # moved, not rewritten
        assert {"f200", "f201", "f202"} <= set(now)
        before = rowids(ix.url)

        # removed, edited (new text; a field alone), order changed, a repeated id
        archive = [it for it in archive if it.id not in {"f7", "f8"}]
        archive[10] = replace(archive[10], content="an edited fact about Lviv")
        archive[11] = replace(archive[11], importance=0.9)
        archive[0], archive[1] = archive[1], archive[0]
        archive.append(replace(archive[3], content="the same id again, second copy"))
        files.write("brain_archive.md", archive)
        now = as_rebuilt()
        assert "f7" not in now and "f8" not in now
        assert now[archive[10].id] != before[archive[10].id]
        assert now[archive[11].id] != before[archive[11].id]
        assert now[archive[0].id] == before[archive[0].id]  # swapped: the same rows
        assert now[archive[20].id] == before[archive[20].id]  # moved up: the same row
        before = rowids(ix.url)

        # a line alone changes (a blank line added above the facts)
        archive = [
            replace(it, provenance=Provenance(it.provenance.path, (it.provenance.line or 0) + 1))
            for it in archive
        ]
        files.write("brain_archive.md", archive)
        assert as_rebuilt() == before

        # an id the Brain holds moves to the archive, and an archive id to the Brain
        files.write("brain.md", [fact(101), replace(archive[4], content="kept in the Brain now")])
        archive = [it for it in archive if it.id != archive[4].id] + [fact(100)]
        before = rowids(ix.url, "brain_archive.md")
        files.write("brain_archive.md", archive)
        now = as_rebuilt()
        assert all(now[k] == v for k, v in before.items())  # not written whole
        # a file emptied, then given rows again; the archive cut short
        files.write("brain.md", [])
        as_rebuilt()
        files.write("brain.md", [fact(300)])
        files.write("brain_archive.md", archive[:30])
        assert len(dump(ix.url)["items"]) == 31
        as_rebuilt()


@contextmanager
def two_workers(postgres_url: str) -> Iterator[tuple[str, SourceFiles, SourceFiles]]:
    """Two index objects on one database (two workers), each writing files of its own
    view: the index's URL and each one's files."""
    from kronika.stores.postgres.index import PostgresIndex

    with (
        PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as one,
        PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as two,
    ):
        yield one.url, written(one), written(two)


def test_a_file_another_process_changed_is_compared_with_the_rows_it_left(
    postgres_url: str,
) -> None:
    """Two index objects on one database (two workers): each one's memory of the rows
    it wrote goes stale when the other writes the file, or takes an id from it. Then
    the rows the index holds are read back and compared: what the other left as it is
    stays in place (the same rows), and the index still ends as a rebuild."""
    pytest.importorskip("psycopg")
    from kronika.stores.postgres.index import PostgresIndex

    with two_workers(postgres_url) as (url, a, b):
        items = [fact(n) for n in range(10)]
        a.write("brain_archive.md", items)
        first = rowids(url)
        b.version = a.version
        b.write("brain_archive.md", [*items[:8], fact(50)])  # b never wrote it: compared
        assert {k: v for k, v in rowids(url).items() if k != "f50"} == {
            f"f{n}": first[f"f{n}"] for n in range(8)
        }
        a.version = b.version
        moved = [
            replace(it, provenance=Provenance(it.provenance.path, 40 + n))
            for n, it in enumerate(items)
        ]
        a.write("brain_archive.md", [fact(51), *moved])  # one's memory is stale
        now = rowids(url)
        assert all(now[f"f{n}"] == first[f"f{n}"] for n in range(8))  # moved, not rewritten
        assert "f50" not in now and {"f8", "f9", "f51"} <= set(now)
        b.version = a.version
        b.write("brain.md", [fact(2)])  # takes f2 from the archive, which keeps its state
        a.version = b.version
        a.write("brain_archive.md", [*items, fact(51), fact(52)])  # f2 must come back
        diffed = dump(url)
        assert json.loads(next(r for r in diffed["items"] if '"f2"' in r))["source_path"] == (
            "brain_archive.md"
        )
        assert rowids(url)["f0"] == first["f0"]

    with PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as fresh:
        a.files["brain.md"] = []  # the archive, written last, holds f2
        a.states["brain.md"] = b.states["brain.md"]
        a.rebuild(fresh)
    rebuilt = dump(url)
    assert [r for r in rebuilt["items"]] == diffed["items"]
    assert rebuilt["terms"] == diffed["terms"] and rebuilt["corpus"] == diffed["corpus"]


def test_a_write_sent_together_that_must_copy_many_rows_is_made_again(
    postgres_url: str,
) -> None:
    """A write whose kept rows promise few new ones goes as one stream with its BEGIN
    and COMMIT; when the index turns out to hold the file as another worker left it,
    with more rows to write than a pipeline may (they go by COPY), the write is rolled
    back and made again in a transaction of its own, and ends as a rebuild."""
    pytest.importorskip("psycopg")
    from kronika.stores.postgres.index import PostgresIndex
    from kronika.stores.postgres.inserting import FEW

    with two_workers(postgres_url) as (url, a, b):
        many = [fact(n) for n in range(FEW + 10)]
        a.write("brain_archive.md", many)  # one keeps these rows
        b.version = a.version
        b.write("brain_archive.md", [])  # the other empties the file
        a.version = b.version
        again = [*many, fact(500)]
        a.write("brain_archive.md", again)  # one expects a new row, finds all of them new
        written = dump(url)
        assert len(written["items"]) == len(again)
    with PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as fresh:
        a.rebuild(fresh)
    rebuilt = dump(url)
    assert rebuilt["items"] == written["items"] and rebuilt["terms"] == written["terms"]


def test_remembered_facts_in_team_mode_leave_the_index_as_kronika_index_rebuild(
    postgres_url: str, tmp_path: Path
) -> None:
    """Team mode, a small Brain: facts move to the archive every few writes, keys are
    superseded, a fact is forgotten; the index then equals the one a reindex builds, and
    the archive's rows written before were left in place."""
    pytest.importorskip("psycopg")
    from backends import Backend

    backend = Backend("postgres", tmp_path, postgres_url)
    try:
        memory = backend.open(brain_max=60, brain_budget=40)
        url = memory._ctx.index.url  # type: ignore[attr-defined]
        for n in range(40):
            memory.remember(f"fact {n} about Kraków number {n * 7}", key=f"k{n % 25}")
        archived = rowids(url, "brain_archive.md")
        for n in range(40, 60):
            memory.remember(f"fact {n} about Lviv number {n * 7}", key=f"k{n}")
        memory.forget(next(i.id for i in memory.items(limit=999) if "Lviv" in i.content))
        now = rowids(url, "brain_archive.md")
        assert len(archived) > 10 and len(now) > len(archived)
        assert all(now[k] == v for k, v in archived.items())  # left in place
        written = dump(url)
        assert len(written["items"]) > 40 and written["terms"]
        memory.reindex()
        assert dump(url) == written
    finally:
        backend.close()


def test_rows_added_a_few_at_a_time_are_the_rows_a_bulk_load_writes(postgres_url: str) -> None:
    """A file grown five facts at a time (each write's rows sent as ``INSERT`` with the
    rest of the write) holds every column, posting, count and vector that a load of the
    whole file at once (``COPY``) writes; so does one fact edited in place."""
    pytest.importorskip("psycopg")
    from kronika.stores.postgres.index import PostgresIndex
    from kronika.stores.postgres.inserting import FEW

    total = FEW + 36
    with PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as ix:
        files = written(ix)
        grown: list[MemoryItem] = []
        for start in range(0, total, 5):
            grown += [fact(n) for n in range(start, min(start + 5, total))]
            grown[0] = replace(grown[0], content=f"the first fact, edited {start} times")
            files.write("brain_archive.md", list(grown))
        files.write("brain.md", [fact(500, "a fact with <odd> 'quotes' and\ttabs")])
        assert len(rowids(ix.url, "brain_archive.md")) == total
        diffed = dump(ix.url)
        assert diffed["embeddings"] and diffed["terms"]
        with PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as fresh:
            files.rebuild(fresh)  # the archive's rows in one COPY
        assert dump(ix.url) == diffed


def test_a_brain_another_worker_wrote_last_is_patched_when_its_rows_check_out(
    postgres_url: str,
) -> None:
    """A worker that did not write a file's rows (another did, last) patches a few of
    them when it says every id the file holds now and the index's rows bear it out:
    the rows equal a rebuild's. When they do not (a row the file no longer names, an
    unchanged id another file took, places that are not lines, no ids given, another
    state) nothing is written and the caller re-indexes the file whole."""
    pytest.importorskip("psycopg")
    from kronika.stores.postgres.index import PostgresIndex

    def brain(n: int, line: int, text: str | None = None) -> MemoryItem:
        return replace(fact(n, text), provenance=Provenance("brain.md", line))

    def state_of(files: SourceFiles, path: str, version: int, count: int) -> SourceState:
        files.version = version
        return SourceState("jaskier", path, f"c{version}", version, count)

    with two_workers(postgres_url) as (url, a, b):
        a.write("brain.md", [brain(n, n + 3) for n in range(5)])  # f0..f4 on lines 3..7
        written = a.states["brain.md"]
        before = rowids(url)
        # b drops f1, the facts below move up a line, f5 goes at the end
        after = state_of(b, "brain.md", written.mtime_ns + 1, 5)
        now = [brain(0, 3), brain(2, 4), brain(3, 5), brain(4, 6), brain(5, 7)]
        lines = {"f2": 4, "f3": 5, "f4": 6}
        args = (written, after, ["f1"], [now[-1]], [text_hash(now[-1])], lines)
        held = {it.id for it in now}
        assert not b.index.patch_source(*args)  # b keeps no rows and is given no ids
        assert not b.index.patch_source(*args, held=held - {"f0"})  # f0 is a row still
        assert rowids(url) == before
        assert b.index.patch_source(*args, held=held, vectors=vectors(now))
        patched = dump(url)
        assert {k: v for k, v in rowids(url).items() if k != "f5"} == {
            k: v for k, v in before.items() if k != "f1"
        }  # moved, not written again
        b.files["brain.md"], b.states["brain.md"] = now, after
        with PostgresIndex(postgres_url, embedding_model="m1", dim=DIM) as fresh:
            b.rebuild(fresh)
        assert dump(url) == patched

        # an unchanged id taken by another file: the Brain's rows lack it
        a.write("brain.md", [brain(n, n + 3) for n in range(5)])
        a.write("brain_archive.md", [fact(3)])  # takes f3, the Brain keeps its state
        written = a.states["brain.md"]
        after = state_of(b, "brain.md", a.version + 1, 5)
        args = (written, after, ["f1"], [now[-1]], [text_hash(now[-1])], lines)
        assert not b.index.patch_source(*args, held=held)
        assert "f3" in rowids(url, "brain_archive.md") and "f5" not in rowids(url)

        # a file whose places are not its lines (a line repeated: numbered in order)
        a.write("brain.md", [brain(0, 3), brain(1, 3), brain(2, 4)])
        written = a.states["brain.md"]
        after = state_of(b, "brain.md", a.version + 1, 3)
        unlined = (written, after, ["f1"], [], [], {"f2": 3})
        assert not b.index.patch_source(*unlined, held={"f0", "f2"})
        # the state the index holds is not the one the patch starts from
        assert not b.index.patch_source(after, after, ["f1"], [], [], {}, held={"f0", "f2"})
        assert sorted(rowids(url, "brain.md")) == ["f0", "f1", "f2"]


def test_two_workers_writing_one_brain_in_turn_leave_the_index_as_a_rebuild(
    postgres_url: str, tmp_path: Path
) -> None:
    """Two workers remembering facts of one agent in turn (each patching a Brain the
    other indexed last, facts moving to the archive, keys superseded): every row of the
    index is what ``kronika index rebuild`` writes, and each worker finds the other's
    latest fact."""
    pytest.importorskip("psycopg")
    from backends import Backend

    backend = Backend("postgres", tmp_path, postgres_url)
    try:
        first = backend.open("a", brain_max=60, brain_budget=40)
        second = backend.open("b", brain_max=60, brain_budget=40)
        url = first._ctx.index.url  # type: ignore[attr-defined]
        for n in range(24):
            for name, memory in (("first", first), ("second", second)):
                memory.remember(f"{name} jar {n} holds plum jam", key=f"{name}_{n % 9}")
        written = dump(url)
        assert len(written["items"]) > 20
        found = first.recall("second jar 23 holds plum jam", k=3).hits
        assert "second_5" in {hit.item.key for hit in found}
        second.reindex()
        assert dump(url) == written
    finally:
        backend.close()
