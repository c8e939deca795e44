"""An item index whose vector search is answered by a separate vector index (Qdrant).

:class:`IndexWithVectors` wraps any :class:`kronika.ports.PointSource` (the SQLite index
today, PostgreSQL's tomorrow): every call goes to it, and each write is mirrored into
the :class:`kronika.ports.VectorIndex` — a replaced or removed file's points are
deleted, the points of items whose vectors are cached are upserted (at once, or when a
deferred vector is stored later). ``search_vector`` asks the vector index, with the
whole filter (the reader's visibility included) applied inside it, and keeps only hits
the item index still holds and the reader may see: the vector index ranks, the item
index decides what exists.

After a write that left some text out of memory (``drop_unused_embeddings`` dropped a
vector), the vector index is compacted so no copy of a forgotten item's vector stays
in its storage.

The wrapper holds two parts: ``index.inner``, the item index, answers everything but
what the vector index changes; ``index.mirror`` (:class:`VectorMirror`) makes the
writes that reach the vector index too and answers vector search from it. Every verb
has its flat name (``index.get_items`` is ``index.inner.get_items``), one
:class:`~kronika.core.alias.Alias` a line, so the wrapper is an
:class:`~kronika.ports.ItemIndex` without restating the methods it passes on.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from kronika.core.alias import Alias
from kronika.core.model import MemoryItem, RecallFilter
from kronika.core.visibility import visible
from kronika.ports import PointSource, SourceRows, SourceState, Vector, VectorIndex
from kronika.stores.sql.rows import default_text_hash

_FILL_BATCH = 2_000  # points read and upserted at a time when filling anew


class VectorMirror:
    """The writes of ``inner`` that reach ``vectors`` too, and vector search answered by
    ``vectors`` (see the module docstring)."""

    def __init__(self, inner: PointSource, vectors: VectorIndex) -> None:
        self._inner = inner
        self._vectors = vectors

    # -- writes, mirrored -----------------------------------------------------------------

    def _upsert_for(self, items: Sequence[MemoryItem], hashes: Sequence[str]) -> None:
        ids = {item.id for item in items}
        found = self._inner.vector_points(hashes)
        self._vectors.upsert([p for p in found if p.item.id in ids])

    def replace_source(
        self,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str] | None = None,
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> set[str]:
        lacking = self._inner.replace_source(state, items, text_hashes, vectors=vectors)
        self._replaced(state, items, text_hashes)
        return lacking

    def replace_sources(self, files: Sequence[SourceRows]) -> set[str]:
        lacking = self._inner.replace_sources(files)
        for f in files:
            self._replaced(f.state, f.items, f.text_hashes)
        return lacking

    def _replaced(
        self, state: SourceState, items: Sequence[MemoryItem], text_hashes: Sequence[str] | None
    ) -> None:
        """A file the item index replaced: its old points deleted, its items' upserted."""
        hashes = list(text_hashes) if text_hashes is not None else None
        self._vectors.delete(source=(state.agent, state.path))
        self._upsert_for(items, hashes or [default_text_hash(item) for item in items])

    def append_to_source(
        self,
        expected: SourceState,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str],
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> bool:
        if not self._inner.append_to_source(expected, state, items, text_hashes, vectors=vectors):
            return False
        self._upsert_for(items, text_hashes)
        return True

    def patch_source(
        self,
        expected: SourceState,
        state: SourceState,
        gone: Sequence[str],
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str],
        lines: Mapping[str, int | None],
        *,
        vectors: Mapping[str, Vector] | None = None,
        held: Collection[str] | None = None,
    ) -> bool:
        return False  # the file is re-indexed whole, which mirrors its points

    def remove_source(self, agent: str, path: str) -> None:
        self._inner.remove_source(agent, path)
        self._vectors.delete(source=(agent, path))

    def store_embeddings(self, vectors: Mapping[str, Vector]) -> None:
        self._inner.store_embeddings(vectors)
        # items indexed before their vector was made (a deferred write) get their point now
        self._vectors.upsert(self._inner.vector_points(list(vectors)))

    def drop_unused_embeddings(self, *, everywhere: bool = False) -> int:
        dropped = self._inner.drop_unused_embeddings(everywhere=everywhere)
        if dropped:
            self._vectors.compact()
        return dropped

    def reset(self) -> None:
        self._inner.reset()
        self._vectors.reset()

    def fill(self) -> int:
        """Empty the vector index and give it a point for every embedded item; how many."""
        self._vectors.reset()
        found = self._inner.vector_points(None)
        for start in range(0, len(found), _FILL_BATCH):
            self._vectors.upsert(found[start : start + _FILL_BATCH])
        self._vectors.compact()
        return len(found)

    # -- search ---------------------------------------------------------------------------

    def search_vector(
        self, query: Vector, flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]]:
        """The vector index's hits that the item index still holds and, when ``flt`` has a
        reader, that :func:`visible` allows: a point left stale by a write that reached
        the item index but not the vector index (a crash, an unreachable server) never
        shows an item that is gone or that the reader may not see."""
        found = self._vectors.search(query, flt, limit)
        if not found:
            return found
        items = {item.id: item for item in self._inner.get_items([i for i, _ in found])}
        reader = flt.reader
        return [
            (item_id, score)
            for item_id, score in found
            if item_id in items and (reader is None or visible(items[item_id], reader))
        ]

    def stats(self) -> dict[str, Any]:
        return {**self._inner.stats(), "vector_index_points": self._vectors.count()}

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._vectors.close()


