"""Memory with Qdrant as its vector index (the client's local mode, a folder in the
workspace): recall finds through it, forgetting deletes the points and leaves no copy,
a rebuild or a new collection fills it, another model makes the collection anew."""

from __future__ import annotations

import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("qdrant_client", reason="the [qdrant] extra (qdrant-client) is not installed")

from kronika import Memory, build_memory, load_settings  # noqa: E402
from kronika.core.model import RecallFilter  # noqa: E402
from kronika.settings import Settings  # noqa: E402
from kronika.stores.qdrant.index import QdrantVectorIndex  # noqa: E402
from kronika.stores.vectored import IndexWithVectors  # noqa: E402
from kronika.testing import FrozenClock  # noqa: E402
from kronika.workflows.session import Session  # noqa: E402

WORD = "rooibos"


@pytest.fixture
def qsettings(home: Path) -> Settings:
    return load_settings(home, environ={}, embedder="hashing", qdrant_path="qdrant")


@pytest.fixture
def qmemory(qsettings: Settings, clock: FrozenClock) -> Iterator[Memory]:
    mem = build_memory(qsettings, create=True, clock=clock)
    yield mem
    mem.close()


def _wrapped(memory: Memory) -> IndexWithVectors:
    assert isinstance(memory.index, IndexWithVectors)
    return memory.index


def _points(memory: Memory) -> int:
    return _wrapped(memory).vectors.count()


def _embedded(memory: Memory) -> int:
    return len(_wrapped(memory).inner.vector_points(None))


def test_recall_finds_memories_through_the_qdrant_collection(qmemory: Memory) -> None:
    qmemory.remember(key="drink", value="green tea with jasmine")
    qmemory.remember(key="city", value="Kraków")
    qmemory.note("The boiler is serviced every October")
    assert _points(qmemory) == _embedded(qmemory) >= 3
    hits = qmemory.recall("jasmine tea", mode="vector").hits
    assert hits and hits[0].item.value == "green tea with jasmine"
    index = _wrapped(qmemory)
    vector = qmemory.embedder.embed_query("jasmine tea")
    assert index.search_vector(vector, RecallFilter(), 3) == index.vectors.search(
        vector, RecallFilter(), 3
    )


def test_turns_saved_one_by_one_each_get_a_point(qmemory: Memory) -> None:
    for n in range(5):
        qmemory.save_turn("s1", "user" if n % 2 else "assistant", f"turn number {n} about kayaks")
    qmemory.sync()
    assert _points(qmemory) == _embedded(qmemory) >= 5


def test_forgetting_deletes_the_points_and_no_file_keeps_the_word(qmemory: Memory) -> None:
    first = Session(qmemory)
    first.user("I prefer Rooibos. My dog is called Pixel.")
    first.assistant("Rooibos is a fine choice.")
    first.close()
    qmemory.note("Bought more rooibos at the market")
    before = _points(qmemory)
    assert any(WORD in h.item.content.casefold() for h in qmemory.recall(WORD).hits)
    qmemory.forget(topic=WORD)
    assert _points(qmemory) == _embedded(qmemory) < before
    assert not any(WORD in h.item.content.casefold() for h in qmemory.recall(WORD).hits)
    qmemory.close()
    home = qmemory.settings.home
    stored = list((home / "qdrant").rglob("*"))
    assert any(p.name == "storage.sqlite" for p in stored)
    holding = [
        p for p in home.rglob("*") if p.is_file() and WORD.encode() in p.read_bytes().lower()
    ]
    assert holding == []


def test_a_deleted_points_vector_leaves_the_local_storage(
    qsettings: Settings, clock: FrozenClock
) -> None:
    memory = build_memory(qsettings, create=True, clock=clock)
    memory.remember(key="secret_plan", value="zebra crossing at midnight")
    [fact] = [f for f in memory.facts() if f.key == "secret_plan"]
    [point] = [p for p in _wrapped(memory).inner.vector_points(None) if p.item.id == fact.id]
    # the local mode pickles a vector as Python floats: 8-byte big-endian doubles
    flat = point.vector.astype(np.float64)
    unit = flat / np.linalg.norm(flat)
    values = [struct.pack(">d", v) for v in unit.astype(np.float32).tolist() if v][:3]
    storage = qsettings.home / "qdrant" / "collection" / "kronika" / "storage.sqlite"
    kept = storage.read_bytes()
    assert values and all(v in kept for v in values) and fact.id.encode() in kept
    memory.forget(fact.id)
    memory.close()
    kept = storage.read_bytes()
    assert not [v for v in values if v in kept]
    assert fact.id.encode() not in kept


def test_a_rebuild_fills_the_collection_again(qmemory: Memory) -> None:
    qmemory.remember(key="drink", value="coffee")
    qmemory.note("Met Ola at the station")
    count = _points(qmemory)
    _wrapped(qmemory).vectors.reset()
    assert _points(qmemory) == 0
    qmemory.reindex()
    assert _points(qmemory) == count == _embedded(qmemory)


def test_an_existing_workspace_fills_a_new_collection_when_opened(
    settings: Settings, clock: FrozenClock
) -> None:
    plain = build_memory(settings, create=True, clock=clock)
    plain.remember(key="drink", value="coffee")
    plain.note("Met Ola at the station")
    plain.close()
    with_qdrant = build_memory(settings.with_overrides(qdrant_path="q"), clock=clock)
    try:
        assert _points(with_qdrant) == _embedded(with_qdrant) >= 2
        assert with_qdrant.recall("station", mode="vector").hits
    finally:
        with_qdrant.close()


