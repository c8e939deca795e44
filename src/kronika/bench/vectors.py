"""Vector search with Qdrant beside the built-in vectors, on the corpus of ``bench scale``.

For each size N the synthetic chat corpus of :mod:`kronika.bench.scale` is imported
once (embedding included). Then, on the same workspace and the same queries (their
vectors computed once, so embedding is excluded everywhere):

* **built-in**: the SQLite index's vector search (exact below ``ann_threshold``, the
  HNSW graph from it on, built and timed first) and a whole hybrid ``recall``;
* **qdrant**: the workspace opened again with ``qdrant_path`` (the client's local mode
  in a folder beside it): filling the new collection is timed, then the same vector
  searches and recalls.

Each query is timed ``repeats`` times and its median kept; p50/p95 are over queries.
Recall@10 is the share of the exact top 10 (cosine, numpy over every vector, same
agent filter) that each search returns. A Qdrant server (HNSW, payload indexes) is not
measured here: none can run on this machine.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from kronika import RecallFilter, Settings, Vector
from kronika.bench._runtime import Progress, embedder_id, peak_rss_mb
from kronika.bench.metrics import percentile
from kronika.bench.report import table
from kronika.bench.scale import TURNS_PER_SESSION, synthetic_queries, synthetic_sessions

_AGENT = "scale"


def _timed(calls: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """Median milliseconds of each call over ``repeats`` runs."""
    out = []
    for call in calls:
        runs = []
        for _ in range(repeats):
            began = time.perf_counter()
            call()
            runs.append((time.perf_counter() - began) * 1000.0)
        out.append(statistics.median(runs))
    return out


def _exact_top10(
    matrix: np.ndarray, ids: Sequence[str], vectors: Sequence[Vector]
) -> list[set[str]]:
    tops = []
    for vector in vectors:
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        best = np.argsort(-scores, kind="stable")[:10]
        tops.append({ids[i] for i in best})
    return tops


def _measure(
    memory: Any,
    vectors: Sequence[Vector],
    queries: Sequence[str],
    exact: list[set[str]],
    repeats: int,
    now: datetime,
) -> dict[str, float]:
    flt = RecallFilter(agents=(_AGENT,))
    index = memory.index
    found = [[i for i, _ in index.search_vector(v, flt, 10)] for v in vectors]
    recall10 = statistics.fmean(
        len(set(f) & e) / max(len(e), 1) for f, e in zip(found, exact, strict=True)
    )
    search = _timed([partial(index.search_vector, v, flt, 10) for v in vectors], repeats)
    recalls = _timed(
        [
            partial(
                memory.recall, q, agent=_AGENT, k=10, now=now, record_access=False, query_vector=v
            )
            for q, v in zip(queries, vectors, strict=True)
        ],
        repeats,
    )
    return {
        "recall_at_10": recall10,
        "search_p50_ms": percentile(search, 50),
        "search_p95_ms": percentile(search, 95),
        "recall_p50_ms": percentile(recalls, 50),
        "recall_p95_ms": percentile(recalls, 95),
    }


def _one_size(
    size: int,
    queries: Sequence[str],
    *,
    repeats: int,
    settings: Settings,
    progress: Progress | None,
    workdir: Path,
) -> dict[str, Any]:
    from kronika import build_memory

    home = workdir / f"vectors-{size}"
    base = settings.with_overrides(home=home, qdrant_url="", qdrant_path="")
    now = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=size // TURNS_PER_SESSION + 1)
    row: dict[str, Any] = {"size": size}
    with build_memory(base, create=True) as memory:
        began = time.perf_counter()
        if memory.count(agent=_AGENT) if _AGENT in memory.agents() else 0:
            row["ingest_s"] = None
        else:
            memory.import_sessions(
                _AGENT,
                synthetic_sessions(size),
                progress=(lambda d, t: progress(f"ingest {size}", d, t)) if progress else None,
            )
            row["ingest_s"] = time.perf_counter() - began
        row["embedder"] = embedder_id(memory)
        vectors = [memory.embedder.embed_query(q) for q in queries]
        index: Any = memory.index  # the SQLite index
        points = [p for p in index.vector_points(None) if p.item.agent == _AGENT]
        ids = [p.item.id for p in points]
        matrix = np.stack([np.asarray(p.vector, dtype=np.float32) for p in points])
        del points
        exact = _exact_top10(matrix, ids, vectors)
        del matrix
        began = time.perf_counter()
        wait = getattr(memory.index, "wait_for_vector_graph", None)
        graph = bool(wait(None)) if wait is not None else False
        row["graph_s"] = time.perf_counter() - began if graph else None
        if progress:
            progress(f"built-in {size}", 0, 0)
        memory.recall(queries[0], agent=_AGENT, now=now, record_access=False)  # warm-up
        row["builtin"] = _measure(memory, vectors, queries, exact, repeats, now)
    qdrant = base.with_overrides(qdrant_path="qdrant-local")
    if progress:
        progress(f"qdrant fill {size}", 0, 0)
    began = time.perf_counter()
    with build_memory(qdrant) as memory:
        row["qdrant_open_fill_s"] = time.perf_counter() - began
        wrapped: Any = memory.index  # IndexWithVectors
        row["qdrant_points"] = wrapped.vectors.count()
        if progress:
            progress(f"qdrant {size}", 0, 0)
        memory.recall(queries[0], agent=_AGENT, now=now, record_access=False)  # warm-up
        row["qdrant"] = _measure(memory, vectors, queries, exact, repeats, now)
    row["peak_rss_mb"] = peak_rss_mb()
    return row


def run_vectors(
    sizes: Sequence[int] = (10_000, 100_000),
    *,
    queries: int = 50,
    repeats: int = 3,
    settings: Settings | None = None,
    progress: Progress | None = None,
    workdir: Path | None = None,
) -> dict[str, Any]:
    """Qdrant's local mode and the built-in vectors on the same corpus and queries.

    ``workdir`` keeps each size's workspace (``workdir/vectors-<size>``) and reuses it:
    the import is then skipped and the collection refilled.
    """
    texts = synthetic_queries(queries)
    chosen = settings or Settings()
    rows = []
    with tempfile.TemporaryDirectory(prefix="kronika-bench-") as tmp:
        where = workdir or Path(tmp)
        for n, size in enumerate(sizes):
            if progress:
                progress(f"size {size}", n, len(sizes))
            if workdir is not None:  # a reused workspace gets a new collection every run
                import shutil

                shutil.rmtree(where / f"vectors-{size}" / "qdrant-local", ignore_errors=True)
            rows.append(
                _one_size(
                    size,
                    texts,
                    repeats=repeats,
                    settings=chosen,
                    progress=progress,
                    workdir=where,
                )
            )
    results: dict[str, Any] = {
        "benchmark": "vectors",
        "dataset": "synthetic chat corpus (seeded, as bench scale)",
        "queries": queries,
        "repeats": repeats,
        "embedder": rows[0]["embedder"] if rows else None,
        "sizes": rows,
    }
    results["headline"] = {
        f"{engine}_{key}@{row['size']}": float(row[engine][key])
        for row in rows
        for engine in ("builtin", "qdrant")
        for key in ("recall_at_10", "search_p50_ms", "search_p95_ms", "recall_p95_ms")
    }
    cells = []
    for row in rows:
        for engine in ("builtin", "qdrant"):
            got = row[engine]
            if engine == "builtin":
                setup = f"graph {row['graph_s']:.1f} s" if row["graph_s"] else "exact"
            else:
                setup = f"open + fill {row['qdrant_open_fill_s']:.1f} s"
            cells.append(
                [
                    f"{row['size']:,}",
                    "built-in" if engine == "builtin" else "Qdrant local",
                    setup,
                    f"{got['recall_at_10']:.3f}",
                    f"{got['search_p50_ms']:.1f}",
                    f"{got['search_p95_ms']:.1f}",
                    f"{got['recall_p50_ms']:.1f}",
                    f"{got['recall_p95_ms']:.1f}",
                ]
            )
    results["tables"] = [
        table(
            f"Vector search, built-in vs Qdrant local mode (top 10, {queries} queries x "
            f"{repeats}, embedding excluded)",
            [
                "items",
                "vectors in",
                "set-up",
                "recall@10 vs exact",
                "vector search p50 ms",
                "p95 ms",
                "hybrid recall p50 ms",
                "p95 ms",
            ],
            cells,
        )
    ]
    return results
