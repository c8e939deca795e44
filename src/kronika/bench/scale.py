"""Speed at scale on a deterministic synthetic chat corpus.

For each size N: N short chat-like sentences (seeded word lists, so every run and
every machine sees the same text) are stored as sessions of 100 turns and imported
in one call (ingest throughput = N / seconds, embedding included). Then ``queries``
questions built from the same vocabulary are recalled (top 10, hybrid,
``record_access=False``): once embedding the query inline, once with a precomputed
``query_vector`` (embedding excluded). Each query is timed ``repeats`` times and its
median kept; p50/p95 are over queries. The machine is shared and noisy, so only
medians, high percentiles and ratios are reported.

The first two recalls after opening are timed apart, with the opening itself: they
load what recall keeps in memory (from the copies saved beside a reused index, see
:mod:`kronika.stores.sqlite.saved`, or from SQLite), which is what a restart costs.

Above ``ann_threshold`` items the vector graph is built (and timed) before the
queries, since searches stay exact until it is ready; its recall is reported as the
share of the exact top 10 and top 100 (by cosine, same filter) that the graph-backed
search also returns. With ``workdir`` the workspace is kept there, and a later run
on the same folder and size skips the import (ingest is then reported as reused).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kronika import Embedder, Mode, RecallFilter, SessionRecord, Settings, TurnRecord
from kronika.bench._runtime import (
    BenchMemory,
    Progress,
    bench_memory,
    embedder_id,
    peak_rss_mb,
    settings_summary,
)
from kronika.bench.index_ingest import index_ingest
from kronika.bench.metrics import percentile
from kronika.bench.report import table

_NAMES = [
    "Ada",
    "Bruno",
    "Chen",
    "Dana",
    "Emil",
    "Farah",
    "Gosia",
    "Hugo",
    "Ines",
    "Jonas",
    "Kasia",
    "Luis",
    "Maya",
    "Nadia",
    "Omar",
    "Pia",
]
_VERBS = [
    "repaired",
    "bought",
    "painted",
    "sold",
    "borrowed",
    "cooked",
    "planted",
    "visited",
    "booked",
    "cancelled",
    "photographed",
    "described",
    "recommended",
    "forgot",
    "found",
    "lost",
    "ordered",
    "cleaned",
    "measured",
    "shared",
]
_ADJECTIVES = [
    "blue",
    "old",
    "tiny",
    "noisy",
    "vintage",
    "spare",
    "electric",
    "wooden",
    "broken",
    "shiny",
    "cheap",
    "rare",
    "heavy",
    "folding",
    "red",
    "quiet",
]
_NOUNS = [
    "bicycle",
    "kettle",
    "guitar",
    "laptop",
    "tent",
    "camera",
    "sofa",
    "lamp",
    "printer",
    "kayak",
    "telescope",
    "piano",
    "drone",
    "jacket",
    "garden",
    "ticket",
    "recipe",
    "notebook",
    "scooter",
    "aquarium",
]
_PLACES = [
    "near the harbor",
    "at the market",
    "in Lisbon",
    "at grandma's house",
    "in the office",
    "at the lake",
    "in Kraków",
    "downtown",
    "at the festival",
    "in the garage",
    "at the station",
    "in Valencia",
]
_TIMES = [
    "on Monday",
    "last weekend",
    "in March",
    "yesterday",
    "before lunch",
    "after the storm",
    "in 2021",
]
_TAILS = [
    "and it went well",
    "but it took ages",
    "for the second time",
    "with a friend",
    "because of a discount",
    "without telling anyone",
    "just for fun",
]

TURNS_PER_SESSION = 100


def synthetic_sentence(rng: random.Random) -> str:
    """One short chat-like sentence from the seeded vocabulary."""
    return (
        f"{rng.choice(_NAMES)} {rng.choice(_VERBS)} the {rng.choice(_ADJECTIVES)} "
        f"{rng.choice(_NOUNS)} {rng.choice(_PLACES)} {rng.choice(_TIMES)} "
        f"{rng.choice(_TAILS)} (note {rng.randrange(100_000)})."
    )


def synthetic_sessions(size: int, *, seed: int = 7) -> Iterator[SessionRecord]:
    """``size`` turns in sessions of 100, one session a day from 2024-01-01 (deterministic)."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
    for index, first in enumerate(range(0, size, TURNS_PER_SESSION)):
        count = min(TURNS_PER_SESSION, size - first)
        session_id = f"scale-{index:05d}"
        turns = tuple(
            TurnRecord(
                turn_id=f"{session_id}_{n + 1}",
                speaker="user" if n % 2 == 0 else "assistant",
                content=synthetic_sentence(rng),
            )
            for n in range(count)
        )
        yield SessionRecord(session_id, start + timedelta(days=index), turns, source="synthetic")


