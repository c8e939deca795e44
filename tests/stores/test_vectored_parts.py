"""``IndexWithVectors`` holds two parts, the item index (``index.inner``) and the
writes mirrored into the vector index with vector search (``index.mirror``), and keeps
each verb of :class:`~kronika.ports.ItemIndex` by its flat name, without restating
what it passes on.

:func:`_typed` is what mypy checks (``mypy tests/stores/test_vectored_parts.py``).
"""

from __future__ import annotations

import inspect
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kronika.core.alias import Alias
from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, RecallFilter, Tier
from kronika.ports import ItemIndex, PointSource, SourceState
from kronika.stores.sqlite import SqliteIndex
from kronika.stores.vectored import IndexWithVectors, VectorMirror

MIRRORED = {
    "replace_source",
    "replace_sources",
    "append_to_source",
    "patch_source",
    "remove_source",
    "store_embeddings",
    "drop_unused_embeddings",
    "reset",
    "fill",
    "search_vector",
    "stats",
    "close",
}


def _members(port: type[Any]) -> set[str]:
    return {
        name
        for cls in port.__mro__
        if cls not in (object,) and cls.__name__ != "Protocol" and cls.__name__ != "Generic"
        for name, value in vars(cls).items()
        if not name.startswith("_") and inspect.isfunction(value)
    }


def test_the_wrapper_is_one_object_over_two_parts() -> None:
    assert IndexWithVectors.__mro__ == (IndexWithVectors, object)
    assert VectorMirror.__mro__ == (VectorMirror, object)
    aliases = {n: a for n, a in vars(IndexWithVectors).items() if isinstance(a, Alias)}
    assert {n for n, a in aliases.items() if a.part == "mirror"} == MIRRORED
    assert {a.part for a in aliases.values()} == {"mirror", "inner"}
    for name, alias in aliases.items():
        owner = VectorMirror if alias.part == "mirror" else PointSource
        assert getattr(IndexWithVectors, name) is getattr(owner, alias.verb), name
    # every verb of the port it stands for is there, and nothing recall looks for
    # besides (vectors_of would bypass the vector index)
    assert _members(PointSource) <= set(aliases)
    assert not {"vectors_of", "item_texts", "usage", "items_mark"} & set(dir(IndexWithVectors))


def test_writes_reach_the_vector_index_and_reads_the_item_index(tmp_path: Path) -> None:
    pytest.importorskip("qdrant_client", reason="the [qdrant] extra is not installed")
    from kronika.stores.qdrant.index import QdrantVectorIndex

    at = datetime(2026, 1, 1, tzinfo=UTC)
    item = MemoryItem(
        "f-1", "main", "Geralt likes horses", ItemType.FACT, Layer.LONG_TERM, Tier.LONG, at, at,
        Provenance("brain.md", line=5),
    )  # fmt: skip
    sqlite = SqliteIndex(tmp_path / "index.sqlite", embedding_model="m", dim=4)
    vectors = QdrantVectorIndex.connect(collection="c", embedding_model="m", dim=4, path=tmp_path)
    index = IndexWithVectors(sqlite, vectors)
    try:
        index.replace_source(SourceState("main", "brain.md", "h", 1, 1), [item], ["a"])
        index.store_embeddings({"a": np.ones(4, np.float32)})
        assert vectors.count() == 1 == index.stats()["vector_index_points"]
        # the vector index mirrors whole files: a write does not prepare a patch for it
        assert index.patches_rows is False
        later = SourceState("main", "brain.md", "h2", 2, 2)
        assert not index.patch_source(
            SourceState("main", "brain.md", "h", 1, 1), later, [], [], [], {}
        )
        assert [it.id for it in index.get_items(["f-1"])] == ["f-1"]
        assert index.count_items(RecallFilter()) == 1 == sqlite.count_items(RecallFilter())
        assert [i for i, _ in index.search_vector(np.ones(4, np.float32), RecallFilter(), 3)] == [
            "f-1"
        ]
        index.remove_source("main", "brain.md")
        assert vectors.count() == 0 and index.count_items(RecallFilter()) == 0
    finally:
        index.close()


def _typed(index: IndexWithVectors) -> None:
    """Never called: mypy checks that the wrapper is the port it stands for."""
    whole: ItemIndex = index
    source: PointSource = index
    del whole, source
