"""Plain floors for the write benchmarks: the same durable text + vector writes done
the plainest way, measured in the same run as kronika (``kronika bench writes`` and
``team-writes``), so a ratio kronika/floor holds even when the machine's load moves
the absolute times.

* :func:`sqlite_floor`: one SQLite file (WAL, ``synchronous=FULL``) with an FTS5 table
  and a vectors table; one transaction per call (both rows, one commit), and one
  transaction for a batch.
* :func:`postgres_floor`: one table with a ``tsvector`` column under a GIN index and a
  pgvector ``vector`` column under an HNSW index (pgvector's defaults, m 16,
  ef_construction 64, as kronika's); one ``INSERT`` + ``COMMIT`` per call, a batch as
  ``executemany`` in one transaction; and for recall, per question, a keyword query on
  the GIN index and a vector query on the HNSW index, ``k`` rows each.

Each is given its texts; vectors come from the same :class:`FixedVectors` kronika is
given in these benchmarks (a vector from the text's hash), made inside each timed call
as kronika makes them. Nothing here imports kronika's stores: only sqlite3, psycopg
and numpy.
"""

from __future__ import annotations

import re
import sqlite3
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kronika.bench._runtime import timed_calls
from kronika.bench.fixed import FixedVectors

TEXT_SEARCH = "english"
"""The floor's PostgreSQL text search configuration (stems, drops stop words: "what",
"did", "the" of a question would otherwise match nearly every row)."""
EF_SEARCH_MARGIN = 40
"""The floor's ``hnsw.ef_search`` is ``k`` plus this, as kronika's default
``postgres_hnsw_search_margin`` asks."""


def _rate(seconds: Sequence[float]) -> float:
    return 1.0 / statistics.median(seconds) if seconds else 0.0


def _batch_rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else 0.0