def synthetic_queries(count: int, *, seed: int = 11) -> list[str]:
    """Questions in the corpus' vocabulary (what someone did with something, somewhere)."""
    rng = random.Random(seed)
    return [
        f"what did {rng.choice(_NAMES)} do with the {rng.choice(_ADJECTIVES)} "
        f"{rng.choice(_NOUNS)} {rng.choice(_PLACES)}?"
        for _ in range(count)
    ]


def _time_queries(
    mem: BenchMemory,
    queries: Sequence[str],
    vectors: Sequence[Any] | None,
    repeats: int,
    mode: Mode,
    now: datetime,
) -> list[float]:
    per_query: list[float] = []
    for i, query in enumerate(queries):
        runs = []
        for _ in range(repeats):
            began = time.perf_counter()
            mem.recall(
                query,
                agent="scale",
                k=10,
                mode=mode,
                now=now,
                record_access=False,
                query_vector=vectors[i] if vectors is not None else None,
            )
            runs.append((time.perf_counter() - began) * 1000.0)
        per_query.append(statistics.median(runs))
    return per_query


def _graph(mem: BenchMemory) -> dict[str, Any]:
    """Build the vector graph if the index is large enough; its build time (None: not used)."""
    index = getattr(mem, "index", None)
    wait = getattr(index, "wait_for_vector_graph", None)
    if wait is None:
        return {"graph_s": None}
    began = time.perf_counter()
    used = bool(wait(None))
    return {"graph_s": time.perf_counter() - began if used else None}


def _graph_recall(mem: BenchMemory, vectors: Sequence[Any] | None) -> dict[str, float | None]:
    """Share of the exact top 10 / top 100 the graph-backed vector search also returns
    (the exact search is the same index opened without its graph,
    :func:`kronika.testing.exact_index_like`)."""
    from kronika.testing import exact_index_like

    index = getattr(mem, "index", None)
    if vectors is None or index is None or index.stats()["items"] == 0:
        return {"graph_recall_10": None, "graph_recall_100": None}
    flt = RecallFilter(agents=("scale",))
    hits = {10: 0.0, 100: 0.0}
    with exact_index_like(index) as exact:
        if exact is None:
            return {"graph_recall_10": None, "graph_recall_100": None}
        for vector in vectors:
            fast = [i for i, _ in index.search_vector(vector, flt, 100)]
            slow = [i for i, _ in exact.search_vector(vector, flt, 100)]
            for k in hits:
                hits[k] += len(set(fast[:k]) & set(slow[:k])) / max(len(slow[:k]), 1)
    return {f"graph_recall_{k}": v / len(vectors) for k, v in hits.items()}


def _one_size(
    size: int,
    queries: Sequence[str],
    *,
    mode: Mode,
    repeats: int,
    settings: Settings | None,
    embedder: Embedder | None,
    progress: Progress | None,
    workdir: Path | None = None,
    index: str = "sqlite",
) -> dict[str, Any]:
    home = None if workdir is None else workdir / f"scale-{size}"
    if home is not None and index != "sqlite":
        home = home.with_name(f"{home.name}-{index.partition('=')[0]}")
    # a PostgreSQL index lives in a fresh database: its workspace is always ingested anew
    reuse = home is not None and index == "sqlite" and (home / "index.sqlite").is_file()
    opening = time.perf_counter()
    with bench_memory(
        settings,
        workdir=home,
        memory=None,
        embedder=embedder,
        index=None if index == "sqlite" else index,
    ) as (mem, used):
        open_s = time.perf_counter() - opening
        began = time.perf_counter()
        ingest_s: float | None = None
        if not reuse:
            mem.import_sessions(
                "scale",
                synthetic_sessions(size),
                progress=(lambda d, t: progress(f"ingest {size}", d, t)) if progress else None,
            )
            ingest_s = time.perf_counter() - began
        now = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=size // TURNS_PER_SESSION + 1)
        # The first two answers load what recall keeps in memory (the vectors, then the
        # keyword postings): from the copies saved beside a reused index, else from SQLite.
        answering = time.perf_counter()
        _time_queries(mem, queries[:2], None, 1, mode, now)
        first_answers_s = time.perf_counter() - answering
        if progress:
            progress(f"vector graph {size}", 0, 0)
        graph = _graph(mem)
        model = getattr(mem, "embedder", None)
        # Warm-up: the first calls load the model and fill caches; they are not measured.
        _time_queries(mem, queries[:3], None, 1, mode, now)
        with_embedding = _time_queries(mem, queries, None, repeats, mode, now)
        vectors = [model.embed_query(q) for q in queries] if model is not None else None
        without_embedding = _time_queries(mem, queries, vectors, repeats, mode, now)
        # what a process that imported and serves this memory held at most; the probes
        # below (a second ingest, an exact twin of the index) are the benchmark's own
        serving_rss = peak_rss_mb()
        held = getattr(mem, "index", None)
        threshold = (
            used.postgres_ann_threshold if index.startswith("postgres") else used.ann_threshold
        )
        bulk = {} if held is None else index_ingest(held, "scale", threshold)
        row = {
            "index": index.partition("=")[0],
            "size": size,
            "ingest_s": ingest_s,
            **bulk,
            "items_per_s": size / ingest_s if ingest_s else 0.0,
            "open_s": open_s,
            "first_answers_s": first_answers_s,
            **graph,
            **(_graph_recall(mem, vectors) if graph["graph_s"] is not None else {}),
            "p50_ms": percentile(with_embedding, 50),
            "p95_ms": percentile(with_embedding, 95),
            "p50_ms_no_embed": percentile(without_embedding, 50),
            "p95_ms_no_embed": percentile(without_embedding, 95),
            "peak_rss_mb": serving_rss,
            "peak_rss_mb_with_probes": peak_rss_mb(),
            "embedder": embedder_id(mem),
            "settings": settings_summary(used),
        }
    return row


