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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kronika.core.model import MemoryItem, RecallFilter
from kronika.core.visibility import visible
from kronika.ports import (
    DayCount,
    PointSource,
    RecallLog,
    ScoreFeatures,
    SourceState,
    SourceTail,
    Vector,
    VectorIndex,
    VectorPoint,
)
from kronika.stores.sql.rows import default_text_hash

_FILL_BATCH = 2_000  # points read and upserted at a time when filling anew


class IndexWithVectors:
    """``inner`` for everything, ``vectors`` for vector search (see the module docstring)."""

    def __init__(self, inner: PointSource, vectors: VectorIndex) -> None:
        self._inner = inner
        self._vectors = vectors

    @property
    def inner(self) -> PointSource:
        return self._inner

    @property
    def vectors(self) -> VectorIndex:
        return self._vectors

    @property
    def embedding_model(self) -> str:
        return self._inner.embedding_model

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
    ) -> None:
        self._inner.replace_source(state, items, text_hashes)
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

    def vector_points(self, text_hashes: Iterable[str] | None = None) -> list[VectorPoint]:
        return self._inner.vector_points(text_hashes)

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

    def search_lexical(
        self, query: str, flt: RecallFilter, limit: int, *, whole_phrase: bool = True
    ) -> list[tuple[str, float]]:
        return self._inner.search_lexical(query, flt, limit, whole_phrase=whole_phrase)

    # -- everything else: the inner index ------------------------------------------------

    def source_states(self, agent: str) -> dict[str, SourceState]:
        return self._inner.source_states(agent)

    def embeddings_missing(self, text_hashes: Iterable[str]) -> set[str]:
        return self._inner.embeddings_missing(text_hashes)

    def get_items(self, ids: Sequence[str]) -> list[MemoryItem]:
        return self._inner.get_items(ids)

    def source_tail(self, agent: str, path: str, last: int = 2) -> SourceTail | None:
        return self._inner.source_tail(agent, path, last)

    def source_state(self, agent: str, path: str) -> SourceState | None:
        return self._inner.source_state(agent, path)

    def score_features(self, ids: Sequence[str]) -> ScoreFeatures:
        return self._inner.score_features(ids)

    def list_items(
        self, flt: RecallFilter, *, limit: int | None = None, offset: int = 0
    ) -> list[MemoryItem]:
        return self._inner.list_items(flt, limit=limit, offset=offset)

    def source_items(self, agent: str, path: str) -> list[MemoryItem]:
        return self._inner.source_items(agent, path)

    def count_items(self, flt: RecallFilter) -> int:
        return self._inner.count_items(flt)

    def neighbours(
        self, ids: Sequence[str], flt: RecallFilter, window: int
    ) -> dict[str, list[tuple[str, int]]]:
        return self._inner.neighbours(ids, flt, window)

    def record_access(self, ids: Sequence[str], at: datetime) -> None:
        self._inner.record_access(ids, at)

    def restore_usage(self, rows: Sequence[tuple[str, int, datetime | None]]) -> None:
        self._inner.restore_usage(rows)

    def recall_log(self) -> RecallLog:
        return self._inner.recall_log()

    def created_per_day(self, flt: RecallFilter, since: datetime) -> list[DayCount]:
        return self._inner.created_per_day(flt, since)

    def agents(self) -> list[str]:
        return self._inner.agents()

    def meta_value(self, key: str) -> str | None:
        return self._inner.meta_value(key)

    def set_meta_value(self, key: str, value: str) -> None:
        self._inner.set_meta_value(key, value)

    def integrity_problems(self, *, full: bool = False) -> list[str]:
        return self._inner.integrity_problems(full=full)

    def recreate(self) -> str | None:
        return self._inner.recreate()

    def stats(self) -> dict[str, Any]:
        return {**self._inner.stats(), "vector_index_points": self._vectors.count()}

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._vectors.close()
