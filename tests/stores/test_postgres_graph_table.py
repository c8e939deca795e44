"""The vectors of the HNSW graph on PostgreSQL, kept in a table of their own
(``idx_graph``, migration ``0207``): a fact that only moves (renumbered in the Brain, or
moved to the archive) leaves its vector where it is, so the graph is not written again
for it; a new or changed text's vector goes in; a forgotten fact's leaves; and a recall
over the graph finds the moved facts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brain_facts import FACTS
from kronika.app import build_memory
from kronika.settings import load_settings

pytest.importorskip("psycopg", reason="the postgres extra is not installed")


def _open(home: Path, url: str) -> Any:
    # a small Brain, so that facts move to the archive as new ones come
    settings = load_settings(
        home,
        environ={},
        embedder="hashing",
        database_url=url,
        postgres_ann_threshold=2,
        brain_budget=60,
        brain_max=100,
    )
    return build_memory(settings)


def _index(memory: Any) -> Any:
    from kronika.stores.postgres.index import PostgresIndex

    index = getattr(memory.index, "inner", memory.index)
    assert isinstance(index, PostgresIndex)
    return index


def _rows(memory: Any) -> tuple[dict[str, tuple[str, int]], dict[str, str]]:
    """Each item's (source path, place) and each graph row's transaction id (xmin: a
    row written again gets a new one)."""
    with _index(memory).state.reading() as conn:
        items = conn.execute(
            "SELECT id, source_path, pos FROM idx_items WHERE vec IS NOT NULL"
        ).fetchall()
        graph = conn.execute("SELECT item_id, xmin::text FROM idx_graph").fetchall()
    return {i: (p, n) for i, p, n in items}, dict(graph)


def _written(memory: Any, write: Any) -> tuple[int, int]:
    """Run ``write``; how many items it moved to another file and renumbered in theirs,
    after checking that each of them kept the graph row it had."""
    items, graph = _rows(memory)
    assert set(graph) == set(items)  # one vector per item that has one
    write()
    after, graph_after = _rows(memory)
    moved = renumbered = 0
    for item_id, place in items.items():
        if item_id not in after:
            continue
        moved += after[item_id][0] != place[0]
        renumbered += after[item_id][0] == place[0] and after[item_id][1] != place[1]
        # moved, renumbered or neither: the row of the graph is the one written before
        assert graph_after[item_id] == graph[item_id], (item_id, place, after[item_id])
    assert set(after) <= set(graph_after)
    return moved, renumbered


def test_a_fact_that_moves_leaves_its_vector_in_the_graph(
    postgres_url: str, tmp_path: Path
) -> None:
    with _open(tmp_path / "ws", postgres_url) as memory:
        for key, fact in FACTS[:4]:
            memory.remember(key=key, value=fact)
        assert _index(memory).wait_for_vector_graph(120)
        moved = renumbered = 0
        for key, fact in FACTS[4:]:
            counts = _written(memory, lambda k=key, f=fact: memory.remember(key=k, value=f))
            moved, renumbered = moved + counts[0], renumbered + counts[1]
        # a new value for the Brain's first fact: its old one leaves, the others move up
        first = min(_rows(memory)[0].items(), key=lambda kv: (kv[1][0] != "brain.md", kv[1][1]))
        key = memory.index.get_items([first[0]])[0].key
        counts = _written(memory, lambda: memory.remember(key=key, value="a new value"))
        moved, renumbered = moved + counts[0], renumbered + counts[1]
        assert moved > 0 and renumbered > 0  # the cases this test is about happened

        # a recall walks the graph and finds the facts moved to the archive by meaning
        for asked, fact in FACTS:
            if asked != key:  # that one is history now
                hits = memory.recall(fact, k=3, mode="vector").hits
                assert hits and hits[0].item.value == fact, (asked, [h.item.content for h in hits])


def test_a_changed_or_forgotten_fact_changes_the_graph(postgres_url: str, tmp_path: Path) -> None:
    with _open(tmp_path / "ws", postgres_url) as memory:
        for key, fact in FACTS[:3]:
            memory.remember(key=key, value=fact)
        assert _index(memory).wait_for_vector_graph(120)
        items, graph = _rows(memory)

        memory.remember(key="bread", value="Olena bakes sourdough on Fridays in Lviv")
        after, graph_after = _rows(memory)
        assert set(graph_after) == set(after)
        assert set(after) - set(items)  # the new value is an item of its own
        new = next(iter(set(after) - set(items)))
        assert new in graph_after
        assert memory.recall("sourdough on Fridays", k=1, mode="vector").hits[0].item.id == new

        memory.forget(key="bicycle")
        left, graph_left = _rows(memory)
        assert set(graph_left) == set(left)
        found = memory.recall("bicycles", k=5).hits
        assert not any("bicycle" in (h.item.value or "") for h in found)
        with _index(memory).state.reading() as conn:
            (count,) = conn.execute("SELECT count(*) FROM idx_graph").fetchone()
        assert count == len(left)
