"""The PostgreSQL implementation of :class:`kronika.ports.ItemIndex` (tables ``idx_*``).

It behaves as the SQLite index does (the conformance tests run both): the same items,
filters, scores and caches, in a database that many workers share. Differences that
follow from the server, each deliberate:

* Concurrency: every write is one transaction. Writes to one source take a
  transaction-level advisory lock on it, so two workers replacing or appending to the
  same file queue instead of interleaving; a deadlock or a unique-key race with a
  worker writing another file (an id moving between files) is retried. Usage
  statistics are counted by ``INSERT … ON CONFLICT DO UPDATE``: no access is lost.
* Order within a source is ``pos`` (0, 1, 2…), not the row id: ids come from a
  sequence that concurrent writers share. A source's rows can therefore always be
  followed by appended ones (``SourceTail.at_end`` is true whenever it has rows).
* Vectors: the cache ``idx_embeddings`` keeps every model's; each item row holds the
  vector of this index's model (``vec``), so a search reads one table. One database
  serves one embedding model at a time: opening it with another model re-fills ``vec``
  from the cache. From ``ann_threshold`` items on, searches walk an HNSW index built
  in the background (:meth:`wait_for_vector_graph`); until it is ready they are exact.
* Forgetting: rows are deleted in the write's transaction, so no live table holds a
  forgotten item's text, vector or id once :meth:`drop_unused_embeddings` has run
  (it also drops the usage statistics of ids gone for good). The deleted tuples stay
  in the data files until VACUUM prunes them: that call runs a plain ``VACUUM`` of
  the tables that lost rows (``VACUUM FULL``, which rewrites the files, is
  :meth:`vacuum` with ``full=True``; it locks the tables).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from kronika.core.hubness import family
from kronika.core.model import MemoryItem, RecallFilter, layer_counts
from kronika.errors import IndexError_, StoreError
from kronika.ports import (
    CandidateRows,
    DayCount,
    FeatureRow,
    ScoreFeatures,
    SourceState,
    SourceTail,
    Vector,
    VectorPoint,
)
from kronika.stores.filters import to_epoch
from kronika.stores.postgres import search
from kronika.stores.postgres.candidates import FEATURES, ItemRows, neighbours_sql
from kronika.stores.postgres.connect import (
    connect,
    migrate,
    migrate_index,
    redact_url,
    scoped_url,
    shared_schema,
    unscoped_url,
)
from kronika.stores.postgres.copying import postings_copy_text
from kronika.stores.postgres.dialect import POSTGRES
from kronika.stores.postgres.index_rows import (
    COLUMNS,
    SELECT_ITEM,
    filter_clause,
    item_from_row,
    item_row,
)
from kronika.stores.postgres.lexical import Phrase, Tokenizer
from kronika.stores.postgres.recall_log import PostgresRecallLog, drop_forgotten
from kronika.stores.postgres.rewrite import run_locking
from kronika.stores.postgres.wal_scrub import scrub_wal
from kronika.stores.sql.day_counts import created_per_day
from kronika.stores.sql.rows import default_text_hash, feature_row, source_state, source_states
from kronika.stores.sql.terms import query_terms

log = logging.getLogger("kronika")
_INDEX_TABLES = (
    "idx_items, idx_terms, idx_embeddings, idx_usage, idx_sources, idx_corpus,"
    " recall_log, recall_log_items"
)
_RECORD_TABLES = ("record_documents", "record_items", "record_proposals", "record_audit")

ANN_THRESHOLD = 50_000  # the ann_threshold setting's default, as for SQLite
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
ITEMS_AHEAD = 10
"""Seeds whose neighbours' items :meth:`PostgresIndex.read_candidates` reads ahead."""
GRAPH_RECHECK_S = 30.0
"""Seconds a valid HNSW index is taken as still there (another model's worker may drop
it; a search then scans exactly, still right, until the next look)."""
_RETRIES = 30
_RETRY_STATES = {"40P01", "40001", "23505"}  # deadlock, serialization failure, unique key
_ID = 'COLLATE "C"'  # ids sort by code point, as Python sorts them

LEXICAL = ("bm25", "simple", "trigram")

T = TypeVar("T")


def _array(value: Any) -> Vector:
    """A vector read from the server as float32 (pgvector hands a ``Vector`` or an array)."""
    to_numpy = getattr(value, "to_numpy", None)
    found = to_numpy() if to_numpy is not None else value
    return np.asarray(found, dtype=np.float32)


