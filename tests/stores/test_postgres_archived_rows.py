"""In team mode, an archived fact given a new value writes a fixed number of rows,
however long the archive: the rows of the facts that changed, in the store of record
and in the index, and no other row of the archive or the history. Its other facts
keep their lines (a fact that leaves marks its lines, `docs/workspace.md`), so their
rows keep their places; the index's rows are patched, not compared with the whole file; and what is
stored is what a re-index of the files gives."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kronika.app import build_memory
from kronika.settings import load_settings

pytest.importorskip("psycopg", reason="the postgres extra is not installed")

STORED = 400
ARCHIVE = "brain_archive.md"


def _open(home: Path, url: str) -> Any:
    settings = load_settings(
        home, environ={}, embedder="hashing", database_url=url, brain_budget=40, brain_max=60
    )
    return build_memory(settings, create=True)


def _versions(memory: Any, url: str) -> dict[tuple[str, str, str], str]:
    """Each row of the record's items and of the index, by (table, file, id): its
    transaction id (a row written again gets a new one)."""
    import psycopg

    index = getattr(memory.index, "inner", memory.index)
    with psycopg.connect(url) as conn:
        record = conn.execute(
            "SELECT path, id, xmin::text FROM record_items WHERE agent = 'default'"
        ).fetchall()
    with index.state.reading() as conn:
        indexed = conn.execute("SELECT source_path, id, xmin::text FROM idx_items").fetchall()
    return {("record", p, i): x for p, i, x in record} | {("index", p, i): x for p, i, x in indexed}


def _written(before: dict[Any, str], after: dict[Any, str]) -> Counter[tuple[str, str]]:
    """How many rows of each (table, file) were inserted, written again or deleted."""
    touched = {k for k in after if before.get(k) != after[k]} | (set(before) - set(after))
    return Counter((table, path) for table, path, _ in touched)


def _ids(versions: dict[tuple[str, str, str], str], table: str) -> set[str]:
    """The ids of the archive's rows in ``table``."""
    return {i for t, p, i in versions if t == table and p == ARCHIVE}


def _in_order(memory: Any) -> list[tuple[str, int | None, str]]:
    """The archive's rows as the index holds them, in the order of their places."""
    return [
        (r.id, r.provenance.line, r.content) for r in memory.index.source_items("default", ARCHIVE)
    ]


def test_an_archived_fact_given_a_new_value_writes_the_rows_it_changed(
    postgres_url: str, tmp_path: Path
) -> None:
    with _open(tmp_path / "ws", postgres_url) as memory:
        memory.remember_many(
            [{"key": f"k{n}", "value": f"value number {n}"} for n in range(STORED)]
        )
        archived = [f for f in memory.workspace.archived_facts("default") if f.key]
        assert len(archived) > STORED // 2, "the Brain's budget archived most facts"
        lines = (memory.workspace.agent_dir("default") / ARCHIVE).read_text().count("\n")
        step = len(archived) // 6
        for n, fact in enumerate(archived[step::step][:5]):  # spread over the archive
            before = _versions(memory, postgres_url)
            memory.remember(f"a new value {n}", key=fact.key)
            after = _versions(memory, postgres_url)
            written = _written(before, after)
            for table in ("record", "index"):
                then, now = _ids(before, table), _ids(after, table)
                # the old value left the archive, and the facts the Brain let go came
                # in: their rows, and no other row of the archive, were written
                assert fact.id in then - now
                assert written[(table, ARCHIVE)] == len(then ^ now), (table, written)
                # and its old value came into the history: that row alone, however
                # long the history is
                assert written[(table, "history.md")] == 1, (table, written)
            hit = memory.recall(f"a new value {n}", k=1, mode="lexical").hits
            assert hit and hit[0].item.value == f"a new value {n}"
            assert hit[0].item.provenance.path == "brain.md"
        archive = (memory.workspace.agent_dir("default") / ARCHIVE).read_text()
        assert archive.count("\n") >= lines  # no line below a departed fact moved up

        rows = _in_order(memory)
        assert [line for _, line, _ in rows] == sorted(line or 0 for _, line, _ in rows)
        memory.reindex()
        assert _in_order(memory) == rows  # what a re-index of the files gives