class IndexWithVectors:
    """``inner`` for everything, ``vectors`` for vector search (see the module docstring)."""

    inner: PointSource
    """The item index: what exists, and everything the vector index does not change."""
    vectors: VectorIndex
    """The vector index that answers vector search."""
    mirror: VectorMirror
    """The writes mirrored into ``vectors``, vector search, and the two closed together."""

    def __init__(self, inner: PointSource, vectors: VectorIndex) -> None:
        self.inner = inner
        self.vectors = vectors
        self.mirror = VectorMirror(inner, vectors)

    @property
    def embedding_model(self) -> str:
        return self.inner.embedding_model

    @property
    def patches_rows(self) -> bool:
        return False  # a file is re-indexed whole, which mirrors its points

    # ------------------------------------------------ mirrored into the vector index
    replace_source = Alias("mirror", VectorMirror.replace_source)
    replace_sources = Alias("mirror", VectorMirror.replace_sources)
    append_to_source = Alias("mirror", VectorMirror.append_to_source)
    patch_source = Alias("mirror", VectorMirror.patch_source)
    remove_source = Alias("mirror", VectorMirror.remove_source)
    store_embeddings = Alias("mirror", VectorMirror.store_embeddings)
    drop_unused_embeddings = Alias("mirror", VectorMirror.drop_unused_embeddings)
    reset = Alias("mirror", VectorMirror.reset)
    fill = Alias("mirror", VectorMirror.fill)
    search_vector = Alias("mirror", VectorMirror.search_vector)
    stats = Alias("mirror", VectorMirror.stats)
    close = Alias("mirror", VectorMirror.close)
    # ------------------------------------------------ the item index's own
    source_states = Alias("inner", PointSource.source_states)
    source_state = Alias("inner", PointSource.source_state)
    source_tail = Alias("inner", PointSource.source_tail)
    source_items = Alias("inner", PointSource.source_items)
    embeddings_missing = Alias("inner", PointSource.embeddings_missing)
    vector_points = Alias("inner", PointSource.vector_points)
    agents = Alias("inner", PointSource.agents)
    search_lexical = Alias("inner", PointSource.search_lexical)
    score_features = Alias("inner", PointSource.score_features)
    neighbours = Alias("inner", PointSource.neighbours)
    get_items = Alias("inner", PointSource.get_items)
    list_items = Alias("inner", PointSource.list_items)
    count_items = Alias("inner", PointSource.count_items)
    list_keys = Alias("inner", PointSource.list_keys)
    created_per_day = Alias("inner", PointSource.created_per_day)
    record_access = Alias("inner", PointSource.record_access)
    restore_usage = Alias("inner", PointSource.restore_usage)
    recall_log = Alias("inner", PointSource.recall_log)
    meta_value = Alias("inner", PointSource.meta_value)
    set_meta_value = Alias("inner", PointSource.set_meta_value)
    integrity_problems = Alias("inner", PointSource.integrity_problems)
    recreate = Alias("inner", PointSource.recreate)