def run_scale(
    sizes: Sequence[int] = (10_000, 100_000),
    *,
    queries: int = 100,
    repeats: int = 3,
    mode: Mode = "hybrid",
    embedder: Embedder | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
    workdir: Path | None = None,
    indexes: Sequence[str] = ("sqlite",),
) -> dict[str, Any]:
    """Ingest throughput, recall latency and peak memory at each corpus size.

    ``indexes`` (``sqlite``, ``postgres``, ``postgres=URL``) are measured one after the
    other at each size, on the same corpus and queries, so their figures sit side by side;
    each row also has the index's own bulk load, embedding excluded (:mod:`.index_ingest`).

    ``embedder`` replaces the one ``settings.embedder`` names. Peak RSS is the
    process' high-water mark so far, so it can only grow from one size to the next.
    ``workdir`` keeps each size's workspace in ``workdir/scale-<size>`` and reuses it.
    """
    texts = synthetic_queries(queries)
    rows = []
    for n, size in enumerate(sizes):
        if progress:
            progress(f"size {size}", n, len(sizes))
        for index in indexes:
            rows.append(
                _one_size(
                    size,
                    texts,
                    mode=mode,
                    repeats=repeats,
                    settings=settings,
                    embedder=embedder,
                    progress=progress,
                    workdir=workdir,
                    index=index,
                )
            )
    results: dict[str, Any] = {
        "benchmark": "scale",
        "dataset": "synthetic chat corpus (seeded)",
        "mode": mode,
        "queries": queries,
        "repeats": repeats,
        "embedder": rows[0]["embedder"] if rows else None,
        "settings": rows[0]["settings"] if rows else {},
        "sizes": rows,
    }
    results["headline"] = {
        f"{key}@{row['size']}" + ("" if row["index"] == "sqlite" else f"@{row['index']}"): float(
            row[key]
        )
        for row in rows
        for key in (
            "items_per_s",
            "bulk_items_per_s",
            "first_answers_s",
            "graph_s",
            "graph_recall_10",
            "graph_recall_100",
            "p50_ms",
            "p95_ms",
            "p50_ms_no_embed",
            "p95_ms_no_embed",
            "peak_rss_mb",
            "peak_rss_mb_with_probes",
        )
        if row.get(key) is not None
    }
    results["tables"] = [
        table(
            f"Speed at scale ({mode}, top 10, {queries} queries x {repeats})",
            [
                "items",
                "ingest s",
                "items/s",
                "open + first 2 answers s",
                "p50 ms",
                "p95 ms",
                "p50 ms (no embed)",
                "p95 ms (no embed)",
                "embed share of p50",
                "graph build s",
                "graph recall@10 / @100",
                "bulk items/s (no embedding)",
                "bulk graph s",
                "peak RSS MiB, serving / with probes",
                "index",
            ],
            [
                [
                    f"{row['size']:,}",
                    "reused" if row["ingest_s"] is None else f"{row['ingest_s']:.1f}",
                    f"{row['items_per_s']:.0f}" if row["ingest_s"] else "-",
                    f"{row['open_s'] + row['first_answers_s']:.1f}",
                    f"{row['p50_ms']:.1f}",
                    f"{row['p95_ms']:.1f}",
                    f"{row['p50_ms_no_embed']:.1f}",
                    f"{row['p95_ms_no_embed']:.1f}",
                    f"{1 - row['p50_ms_no_embed'] / row['p50_ms']:.0%}" if row["p50_ms"] else "-",
                    "-" if row.get("graph_s") is None else f"{row['graph_s']:.1f}",
                    "-"
                    if row.get("graph_recall_10") is None
                    else f"{row['graph_recall_10']:.3f} / {row['graph_recall_100']:.3f}",
                    f"{row['bulk_items_per_s']:.0f}" if row.get("bulk_items_per_s") else "-",
                    "-" if row.get("bulk_graph_s") is None else f"{row['bulk_graph_s']:.1f}",
                    f"{row['peak_rss_mb']:.0f} / {row['peak_rss_mb_with_probes']:.0f}",
                    row["index"],
                ]
                for row in rows
            ],
        )
    ]
    return results