# ------------------------------------------------------------------------ SQLite
def sqlite_floor(
    folder: Path,
    stored: Sequence[str],
    new: Sequence[str],
    batch: Sequence[str],
    *,
    budget_s: float,
) -> dict[str, Any]:
    """``stored`` loaded (not timed); then ``new`` one per transaction (each durable
    when it returns, at most ``budget_s`` seconds), then ``batch`` in one transaction."""
    vectors = FixedVectors()
    db = sqlite3.connect(folder / "floor.sqlite", isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE VIRTUAL TABLE fts USING fts5(text)")
        db.execute("CREATE TABLE vectors(id INTEGER PRIMARY KEY, vector BLOB NOT NULL)")

        def insert(texts: Sequence[str]) -> None:
            made = vectors.embed_documents(texts)  # one call per write, as kronika asks
            db.execute("BEGIN")
            for text, vector in zip(texts, made, strict=True):
                row = db.execute("INSERT INTO fts(text) VALUES (?)", (text,)).lastrowid
                db.execute("INSERT INTO vectors(id, vector) VALUES (?, ?)", (row, vector.tobytes()))
            db.execute("COMMIT")

        if stored:
            insert(stored)
        cpu: list[float] = []
        single = timed_calls(lambda n: insert([new[n]]), len(new), budget_s, cpu)
        began, cpu_at = time.perf_counter(), time.process_time()
        insert(batch)
        batch_s = time.perf_counter() - began
        batch_cpu = time.process_time() - cpu_at
    finally:
        db.close()
    return {
        "size": len(stored),
        "calls": len(single),
        "per_call_per_s": _rate(single),
        "per_call_cpu_ms": 1000 * cpu[0] / len(single) if single else 0.0,
        "batch": len(batch),
        "batch_items_per_s": _batch_rate(len(batch), batch_s),
        "batch_cpu_items_per_s": _batch_rate(len(batch), batch_cpu),
    }


# -------------------------------------------------------------------- PostgreSQL
def _literal(vector: np.ndarray[Any, Any]) -> str:
    """A vector as pgvector's text form (no client-side pgvector package needed)."""
    return "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"


def _or_query(question: str) -> str:
    """The words of ``question`` joined with ``|`` for ``to_tsquery``: any of them."""
    return " | ".join(re.findall(r"[^\W_]+", question.lower())) or "nothing"


def postgres_floor(
    url: str,
    stored: Sequence[str],
    new: Sequence[str],
    batch: Sequence[str],
    questions: Sequence[str],
    *,
    budget_s: float,
    k: int = 10,
    hnsw: tuple[int, int] = (16, 64),
) -> dict[str, Any]:
    """On the empty database at ``url``: ``stored`` loaded and indexed (not timed),
    then ``new`` one ``INSERT`` + ``COMMIT`` each (at most ``budget_s`` seconds), then
    each of ``questions`` asked (a keyword query and a vector query, ``k`` rows each;
    the first one, untimed, warms the connection), then ``batch`` in one transaction."""
    import psycopg

    vectors = FixedVectors()
    dim = vectors.dim
    with psycopg.connect(url) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(
            "CREATE TABLE floor_items (id bigserial PRIMARY KEY, body text NOT NULL,"
            f" tsv tsvector GENERATED ALWAYS AS (to_tsvector('{TEXT_SEARCH}', body)) STORED,"
            f" embedding vector({dim}) NOT NULL)"
        )
        # the vectors in the row, as kronika keeps them: out of line (TOAST, where a
        # 512-dimension vector goes by default) the table looks small to the planner,
        # which then reads every vector instead of walking the HNSW index (50 ms at
        # 10,000 rows, against about 2)
        conn.execute("ALTER TABLE floor_items ALTER COLUMN embedding SET STORAGE MAIN")
        if stored:
            with conn.cursor().copy("COPY floor_items (body, embedding) FROM STDIN") as copy:
                for text, vector in zip(stored, vectors.embed_documents(stored), strict=True):
                    copy.write_row((text, _literal(vector)))
        began = time.perf_counter()
        # room to build the HNSW graph in memory (setup, not timed: with the default
        # 64 MB, 100,000 vectors of 512 dimensions took 9 minutes on a busy 2-core machine)
        conn.execute("SET maintenance_work_mem = '512MB'")
        conn.execute("CREATE INDEX floor_items_tsv ON floor_items USING gin (tsv)")
        conn.execute(
            "CREATE INDEX floor_items_embedding ON floor_items USING hnsw"
            f" (embedding vector_cosine_ops) WITH (m = {hnsw[0]}, ef_construction = {hnsw[1]})"
        )
        conn.commit()
        conn.execute("ANALYZE floor_items")
        conn.commit()
        index_s = time.perf_counter() - began
        insert = "INSERT INTO floor_items (body, embedding) VALUES (%s, %s::vector)"

        def one(n: int) -> None:
            (vector,) = vectors.embed_documents([new[n]])
            conn.execute(insert, (new[n], _literal(vector)))
            conn.commit()

        cpu: list[float] = []
        single = timed_calls(one, len(new), budget_s, cpu)
        conn.execute(f"SET hnsw.ef_search = {k + EF_SEARCH_MARGIN}")
        # the queries walk their indexes (GIN, HNSW) at every size: below a few
        # thousand rows the planner would rather read every row (an exact scan of the
        # vectors took 5-7 ms at 1,000 rows on a busy machine)
        conn.execute("SET enable_seqscan = off")
        conn.commit()
        # k written into the text: with a LIMIT given as a parameter, a generic plan of
        # the prepared statement (psycopg prepares after five runs) guesses a tenth of
        # the table and reads every vector
        keyword = (
            f"SELECT id FROM floor_items, to_tsquery('{TEXT_SEARCH}', %s) q WHERE tsv @@ q"
            f" ORDER BY ts_rank(tsv, q) DESC LIMIT {int(k)}"
        )
        nearest = f"SELECT id FROM floor_items ORDER BY embedding <=> %s::vector LIMIT {int(k)}"
        asked: list[float] = []
        by_words: list[float] = []
        found: list[int] = []
        for n, question in enumerate(questions):
            words, vector = _or_query(question), _literal(vectors.embed_query(question))
            at = time.perf_counter()
            hits = conn.execute(keyword, (words,)).fetchall()
            half = time.perf_counter()
            hits += conn.execute(nearest, (vector,)).fetchall()
            conn.commit()
            if n:  # the first question warms the connection and the caches
                asked.append(time.perf_counter() - at)
                by_words.append(half - at)
                found.append(len(hits))
        texts = list(batch)
        began, cpu_at = time.perf_counter(), time.process_time()
        made = vectors.embed_documents(texts)
        rows = [(text, _literal(vector)) for text, vector in zip(texts, made, strict=True)]
        with conn.cursor() as cur:
            cur.executemany(insert, rows)
        conn.commit()
        batch_s = time.perf_counter() - began
        batch_cpu = time.process_time() - cpu_at
        (count,) = conn.execute("SELECT count(*) FROM floor_items").fetchone() or (0,)
    return {
        "size": len(stored),
        "index_s": index_s,
        "calls": len(single),
        "per_call_per_s": _rate(single),
        "median_ms": 1000 * statistics.median(single) if single else 0.0,
        "per_call_cpu_ms": 1000 * cpu[0] / len(single) if single else 0.0,
        "questions": len(asked),
        "recall_p50_ms": 1000 * statistics.median(asked) if asked else 0.0,
        "recall_keyword_p50_ms": 1000 * statistics.median(by_words) if by_words else 0.0,
        "recall_rows": statistics.fmean(found) if found else 0.0,
        "batch": len(texts),
        "batch_items_per_s": _batch_rate(len(texts), batch_s),
        "batch_cpu_items_per_s": _batch_rate(len(texts), batch_cpu),
        "rows": int(count),
    }