class PostgresIndex:
    """Items, keyword postings, an embedding cache and usage statistics in PostgreSQL.

    ``url`` names the database (migrated on open). ``embedding_model`` and ``dim`` as
    for :class:`kronika.stores.sqlite.SqliteIndex`; ``ann_threshold`` items and more
    (0: never) make vector search walk an HNSW index, built by a background thread
    (``ann_background`` False: by the searching one). ``lexical`` ``bm25`` scores
    keywords as the SQLite index does; ``simple`` (``ts_rank``) and ``trigram`` are the
    PostgreSQL-native alternatives it was measured against (``docs/postgres.md``).
    ``tenant`` names whose index it is: each tenant's tables live in a schema of their
    own (:func:`~kronika.stores.postgres.connect.index_schema`), so tenants of one
    database never read or write each other's rows.
    """

    def __init__(
        self,
        url: str,
        *,
        embedding_model: str,
        dim: int,
        ann_threshold: int = ANN_THRESHOLD,
        ann_background: bool = True,
        lexical: str = "bm25",
        tenant: str = "default",
    ) -> None:
        if lexical not in LEXICAL:
            raise ValueError(f"lexical must be one of {', '.join(LEXICAL)}; got {lexical!r}")
        self._lexical = lexical
        self._url = url
        self._model = embedding_model
        self._dim = dim
        self._threshold = ann_threshold
        self._background = ann_background
        self._lock = threading.RLock()
        self._tokenizer = Tokenizer()
        self._postings = search.PostingsCache()
        self._maybe_unused: set[str] = set()  # text hashes of rows replaced or removed
        self._vanished: set[str] = set()  # ids of rows deleted and not written again
        self._building: threading.Thread | None = None
        self._unanalyzed = 0  # rows this index wrote since it last ran ANALYZE
        self._graph_seen_until = 0.0  # the HNSW index was valid; asked again after this
        self._graph_settings: str | None = None  # the HNSW settings of the connection
        self._tenant = tenant
        url = unscoped_url(url)  # this index's own URL, given back: scoped again below
        with connect(url, autocommit=True) as opening:
            migrate(opening)
            self._schema, _ = migrate_index(opening, tenant)
            shared = shared_schema(opening)
        self._url = scoped_url(url, self._schema, shared)  # every connection of this index
        self._conn = connect(self._url, autocommit=True)
        try:
            self._adopt_model()
        except BaseException:
            self._conn.close()
            raise

    # -- connection -------------------------------------------------------------------

    @property
    def embedding_model(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def url(self) -> str:
        """The database's URL, with this tenant's schema first on the search path."""
        return self._url

    @property
    def tenant(self) -> str:
        return self._tenant

    @property
    def schema(self) -> str:
        """The schema holding this tenant's index tables."""
        return self._schema

    def close(self) -> None:
        building = self._building
        if building is not None:
            building.join()
        with self._lock:
            self._tokenizer.close()
            self._conn.close()

    def __enter__(self) -> PostgresIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _reading(self) -> Iterator[Any]:
        """The connection, under the lock; the server's errors become :class:`IndexError_`."""
        import psycopg

        with self._lock:
            try:
                yield self._conn
            except psycopg.OperationalError as exc:
                raise StoreError(f"PostgreSQL at {redact_url(self._url)} failed: {exc}") from exc
            except psycopg.Error as exc:
                raise IndexError_(f"the PostgreSQL index cannot be used: {exc}") from exc

    def _write(self, work: Callable[[Any], T]) -> T:
        """``work(conn)`` in one transaction, retried when the server chose it as the
        victim of a deadlock or another worker won a race for the same key."""
        import psycopg

        for attempt in range(_RETRIES):
            with self._reading() as conn:
                try:
                    with conn.transaction():
                        return work(conn)
                except psycopg.Error as exc:
                    if exc.sqlstate not in _RETRY_STATES or attempt == _RETRIES - 1:
                        raise
            # jittered exponential backoff: writers that collided do not collide again in step
            time.sleep(random.uniform(0, 0.005 * 2 ** min(attempt, 6)))
        raise AssertionError("unreachable")

    @staticmethod
    def _lock_source(conn: Any, agent: str, path: str) -> None:
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"idx\x1f{agent}\x1f{path}",)
        )

    def _adopt_model(self) -> None:
        """Make ``vec`` hold this model's vectors (a database serves one model at a time)."""
        wanted = f"{self._model}\x1f{self._dim}"

        def work(conn: Any) -> None:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('idx-model', 0))")
            row = conn.execute("SELECT value FROM idx_meta WHERE key = 'vector_model'").fetchone()
            if row is not None and row[0] == wanted:
                return
            # Another model's vectors are all replaced below: a graph of theirs (of any
            # dimension) is dropped and built again, not updated one row at a time.
            for (name,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
                " AND tablename = 'idx_items'"
                " AND indexname LIKE 'idx\\_items\\_hnsw\\_%%' AND (indexname != %s OR %s)",
                (self._hnsw_name, row is not None),
            ).fetchall():
                conn.execute(f'DROP INDEX IF EXISTS "{name}"')
            if row is not None:
                conn.execute(
                    "UPDATE idx_items AS i SET vec = (SELECT e.vec FROM idx_embeddings AS e"
                    " WHERE e.text_hash = i.text_hash AND e.model = %s"
                    " AND vector_dims(e.vec) = %s)",
                    (self._model, self._dim),
                )
            conn.execute(
                "INSERT INTO idx_meta (key, value) VALUES ('vector_model', %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (wanted,),
            )

        self._write(work)

    # -- sources and items ------------------------------------------------------------

    def source_states(self, agent: str) -> dict[str, SourceState]:
        with self._reading() as conn:
            return source_states(POSTGRES, conn, agent)

    def source_state(self, agent: str, path: str) -> SourceState | None:
        with self._reading() as conn:
            return source_state(POSTGRES, conn, agent, path)

    def replace_source(
        self,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str] | None = None,
    ) -> None:
        """Atomically replace every item of ``(state.agent, state.path)``: a repeated id
        keeps its first occurrence, an id indexed from another file moves here."""
        if text_hashes is not None and len(text_hashes) != len(items):
            raise ValueError("text_hashes must have one hash per item")
        unique: dict[str, tuple[MemoryItem, str]] = {}
        for n, item in enumerate(items):
            if item.id not in unique:
                given = text_hashes[n] if text_hashes is not None else None
                unique[item.id] = (item, given or default_text_hash(item))
        postings = self._tokenizer.items([it for it, _ in unique.values()])

        def work(conn: Any) -> None:
            self._lock_source(conn, state.agent, state.path)
            ids = list(unique)
            gone = conn.execute(
                "DELETE FROM idx_items WHERE (source_agent = %s AND source_path = %s)"
                " OR id = ANY(%s) RETURNING id, text_hash",
                (state.agent, state.path, ids),
            ).fetchall()
            self._insert(conn, state, 0, list(unique.values()), postings)
            self._upsert_source(conn, state)
            self._note_deleted(gone, set(ids))

        self._write(work)
        self._analyze_if_grown()

    def _analyze_if_grown(self) -> None:
        """ANALYZE the item and posting tables once this index has written as many rows
        as they held before (at least 1,000) since it last did: right after a bulk load
        the planner would otherwise guess, and autovacuum comes only later. Doubling
        keeps a load of n rows to about log2(n / 1,000) runs, each sampling at most
        30,000 rows, and the counts the planner sees within half of the truth."""
        if self._unanalyzed < 1_000:
            return
        with self._reading() as conn:
            (rows,) = conn.execute("SELECT coalesce(sum(n), 0) FROM idx_corpus").fetchone()
            if self._unanalyzed * 2 >= int(rows):
                conn.execute("ANALYZE idx_items, idx_terms")
                self._unanalyzed = 0

    def _note_deleted(self, gone: Iterable[tuple[str, str]], kept: set[str]) -> None:
        for item_id, text_hash in gone:
            self._maybe_unused.add(text_hash)
            if item_id not in kept:
                self._vanished.add(item_id)
            else:
                self._vanished.discard(item_id)

    @staticmethod
    def _upsert_source(conn: Any, state: SourceState) -> None:
        conn.execute(
            "INSERT INTO idx_sources (agent, path, content_hash, mtime_ns, size)"
            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (agent, path) DO UPDATE SET"
            " content_hash = excluded.content_hash, mtime_ns = excluded.mtime_ns,"
            " size = excluded.size",
            (state.agent, state.path, state.content_hash, state.mtime_ns, state.size),
        )

    def _insert(
        self,
        conn: Any,
        state: SourceState,
        first_pos: int,
        pairs: Sequence[tuple[MemoryItem, str]],
        postings: Sequence[Any],
    ) -> None:
        """COPY the rows (with their cached vectors) and their postings."""
        if not pairs:
            return
        self._unanalyzed += len(pairs)
        hashes = sorted({h for _, h in pairs})
        cached = dict(
            conn.execute(
                "SELECT text_hash, vec::text FROM idx_embeddings WHERE model = %s"
                " AND text_hash = ANY(%s) AND vector_dims(vec) = %s",
                (self._model, hashes, self._dim),
            ).fetchall()
        )
        rowids = [
            int(r)
            for (r,) in conn.execute(
                "SELECT nextval(pg_get_serial_sequence('idx_items', 'rowid'))"
                " FROM generate_series(1, %s)",
                (len(pairs),),
            ).fetchall()
        ]
        columns = ", ".join(("rowid", *COLUMNS, "vec"))
        with conn.cursor() as cur:
            with cur.copy(f"COPY idx_items ({columns}) FROM STDIN") as copy:
                for n, (item, text_hash) in enumerate(pairs):
                    row = item_row(item, state, first_pos + n, text_hash, postings[n].length)
                    copy.write_row((rowids[n], *row, cached.get(text_hash)))
            with cur.copy(
                "COPY idx_terms (term, item_rowid, agent, tenant, tf, pos, doc_len) FROM STDIN"
            ) as copy:
                copy.write(postings_copy_text(pairs, rowids, postings))

    def remove_source(self, agent: str, path: str) -> None:
        def work(conn: Any) -> None:
            self._lock_source(conn, agent, path)
            gone = conn.execute(
                "DELETE FROM idx_items WHERE source_agent = %s AND source_path = %s"
                " RETURNING id, text_hash",
                (agent, path),
            ).fetchall()
            conn.execute("DELETE FROM idx_sources WHERE agent = %s AND path = %s", (agent, path))
            self._note_deleted(gone, set())

        self._write(work)

    def source_tail(self, agent: str, path: str, last: int = 2) -> SourceTail | None:
        """The end of one indexed file; rows can always follow it (``at_end``)."""
        with self._reading() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            found = conn.execute(
                "SELECT content_hash, mtime_ns, size FROM idx_sources"
                " WHERE agent = %s AND path = %s",
                (agent, path),
            ).fetchone()
            if found is None:
                return None
            state = SourceState(agent, path, str(found[0]), int(found[1]), int(found[2]))
            (count,) = conn.execute(
                "SELECT count(*) FROM idx_items WHERE source_agent = %s AND source_path = %s",
                (agent, path),
            ).fetchone()
            rows = conn.execute(
                SELECT_ITEM.replace(" FROM idx_items", ", i.text_hash FROM idx_items")
                + " WHERE i.source_agent = %s AND i.source_path = %s ORDER BY i.pos DESC LIMIT %s",
                (agent, path, last),
            ).fetchall()
        rows.reverse()
        items = tuple(item_from_row(row[:-1]) for row in rows)
        hashes = tuple(str(row[-1]) for row in rows)
        return SourceTail(state, int(count), items, hashes, bool(rows))

    def append_to_source(
        self,
        expected: SourceState,
        state: SourceState,
        items: Sequence[MemoryItem],
        text_hashes: Sequence[str],
        *,
        vectors: Mapping[str, Vector] | None = None,
    ) -> bool:
        """Add ``items`` after the rows of a file the index holds as ``expected``, in one
        transaction; ``False`` (nothing written) when it does not, or an id is indexed.
        ``vectors`` are cached first (and again after, should another worker have
        dropped one as unused meanwhile)."""
        if vectors:
            self.store_embeddings(vectors)
        ids = [item.id for item in items]
        if len(set(ids)) != len(ids):
            return False
        pairs = list(zip(items, text_hashes, strict=True))
        postings = self._tokenizer.items(list(items))

        def work(conn: Any) -> bool:
            self._lock_source(conn, expected.agent, expected.path)
            found = conn.execute(
                "SELECT content_hash, mtime_ns, size FROM idx_sources"
                " WHERE agent = %s AND path = %s",
                (expected.agent, expected.path),
            ).fetchone()
            if found is None or tuple(found) != (
                expected.content_hash,
                expected.mtime_ns,
                expected.size,
            ):
                return False
            (last,) = conn.execute(
                "SELECT max(pos) FROM idx_items WHERE source_agent = %s AND source_path = %s",
                (expected.agent, expected.path),
            ).fetchone()
            if last is None:
                return False
            taken = conn.execute("SELECT 1 FROM idx_items WHERE id = ANY(%s) LIMIT 1", (ids,))
            if taken.fetchone():
                return False
            self._insert(conn, state, int(last) + 1, pairs, postings)
            conn.execute(
                "UPDATE idx_sources SET content_hash = %s, mtime_ns = %s, size = %s"
                " WHERE agent = %s AND path = %s",
                (state.content_hash, state.mtime_ns, state.size, state.agent, state.path),
            )
            return True

        done = self._write(work)
        self._analyze_if_grown()
        if done and vectors and (lost := self.embeddings_missing(vectors)):
            self.store_embeddings({h: vectors[h] for h in lost})
        return done

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
        return False  # rows are not patched here: the file is re-indexed whole

    def reset(self) -> None:
        """Forget every item and source (keeps the embedding cache and usage statistics)."""

        def work(conn: Any) -> None:
            conn.execute("TRUNCATE idx_terms, idx_items, idx_corpus, idx_sources")

        self._write(work)

    def recreate(self) -> str | None:
        """Start empty (nothing is kept aside: the server keeps its own storage sound)."""
        self.reset()
        return None

    def get_items(self, ids: Sequence[str]) -> list[MemoryItem]:
        """Items in the order of ``ids`` (unknown ids skipped), with usage statistics."""
        with self._reading() as conn:
            rows = conn.execute(f"{SELECT_ITEM} WHERE i.id = ANY(%s)", (list(set(ids)),))
            found = {item.id: item for item in map(item_from_row, rows)}
        return [found[i] for i in ids if i in found]

    def score_features(self, ids: Sequence[str]) -> ScoreFeatures:
        wanted = list(dict.fromkeys(ids))
        with self._reading() as conn:
            found = {r[0]: feature_row(r[1:]) for r in conn.execute(FEATURES, (wanted,))}
        return ScoreFeatures.from_rows({i: found[i] for i in wanted if i in found})

    def neighbours(
        self, ids: Sequence[str], flt: RecallFilter, window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """The other party's messages at most ``window`` places from each message in
        ``ids``, in the same source and session, passing ``flt``."""
        wanted = list(dict.fromkeys(ids))
        if window < 1 or not wanted:
            return {}
        sql, params = neighbours_sql(wanted, flt, window, features=False)
        found: dict[str, list[tuple[str, int]]] = {}
        with self._reading() as conn:
            for item_id, other, offset in conn.execute(sql, params):
                found.setdefault(item_id, []).append((other, int(offset)))
        return found

    def read_candidates(
        self, ids: Sequence[str], seeds: Sequence[str], flt: RecallFilter, window: int
    ) -> CandidateRows:
        """:meth:`neighbours` of ``seeds`` with their score features, the score features of
        ``ids``, and the items of ``seeds`` and of the best :data:`ITEMS_AHEAD` seeds'
        neighbours (which their answers often lift to the top): three statements in one
        round trip."""
        wanted = list(dict.fromkeys(seeds))
        links: dict[str, list[tuple[str, int]]] = {}
        features: dict[str, FeatureRow] = {}
        items_sql = f"{SELECT_ITEM} WHERE i.id = ANY(%s::text[]"
        items_params: list[object] = [wanted]
        with self._reading() as conn:
            with conn.pipeline():
                near = None
                if window >= 1 and wanted:
                    near = conn.execute(*neighbours_sql(wanted, flt, window, features=True))
                    ahead, ahead_params = neighbours_sql(
                        wanted[:ITEMS_AHEAD], flt, window, features=False
                    )
                    # one array of ids, so the ids' index finds the rows (an OR would scan)
                    items_sql += (
                        f" || ARRAY(SELECT x.other FROM ({ahead}) AS x (seed, other, step))"
                    )
                    items_params += ahead_params
                scored = conn.execute(FEATURES, (list(dict.fromkeys(ids)),))
                read = conn.execute(items_sql + ")", items_params)
            for item_id, other, offset, *row in near or ():
                links.setdefault(item_id, []).append((other, int(offset)))
                features[other] = feature_row(row)
            for item_id, *row in scored:
                features[item_id] = feature_row(row)
            items = ItemRows({str(row[0]): row for row in read})
        return CandidateRows(links, features, items)

    def list_items(
        self, flt: RecallFilter, *, limit: int | None = None, offset: int = 0
    ) -> list[MemoryItem]:
        """Items matching ``flt``, newest ``created_at`` first (ties by id)."""
        where, params = filter_clause(flt)
        sql = (
            f"{SELECT_ITEM} WHERE {where} ORDER BY i.created_at DESC, i.id {_ID} LIMIT %s OFFSET %s"
        )
        with self._reading() as conn:
            rows = conn.execute(sql, [*params, limit, offset])
            return [item_from_row(row) for row in rows]

    def source_items(self, agent: str, path: str) -> list[MemoryItem]:
        with self._reading() as conn:
            rows = conn.execute(
                f"{SELECT_ITEM} WHERE i.source_agent = %s AND i.source_path = %s ORDER BY i.pos",
                (agent, path),
            )
            return [item_from_row(row) for row in rows]

    def count_items(self, flt: RecallFilter) -> int:
        where, params = filter_clause(flt)
        with self._reading() as conn:
            found = conn.execute(f"SELECT count(*) FROM idx_items AS i WHERE {where}", params)
            (n,) = found.fetchone()
        return int(n)

    def agents(self) -> list[str]:
        with self._reading() as conn:
            found = conn.execute(
                "SELECT agent FROM (SELECT agent FROM idx_sources UNION"
                f" SELECT agent FROM idx_items) AS a ORDER BY agent {_ID}"
            ).fetchall()
        return [a for (a,) in found]

    def recall_log(self) -> PostgresRecallLog:
        return PostgresRecallLog(self._reading, self._write, self._tenant)

    def created_per_day(self, flt: RecallFilter, since: datetime) -> list[DayCount]:
        with self._reading() as conn:
            return created_per_day(POSTGRES, conn, flt, since)

    def meta_value(self, key: str) -> str | None:
        with self._reading() as conn:
            row = conn.execute("SELECT value FROM idx_meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta_value(self, key: str, value: str) -> None:
        def work(conn: Any) -> None:
            conn.execute(
                "INSERT INTO idx_meta (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

        self._write(work)

    def record_access(self, ids: Sequence[str], at: datetime) -> None:
        """Count one access per distinct id; ``last_accessed_at`` never moves backwards."""
        moment = to_epoch(at)
        unique = sorted(set(ids))  # one order for every worker: no deadlock between them
        if not unique:
            return

        def work(conn: Any) -> None:
            conn.execute(
                "INSERT INTO idx_usage AS u (item_id, access_count, last_accessed_at)"
                " SELECT id, 1, %s FROM unnest(%s::text[]) AS id ORDER BY id"
                " ON CONFLICT (item_id) DO UPDATE SET access_count = u.access_count + 1,"
                " last_accessed_at = greatest(u.last_accessed_at, excluded.last_accessed_at)",
                (moment, unique),
            )

        self._write(work)

    def restore_usage(self, rows: Sequence[tuple[str, int, datetime | None]]) -> None:
        """Set usage statistics as a backup recorded them (``0, None`` removes a row)."""
        kept = {i: (n, None if t is None else to_epoch(t)) for i, n, t in rows if n or t}
        removed = sorted({i for i, n, t in rows if not (n or t)})

        def work(conn: Any) -> None:
            if removed:
                conn.execute("DELETE FROM idx_usage WHERE item_id = ANY(%s)", (removed,))
            if kept:
                conn.cursor().executemany(
                    "INSERT INTO idx_usage (item_id, access_count, last_accessed_at)"
                    " VALUES (%s, %s, %s) ON CONFLICT (item_id) DO UPDATE SET"
                    " access_count = excluded.access_count,"
                    " last_accessed_at = excluded.last_accessed_at",
                    [(i, n, t) for i, (n, t) in sorted(kept.items())],
                )

        self._write(work)

    # -- embeddings -------------------------------------------------------------------

    def embeddings_missing(self, text_hashes: Iterable[str]) -> set[str]:
        wanted = list(dict.fromkeys(text_hashes))
        with self._reading() as conn:
            found = conn.execute(
                "SELECT text_hash FROM idx_embeddings WHERE model = %s AND text_hash = ANY(%s)"
                " AND vector_dims(vec) = %s",
                (self._model, wanted, self._dim),
            ).fetchall()
        return set(wanted) - {h for (h,) in found}

    def store_embeddings(self, vectors: Mapping[str, Vector]) -> None:
        """Cache one unit vector per text hash (replacing any old one) and give it to the
        items of that text."""
        rows: list[tuple[str, str, np.ndarray[Any, Any]]] = []
        for text_hash, vec in sorted(vectors.items()):
            flat = np.asarray(vec, dtype=np.float64).reshape(-1)
            if flat.size != self._dim:
                raise IndexError_(
                    f"embedding for {text_hash} has {flat.size} dimensions;"
                    f" model {self._model} has {self._dim}"
                )
            norm = float(np.linalg.norm(flat))
            rows.append((text_hash, self._model, (flat / norm if norm > 0 else flat).astype("<f4")))
        if not rows:
            return

        def work(conn: Any) -> None:
            conn.cursor().executemany(
                "INSERT INTO idx_embeddings (text_hash, model, vec) VALUES (%s, %s, %s)"
                " ON CONFLICT (text_hash, model) DO UPDATE SET vec = excluded.vec",
                rows,
            )
            conn.execute(
                "UPDATE idx_items AS i SET vec = e.vec FROM idx_embeddings AS e"
                " WHERE e.model = %s AND e.text_hash = ANY(%s) AND i.text_hash = e.text_hash"
                " AND i.vec IS DISTINCT FROM e.vec",
                (self._model, [r[0] for r in rows]),
            )

        self._write(work)

    def vector_points(self, text_hashes: Iterable[str] | None = None) -> list[VectorPoint]:
        """The items embedded from ``text_hashes`` (every item when ``None``) that have a
        vector, with it: what a vector index outside this database holds."""
        where = "" if text_hashes is None else " AND i.text_hash = ANY(%s)"
        params = () if text_hashes is None else (sorted(set(text_hashes)),)
        with self._reading() as conn:
            rows = conn.execute(
                SELECT_ITEM.replace(" FROM idx_items", ", i.text_hash, i.vec FROM idx_items")
                + f" WHERE i.vec IS NOT NULL{where} ORDER BY i.rowid",
                params,
            ).fetchall()
        return [VectorPoint(item_from_row(r[:-2]), str(r[-2]), _array(r[-1])) for r in rows]

    def drop_unused_embeddings(self, *, everywhere: bool = False) -> int:
        """Delete cached vectors no item uses any more (of the texts this index replaced or
        removed since the last call; ``everywhere``: of every text), and the usage
        statistics of ids gone for good; then VACUUM what lost rows. Returns how many
        vectors went."""
        with self._lock:
            candidates = sorted(self._maybe_unused)
            vanished = sorted(self._vanished)
            self._maybe_unused.clear()
            self._vanished.clear()
        unused = "NOT EXISTS (SELECT 1 FROM idx_items AS i WHERE i.text_hash = e.text_hash)"

        def work(conn: Any) -> tuple[int, int]:
            if everywhere:
                dropped = conn.execute(f"DELETE FROM idx_embeddings AS e WHERE {unused}").rowcount
            elif candidates:
                dropped = conn.execute(
                    f"DELETE FROM idx_embeddings AS e WHERE e.text_hash = ANY(%s) AND {unused}",
                    (candidates,),
                ).rowcount
            else:
                dropped = 0
            usage = 0
            if vanished:
                usage = conn.execute(
                    "DELETE FROM idx_usage AS u WHERE u.item_id = ANY(%s)"
                    " AND NOT EXISTS (SELECT 1 FROM idx_items AS i WHERE i.id = u.item_id)",
                    (vanished,),
                ).rowcount
                drop_forgotten(conn, self._tenant, vanished)  # their ids leave the recall log
            return int(dropped), int(usage)

        if not (everywhere or candidates or vanished):
            return 0
        dropped, _ = self._write(work)
        if vanished or dropped:
            self.vacuum()
        return dropped

    def vacuum(self, *, full: bool = False) -> None:
        """Prune the deleted rows of the index's tables from their data files, skipping
        a table another session holds a lock on (a graph build: autovacuum prunes it
        later); ``full``: rewrite the files, which locks the tables meanwhile."""
        with self._reading() as conn:
            options = "FULL" if full else "SKIP_LOCKED"
            conn.execute(f"VACUUM ({options}) {_INDEX_TABLES}")

    def compact_after_forget(self) -> list[str]:
        """After a forget: rewrite the data files of the index's tables and of the store
        of record's (``VACUUM FULL``: the deleted tuples' bytes go with the old files;
        the HNSW index is dropped first and built again in the background), sample
        their statistics again and rewrite ``pg_statistic`` (the planner keeps sampled
        column values there, the forgotten among them), then write over the WAL files
        that logged the forgotten text
        (:func:`~kronika.stores.postgres.wal_scrub.scrub_wal`: rounds of
        ``pg_switch_wal()`` and ``CHECKPOINT``). What the database role may not do, or
        the server keeps, is skipped; returns what was skipped and why."""
        began = time.perf_counter()
        notes: list[str] = []
        graph = self._drop_graph(notes)
        with self._reading() as conn:
            for table in (*_INDEX_TABLES.split(", "), *_RECORD_TABLES):
                # ANALYZE: the planner's statistics (pg_statistic) sample column values
                note = run_locking(conn, f"VACUUM (FULL, ANALYZE) {table}", table)
                notes += [note] if note else []
        # the statistics rows ANALYZE replaced, with their sampled values, are in its file
        if self._run("SELECT has_table_privilege('pg_catalog.pg_statistic', 'MAINTAIN')")[0][0]:
            self._run("VACUUM FULL pg_catalog.pg_statistic")
        else:
            notes.append(
                "pg_statistic not rewritten (the role lacks MAINTAIN on it, e.g. pg_maintain):"
                " it may keep sampled values of forgotten rows"
            )
        rewritten = time.perf_counter()
        if graph:  # built again from the rows left, without locking them
            if self._building is not None:
                self._building.join(10)  # a build of ours, cancelled above, is ending
                self._building = None if not self._building.is_alive() else self._building
            self._graph_ready(start=True)
        wal = scrub_wal(self._run)
        log.info(
            "after a forget: tables rewritten in %.2f s; WAL written over in %d rounds,"
            " %.2f s (%s)",
            rewritten - began,
            wal.rounds,
            time.perf_counter() - rewritten,
            "verified" if wal.clean else "not verified",
        )
        return notes + wal.notes

    def _drop_graph(self, notes: list[str]) -> bool:
        """Drop the HNSW index, if there is one (True then): ``VACUUM FULL`` would build
        it again under the table's exclusive lock, a minute at 100k items with every
        recall waiting; searches are exact until the background build is done."""
        with self._reading() as conn:
            (there,) = conn.execute("SELECT to_regclass(%s)", (self._hnsw_name,)).fetchone()
            if there is None:
                return False
            note = run_locking(conn, f'DROP INDEX IF EXISTS "{self._hnsw_name}"', "idx_items")
        notes += [note] if note else []
        self._graph_seen_until = 0.0
        return True

    def _run(self, sql: str) -> list[tuple[Any, ...]]:
        with self._reading() as conn:
            cur = conn.execute(sql)
            return list(cur.fetchall()) if cur.description is not None else []

    # -- search -----------------------------------------------------------------------

    def search_lexical(
        self, query: str, flt: RecallFilter, limit: int, *, whole_phrase: bool = True
    ) -> list[tuple[str, float]]:
        """BM25 as the SQLite index scores it (:mod:`.lexical`), best first."""
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        if self._lexical != "bm25":
            other = search.lexical_simple if self._lexical == "simple" else search.lexical_trigram
            with self._reading() as conn:
                return other(conn, terms, flt, limit)
        texts = [" ".join(terms), *terms] if len(terms) > 1 and whole_phrase else terms
        phrases = [
            Phrase(text, tokens)
            for text, tokens in zip(texts, self._tokenizer.words(texts), strict=True)
        ]
        with self._reading() as conn:
            try:
                return search.lexical(conn, phrases, flt, limit, self._postings)
            finally:
                if conn.info.transaction_status != search.IDLE:
                    conn.execute("ROLLBACK")

    def search_vector(
        self, query: Vector, flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]]:
        """Cosine similarity against the embedded items passing ``flt`` (exact scores)."""
        if np.asarray(query).size != self._dim:
            raise IndexError_(
                f"query vector has {np.asarray(query).size} dimensions;"
                f" model {self._model} has {self._dim}"
            )
        graph = self._graph_ready(start=True)
        with self._reading() as conn:
            if graph and limit > 0:
                wanted = search.graph_settings(limit)
                if wanted != self._graph_settings:
                    conn.execute(wanted)  # on this connection, for every later walk
                    self._graph_settings = wanted
            return search.vectors(conn, query, flt, limit, approximate=self._dim if graph else None)

    def vectors_of(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored unit vector of each of ``ids`` that has one, in one round trip
        (:class:`~kronika.ports.CandidateVectors`)."""
        if not ids:
            return {}
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT id, vec FROM idx_items WHERE vec IS NOT NULL AND id = ANY(%s)",
                (list(ids),),
            ).fetchall()
        return {str(item_id): _array(vec) for item_id, vec in rows}

    def families_of(self, ids: Sequence[str]) -> dict[str, str]:
        """The family of each of ``ids`` that has one (its fact's key, else its session;
        :class:`~kronika.ports.CandidateVectors`), in one round trip."""
        if not ids:
            return {}
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT id, agent, session_id, coalesce(key_norm, key) FROM idx_items"
                " WHERE id = ANY(%s) AND (session_id IS NOT NULL OR key IS NOT NULL)",
                (list(ids),),
            ).fetchall()
        found = {str(i): family(agent, session, key) for i, agent, session, key in rows}
        return {i: f for i, f in found.items() if f is not None}

    @property
    def _hnsw_name(self) -> str:
        return f"idx_items_hnsw_{self._dim}"

    def _graph_ready(self, *, start: bool) -> bool:
        """Whether the HNSW index is there and valid; ``start`` builds it (in the
        background unless told otherwise) once the index holds ``ann_threshold`` items."""
        if self._threshold <= 0:
            return False
        if time.monotonic() < self._graph_seen_until:
            return True
        with self._reading() as conn:
            row = conn.execute(
                "SELECT x.indisvalid FROM pg_index AS x WHERE x.indexrelid = to_regclass(%s)",
                (self._hnsw_name,),
            ).fetchone()
            if row is not None and row[0]:
                self._graph_seen_until = time.monotonic() + GRAPH_RECHECK_S
                return True
            if not start or row is not None or self._building is not None:
                return False
            (items,) = conn.execute("SELECT coalesce(sum(n), 0) FROM idx_corpus").fetchone()
        if int(items) < self._threshold:
            return False
        if self._background:
            self._building = threading.Thread(target=self._build_graph, daemon=True)
            self._building.start()
            return False
        self._build_graph()
        return True

    def _build_graph(self) -> None:
        """CREATE INDEX CONCURRENTLY on a connection of its own (writers carry on)."""
        began = time.perf_counter()
        try:
            with connect(self._url, autocommit=True) as conn:
                conn.execute("SET maintenance_work_mem = '512MB'")
                conn.execute(
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {self._hnsw_name} ON idx_items"
                    f" USING hnsw ((vec::vector({self._dim})) vector_ip_ops)"
                    f" WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
                )
            log.info("HNSW index built in %.1f s", time.perf_counter() - began)
        except Exception as exc:  # noqa: BLE001 - searches stay exact; said in the log
            log.warning("could not build the HNSW index: %s", exc)

    def wait_for_vector_graph(self, timeout: float | None = None) -> bool:
        """Build the HNSW index now if the index is large enough; True once it is ready."""
        if self._graph_ready(start=True):
            return True
        building = self._building
        if building is not None:
            building.join(timeout)
            if building.is_alive():
                return False
            self._building = None
        return self._graph_ready(start=False)

    # -- reporting --------------------------------------------------------------------

    def integrity_problems(self, *, full: bool = False) -> list[str]:
        """What is wrong with the index's tables: missing ones; with ``full``, keyword
        statistics that no longer add up."""
        problems: list[str] = []
        with self._reading() as conn:
            for table in ("idx_items", "idx_terms", "idx_sources", "idx_embeddings", "idx_usage"):
                (present,) = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table,)).fetchone()
                if not present:
                    problems.append(f"table {table} is missing")
            if problems or not full:
                return problems
            wrong = conn.execute(
                "SELECT count(*) FROM (SELECT agent, tenant, count(*) AS n, sum(doc_len) AS t"
                " FROM idx_items GROUP BY 1, 2) AS a FULL JOIN idx_corpus AS c"
                " USING (agent, tenant) WHERE a.n IS DISTINCT FROM c.n"
                " OR a.t IS DISTINCT FROM c.tokens"
            ).fetchone()
            if wrong and wrong[0]:
                problems.append(f"keyword statistics of {wrong[0]} agents do not add up")
        return problems

    def stats(self) -> dict[str, Any]:
        with self._reading() as conn:
            one = conn.execute
            by_agent = dict(one("SELECT agent, count(*) FROM idx_items GROUP BY 1").fetchall())
            by_type = dict(one("SELECT type, count(*) FROM idx_items GROUP BY 1").fetchall())
            by_layer = dict(one("SELECT layer, count(*) FROM idx_items GROUP BY 1").fetchall())
            (embedded,) = one("SELECT count(*) FROM idx_items WHERE vec IS NOT NULL").fetchone()
            (cached,) = one("SELECT count(*) FROM idx_embeddings").fetchone()
            (sources,) = one("SELECT count(*) FROM idx_sources").fetchone()
            (size,) = one(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class AS c"
                " WHERE c.relkind = 'r' AND c.relname LIKE 'idx\\_%%'"
                " AND c.relnamespace = current_schema()::regnamespace"
            ).fetchone()
            migrations = [
                f"{v:04d}_{n}"
                for v, n in one("SELECT version, name FROM kronika_migrations ORDER BY 1")
            ]
        return {
            "path": redact_url(self._url),
            "items": sum(int(v) for v in by_agent.values()),
            "items_by_agent": {k: int(v) for k, v in by_agent.items()},
            "items_by_type": {k: int(v) for k, v in by_type.items()},
            "items_by_layer": layer_counts(by_layer),
            "sources": int(sources),
            "embedded": int(embedded),
            "embedding_model": self._model,
            "dim": self._dim,
            "embedding_cache": int(cached),
            "file_size": int(size),
            "caches_size": 0,
            "migrations": migrations,
        }
