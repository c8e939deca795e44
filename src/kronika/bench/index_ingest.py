"""How fast an index takes items in bulk, embedding excluded (``kronika bench scale``).

The items and vectors of a benchmark's index are copied into a fresh, empty index of
the same kind: every vector (``store_embeddings`` in batches), then every source
(``replace_sources``, files of about 2,000 items together, as a sync writes them).
What is timed is the index alone: no Markdown is parsed and nothing is embedded.
Above ``ann_threshold`` the copy's vector graph (HNSW) is built after the load and
timed apart.
"""

from __future__ import annotations

import time
from typing import Any

from kronika import Vector
from kronika.testing import SourceRows, empty_index_like

_BATCH = 2_000


def index_ingest(index: Any, agent: str, ann_threshold: int) -> dict[str, Any]:
    """Items per second of a bulk load of ``agent``'s items into an empty index like
    ``index`` (a memory's SQLite or PostgreSQL index, :func:`kronika.testing.empty_index_like`),
    and the seconds its vector graph then takes (None below the threshold)."""
    points = index.vector_points()
    vectors: dict[str, Vector] = {p.text_hash: p.vector for p in points}
    hash_of = {p.item.id: p.text_hash for p in points}
    states = index.source_states(agent)
    sources = [(states[path], index.source_items(agent, path)) for path in sorted(states)]
    items = sum(len(found) for _, found in sources)
    with empty_index_like(index, ann_threshold=ann_threshold) as copy:
        began = time.perf_counter()
        pending = list(vectors.items())
        for start in range(0, len(pending), _BATCH):
            copy.store_embeddings(dict(pending[start : start + _BATCH]))
        batch: list[SourceRows] = []
        held = 0
        for n, (state, found) in enumerate(sources):
            batch.append(SourceRows(state, found, [hash_of.get(i.id, "") for i in found]))
            held += len(found)
            if held >= _BATCH or n == len(sources) - 1:
                copy.replace_sources(batch)
                batch, held = [], 0
        load_s = time.perf_counter() - began
        graph_s: float | None = None
        wait = getattr(copy, "wait_for_vector_graph", None)
        if wait is not None and ann_threshold > 0 and items >= ann_threshold:
            began = time.perf_counter()
            graph_s = time.perf_counter() - began if wait(None) else None
    return {
        "bulk_items": items,
        "bulk_s": load_s,
        "bulk_items_per_s": items / load_s if load_s else 0.0,
        "bulk_graph_s": graph_s,
    }
