"""``kronika index graph``: a large index gets its vector graph built and saved now,
so later commands (each too short to finish a build of their own) walk it; a small
index says it needs none. Through the CLI, on a real workspace."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kronika import build_memory, load_settings
from kronika.bench.scale import synthetic_sessions
from kronika.stores.sqlite import SqliteIndex

THRESHOLD = 200


def _workspace(home: Path, turns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``turns`` chat turns in ``home``; the CLI's graph from :data:`THRESHOLD` items on."""
    settings = load_settings(home, environ={}, embedder="hashing")
    with build_memory(settings, create=True) as memory:
        memory.import_sessions("me", synthetic_sessions(turns))
    monkeypatch.setenv("KRONIKA_ANN_THRESHOLD", str(THRESHOLD))


def test_a_large_index_gets_its_graph_built_and_saved_for_the_next_command(
    run: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "ws"
    _workspace(home, 600, monkeypatch)
    assert not (home / "index.sqlite.ann").exists()
    built = json.loads(run("index", "graph", "--json"))
    assert built["vector_graph"] is True
    assert (home / "index.sqlite.ann").is_file()
    # the next process loads the graph instead of building one
    settings = load_settings(home, environ={}, embedder="hashing", ann_threshold=THRESHOLD)
    with build_memory(settings) as memory:
        assert isinstance(memory.index, SqliteIndex)
        assert memory.index.wait_for_vector_graph(0)
    text = run("index", "graph")
    assert "ready and saved" in text


def test_a_small_index_needs_no_graph_and_says_so(
    run: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _workspace(tmp_path / "ws", 50, monkeypatch)
    assert json.loads(run("index", "graph", "--json"))["vector_graph"] is False
    assert not (tmp_path / "ws" / "index.sqlite.ann").exists()
    assert "every search is exact" in run("index", "graph")


def test_on_postgresql_the_graph_is_the_servers_hnsw_index_built_now(
    run: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_url: str
) -> None:
    home = tmp_path / "ws"
    settings = load_settings(home, environ={}, embedder="hashing", database_url=postgres_url)
    with build_memory(settings, create=True) as memory:
        memory.import_sessions("me", synthetic_sessions(600))
    monkeypatch.setenv("KRONIKA_DATABASE_URL", postgres_url)
    monkeypatch.setenv("KRONIKA_POSTGRES_ANN_THRESHOLD", str(THRESHOLD))
    assert json.loads(run("index", "graph", "--json"))["vector_graph"] is True
    again = load_settings(
        home, environ={}, embedder="hashing", database_url=postgres_url,
        postgres_ann_threshold=THRESHOLD,
    )  # fmt: skip
    with build_memory(again) as memory:
        wait = getattr(memory.index, "wait_for_vector_graph", None)
        assert wait is not None and wait(0)
