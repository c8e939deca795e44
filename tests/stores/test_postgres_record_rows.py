"""The store of record writes only the item rows a write changed, and what it keeps is
what the documents hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory, load_settings
from kronika.memory import Memory
from kronika.settings import Settings

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")

STORED = 30  # fewer than the Brain holds: none moves to the archive


def _settings(home: Path, url: str) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", database_url=url)


def _rows(url: str, path: str) -> dict[str, tuple[Any, ...]]:
    """``id -> (xmin, position, status)`` of one document's item rows."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT id, xmin::text, position, status FROM record_items"
            " WHERE agent = 'default' AND path = %s",
            (path,),
        ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def _matches_the_documents(url: str, memory: Memory, paths: tuple[str, ...]) -> None:
    """Every document's rows are its items, in its order, as parsed from it."""
    for path in paths:
        parsed = memory.workspace.parse_source("default", path).items
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT id, status, content, valid_to, superseded_by, data->'provenance'"
                " FROM record_items WHERE agent = 'default' AND path = %s ORDER BY position",
                (path,),
            ).fetchall()
        assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
            (i.id, i.status.value, i.content, i.valid_to, i.superseded_by) for i in parsed
        ]
        assert all("line" not in r[5] for r in rows)  # the line moves; position orders


def test_a_write_changes_only_the_rows_of_the_items_it_changed(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        memory.remember_many(
            [{"key": f"fact_{n}", "value": f"stored value {n}"} for n in range(STORED)]
        )
        memory.remember("Kraków", key="city", section="Current")
        before = _rows(postgres_url, "brain.md")
        assert len(before) == STORED + 1

        memory.remember("a new value", key="fact_0")  # supersedes the first fact
        memory.remember("tea", key="drink", section="Preferences")
        after = _rows(postgres_url, "brain.md")
        history = _rows(postgres_url, "history.md")
        _matches_the_documents(postgres_url, memory, ("brain.md", "history.md"))

    rewritten = {i for i in after if i in before and after[i][0] != before[i][0]}
    new = set(after) - set(before)
    assert len(new) == 2  # the new value of fact_0 and the drink
    assert set(before) - set(after) <= set(history)  # the old value went to the history
    assert len(set(before) - set(after)) == 1
    # the rows that kept their item and place were not written again; a row that
    # only moved (a line added above it) got its new position
    untouched = [i for i in after if i in before and after[i][1] == before[i][1]]
    assert len(untouched) >= STORED - 2
    assert all(after[i][0] == before[i][0] for i in untouched)
    assert all(after[i][1] != before[i][1] for i in rewritten)


def test_a_document_written_by_an_older_kronika_is_rewritten_once(
    postgres_url: str, tmp_path: Path
) -> None:
    with build_memory(_settings(tmp_path / "a", postgres_url)) as memory:
        memory.remember_many([{"key": f"k{n}", "value": f"value {n}"} for n in range(5)])
    with psycopg.connect(postgres_url) as conn:  # rows as an older kronika left them
        conn.execute("UPDATE record_items SET digest = NULL, data = data || '{\"x\": 1}'")
    with build_memory(_settings(tmp_path / "b", postgres_url)) as memory:
        memory.remember("one more", key="k9")
        _matches_the_documents(postgres_url, memory, ("brain.md",))
    with psycopg.connect(postgres_url) as conn:
        stale = conn.execute(
            "SELECT count(*) FROM record_items WHERE path = 'brain.md'"
            " AND (digest IS NULL OR data ? 'x')"
        ).fetchone()
    assert stale == (0,)


def test_rows_written_by_another_worker_in_between_are_not_taken_for_ones_own(
    postgres_url: str, tmp_path: Path
) -> None:
    with (
        build_memory(_settings(tmp_path / "a", postgres_url)) as first,
        build_memory(_settings(tmp_path / "b", postgres_url)) as second,
    ):
        first.remember_many([{"key": f"k{n}", "value": f"value {n}"} for n in range(5)])
        second.remember("changed by the second", key="k1")
        second.forget(key="k3")
        first.remember("changed by the first", key="k2")
        _matches_the_documents(postgres_url, first, ("brain.md", "history.md"))
        assert {f.key: f.value for f in second.facts()} == {
            "k0": "value 0",
            "k1": "changed by the second",
            "k2": "changed by the first",
            "k4": "value 4",
        }