def test_another_model_makes_the_collection_anew(tmp_path: Path) -> None:
    from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
    from kronika.ports import VectorPoint

    at = __import__("datetime").datetime(2026, 1, 1, tzinfo=__import__("datetime").UTC)
    item = MemoryItem(
        "i1", "main", "x", ItemType.NOTE, Layer.LONG_TERM, Tier.MID, at, at, Provenance("n.md")
    )
    first = QdrantVectorIndex.connect(collection="c", embedding_model="a", dim=8, path=tmp_path)
    assert first.created
    first.upsert([VectorPoint(item, "h", np.ones(8, dtype=np.float32))])
    first.close()
    same = QdrantVectorIndex.connect(collection="c", embedding_model="a", dim=8, path=tmp_path)
    assert not same.created and same.count() == 1
    same.close()
    other = QdrantVectorIndex.connect(collection="c", embedding_model="b", dim=8, path=tmp_path)
    assert other.created and other.count() == 0
    other.close()
    wider = QdrantVectorIndex.connect(collection="c", embedding_model="b", dim=16, path=tmp_path)
    assert wider.created and wider.dim == 16
    wider.close()


def test_without_the_extra_the_cli_says_how_to_install_it(home: Path) -> None:
    """The client made unimportable in a real process (as when it is not installed)."""
    script = (
        "import sys; sys.modules['qdrant_client'] = None\n"
        "from kronika.cli import main\n"
        "sys.exit(main(['--home', sys.argv[1], 'init']) or main(['--home', sys.argv[1],"
        " 'recall', 'tea']))\n"
    )
    env = {"KRONIKA_EMBEDDER": "hashing", "KRONIKA_QDRANT_PATH": "qdrant", "PATH": "/usr/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(home)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 2  # a bad setting
    assert "pip install 'kronika[qdrant]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_stale_point_never_shows_an_item_gone_or_hidden_from_the_reader(
    qmemory: Memory,
) -> None:
    """As after a write that reached the item index but not Qdrant."""
    from dataclasses import replace

    from kronika.core.model import Reader, Scope
    from kronika.ports import VectorPoint

    qmemory.remember(key="pin", value="the safe code is 4711")
    index = _wrapped(qmemory)
    [point] = [p for p in index.inner.vector_points(None) if p.item.key == "pin"]
    assert point.item.scope is Scope.PERSONAL and point.item.user is None
    bob = Reader(tenant=point.item.tenant, user="bob")
    # Qdrant still believes the item is global, and holds a point of an item long gone
    stale = replace(point.item, scope=Scope.GLOBAL)
    gone = replace(stale, id="f-gone")
    index.vectors.upsert([VectorPoint(stale, point.text_hash, point.vector)])
    index.vectors.upsert([VectorPoint(gone, point.text_hash, point.vector)])
    query = qmemory.embedder.embed_query("safe code")
    raw = {i for i, _ in index.vectors.search(query, RecallFilter(reader=bob), 10)}
    assert {point.item.id, "f-gone"} <= raw
    assert index.search_vector(query, RecallFilter(reader=bob), 10) == []
    owner = index.search_vector(query, RecallFilter(), 10)
    assert [i for i, _ in owner] == [point.item.id]


def test_an_unreachable_server_is_an_index_error_that_names_it(
    settings: Settings, clock: FrozenClock
) -> None:
    import socket

    from kronika.errors import IndexError_

    with socket.socket() as free:  # a loopback port nobody listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(IndexError_, match=f"Qdrant vector index at {url}"):
        build_memory(settings.with_overrides(qdrant_url=url, qdrant_timeout=2), create=True)


def test_an_item_indexed_before_its_vector_gets_its_point_when_the_vector_comes(
    tmp_path: Path,
) -> None:
    """A write that deferred its vector (the model not loaded yet): the row first, the
    vector later, maybe from another process."""
    from datetime import UTC, datetime

    from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
    from kronika.ports import SourceState
    from kronika.stores.sqlite import SqliteIndex

    at = datetime(2026, 1, 1, tzinfo=UTC)
    items = [
        MemoryItem(
            f"t-{n}", "main", f"turn {n}", ItemType.MESSAGE, Layer.WORKING, Tier.SHORT, at, at,
            Provenance("sessions/s.md", line=n + 1),
        )
        for n in range(3)
    ]  # fmt: skip
    state = SourceState("main", "sessions/s.md", "h", 1, 1)
    sqlite = SqliteIndex(tmp_path / "index.sqlite", embedding_model="m", dim=8)
    vectors = QdrantVectorIndex.connect(collection="c", embedding_model="m", dim=8, path=tmp_path)
    index = IndexWithVectors(sqlite, vectors)
    try:
        index.replace_source(state, items, ["a", "b", "c"])
        assert vectors.count() == 0
        index.store_embeddings({"a": np.ones(8, np.float32), "c": np.arange(8, dtype=np.float32)})
        assert vectors.count() == 2
        index.store_embeddings({"b": -np.ones(8, np.float32)})
        found = index.search_vector(-np.ones(8, np.float32), RecallFilter(), 3)
        assert [i for i, _ in found][0] == "t-1" and len(found) == 3
        index.remove_source("main", "sessions/s.md")
        assert vectors.count() == 0
    finally:
        index.close()
