"""What every part of :class:`~kronika.stores.postgres.index.PostgresIndex` stands on:
the connection to the tenant's schema and the state beside it, one
:class:`PostgresState` the parts share.

Opening migrates the database and makes the item rows hold this model's vectors;
:meth:`PostgresState.reading` holds the lock and turns the server's errors into
kronika's, :meth:`PostgresState.write` runs one transaction and retries it when the
server chose it as a deadlock's victim, :meth:`PostgresState.lagging` runs a read that
may lag on the read replica when there is one and it has replayed what this worker
must see (:mod:`.replica`), on the primary otherwise. The other ``index_*`` modules hold the parts
built over it, one port of :mod:`kronika.ports` each; none inherits from another.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from kronika.errors import IndexError_, StoreError
from kronika.ports import Vector
from kronika.stores.postgres import search
from kronika.stores.postgres.connect import (
    connect,
    gone,
    migrate,
    migrate_index,
    one_line,
    redact_url,
    scoped_url,
    shared_schema,
    unscoped_url,
)
from kronika.stores.postgres.lexical import Tokenizer
from kronika.stores.postgres.replica import ReplayMark, Replica
from kronika.stores.postgres.trips import sent_together

log = logging.getLogger(__name__)

ANN_THRESHOLD = 10_000  # the postgres_ann_threshold setting's default
HNSW_M = search.HnswOptions().m  # pgvector's default, the postgres_hnsw_m setting's
HNSW_EF_CONSTRUCTION = search.HnswOptions().ef_construction  # likewise
ITEMS_AHEAD = 10
"""Seeds whose neighbours' items :meth:`PostgresIndex.read_candidates` reads ahead."""
GRAPH_RECHECK_S = 30.0
"""Seconds a valid HNSW index is taken as still there (another model's worker may drop
it; a search then scans exactly, still right, until the next look)."""
_RETRIES = 30
_RETRY_STATES = {"40P01", "40001", "23505"}  # deadlock, serialization failure, unique key
ID_ORDER = 'COLLATE "C"'  # ids sort by code point, as Python sorts them

GRAPH_ORPHANS_DELETE = (
    "DELETE FROM idx_graph AS g WHERE NOT EXISTS"
    " (SELECT 1 FROM idx_items AS i WHERE i.id = g.item_id AND i.vec IS NOT NULL)"
)
"""Delete the graph's vectors of ids no item holds with a vector (an item deleted leaves
its vector in ``idx_graph`` until then: it may be moving to another file)."""

LEXICAL = ("bm25", "simple", "trigram")

T = TypeVar("T")


def as_vector(value: Any) -> Vector:
    """A vector read from the server as float32 (pgvector hands a ``Vector`` or an array)."""
    to_numpy = getattr(value, "to_numpy", None)
    found = to_numpy() if to_numpy is not None else value
    return np.asarray(found, dtype=np.float32)


def reset_items(state: PostgresState) -> None:
    """Forget every item and source (keeps the embedding cache and usage statistics)."""

    def work(conn: Any) -> None:
        conn.execute("TRUNCATE idx_terms, idx_items, idx_graph, idx_corpus, idx_sources")

    state.write(work)


class PostgresState:
    """The connection to the tenant's index tables, its lock, the options and what the
    parts keep between calls (deleted text hashes and ids, the HNSW build, the keyword
    tokenizer and postings cache). Every part holds the same one."""

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
        read_url: str = "",
        mark: ReplayMark | None = None,
        hnsw: search.HnswOptions | None = None,
    ) -> None:
        if lexical not in LEXICAL:
            raise ValueError(f"lexical must be one of {', '.join(LEXICAL)}; got {lexical!r}")
        self.lexical = lexical
        self.url = url
        self.model = embedding_model
        self.dim = dim
        self.threshold = ann_threshold
        self.hnsw = hnsw or search.HnswOptions()
        self.background = ann_background
        self.lock = threading.RLock()
        self.tokenizer = Tokenizer()
        self.postings = search.PostingsCache()
        self.maybe_unused: set[str] = set()  # text hashes of rows replaced or removed
        self.vanished: set[str] = set()  # ids of rows deleted and not written again
        self.building: threading.Thread | None = None
        self.unanalyzed = 0  # rows this index wrote since it last ran ANALYZE
        self.graph_seen_until = 0.0  # the HNSW index was valid; asked again after this
        self.graph_tried_until = 0.0  # a build of an index not valid was tried; not again till
        self.graph_settings: str | None = None  # the HNSW settings of the connection
        # what a new connection must take again of the one lost (its session locks)
        self.reconnected: list[Callable[[Any], None]] = []
        self.tenant = tenant
        url = unscoped_url(url)  # this index's own URL, given back: scoped again below
        with connect(url, autocommit=True) as opening:
            migrate(opening)
            self.schema, _ = migrate_index(opening, tenant)
            shared = shared_schema(opening)
        self.url = scoped_url(url, self.schema, shared)  # every connection of this index
        self.mark = mark
        self.replica: Replica | None = None
        if read_url:
            if mark is None:
                raise ValueError("a read replica needs the worker's ReplayMark")
            self.replica = Replica(scoped_url(unscoped_url(read_url), self.schema, shared), mark)
        self.conn = connect(self.url, autocommit=True)
        try:
            self._adopt_model()
            if self.threshold > 0:  # an index that never walks the graph leaves it be
                self._adopt_graph_options()
        except BaseException:
            self.conn.close()
            raise

    @contextmanager
    def reading(self) -> Iterator[Any]:
        """The connection, under the lock; the server's errors become :class:`IndexError_`
        (a lost connection, :class:`StoreError`). A connection lost before (the server
        restarted) is opened again first."""
        import psycopg

        with self.lock:
            if gone(self.conn):
                with contextlib.suppress(Exception):
                    self.conn.close()
                self.conn = connect(self.url, autocommit=True)  # StoreError while it is down
                self.graph_settings = None
                for again in self.reconnected:
                    again(self.conn)
            try:
                yield self.conn
            except psycopg.OperationalError as exc:
                where = redact_url(unscoped_url(self.url))
                raise StoreError(f"PostgreSQL at {where} failed: {one_line(exc)}") from exc
            except psycopg.Error as exc:
                raise IndexError_(f"the PostgreSQL index cannot be used: {exc}") from exc

    def write(self, work: Callable[[Any], T], *, together: bool = False) -> T:
        """``work(conn)`` in one transaction, retried when the server chose it as the
        victim of a deadlock or another worker won a race for the same key.
        ``together``: its ``BEGIN`` and ``COMMIT`` sent with its statements
        (:func:`~.trips.sent_together`), two round trips fewer; the work then runs in a
        pipeline, so it sends no ``COPY``."""
        import psycopg

        for attempt in range(_RETRIES):
            with self.reading() as conn:
                try:
                    with sent_together(conn) if together else conn.transaction():
                        done = work(conn)
                    if self.mark is not None:
                        self.mark.wrote()  # under the write lock: later reads must see it
                    return done
                except psycopg.Error as exc:
                    if exc.sqlstate not in _RETRY_STATES or attempt == _RETRIES - 1:
                        raise
            # jittered exponential backoff: writers that collided do not collide again in step
            time.sleep(random.uniform(0, 0.005 * 2 ** min(attempt, 6)))
        raise AssertionError("unreachable")

    def write_statement(self, sql: str, params: Any) -> None:
        """One statement as its own transaction (the connection is in autocommit): one
        round trip where :meth:`write` takes three (``BEGIN``, the statement, ``COMMIT``);
        retried as :meth:`write` retries."""
        import psycopg

        for attempt in range(_RETRIES):
            with self.reading() as conn:
                try:
                    conn.execute(sql, params)
                    if self.mark is not None:
                        self.mark.wrote()
                    return
                except psycopg.Error as exc:
                    if exc.sqlstate not in _RETRY_STATES or attempt == _RETRIES - 1:
                        raise
            time.sleep(random.uniform(0, 0.005 * 2 ** min(attempt, 6)))

    def lagging(self, work: Callable[[Any], T]) -> T:
        """``work(conn)`` for a read that may lag: on the read replica when there is one
        and it has replayed :attr:`mark`, else (or when it fails there) on the primary."""
        import psycopg

        if self.replica is not None:
            with self.lock:
                conn = self.replica.ready()
                if conn is not None:
                    try:
                        found = work(conn)
                    except psycopg.Error as exc:
                        self.replica.failed(exc)
                    else:
                        self.replica.served()
                        return found
        with self.reading() as conn:
            return work(conn)

    def prepare(self, conn: Any, sql: str) -> None:
        """Run ``sql`` (session settings) on ``conn`` unless it was the last run there."""
        holder: Any = self.replica if self.replica and conn is self.replica.conn else self
        if holder.graph_settings != sql:
            conn.execute(sql)
            holder.graph_settings = sql

    @staticmethod
    def lock_source(conn: Any, agent: str, path: str) -> None:
        conn.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"idx\x1f{agent}\x1f{path}",)
        )

    def _adopt_model(self) -> None:
        """Make ``vec`` hold this model's vectors (a database serves one model at a time)."""
        wanted = f"{self.model}\x1f{self.dim}"

        def work(conn: Any) -> None:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('idx-model', 0))")
            row = conn.execute("SELECT value FROM idx_meta WHERE key = 'vector_model'").fetchone()
            if row is not None and row[0] == wanted:
                return
            # Another model's vectors are all replaced below: a graph of theirs (of any
            # dimension) is dropped and built again, not updated one row at a time.
            for (name,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
                " AND tablename = 'idx_graph'"
                " AND indexname LIKE 'idx\\_graph\\_hnsw\\_%%' AND (indexname != %s OR %s)",
                (self.hnsw_name, row is not None),
            ).fetchall():
                conn.execute(f'DROP INDEX IF EXISTS "{name}"')
            if row is not None:
                conn.execute(
                    "UPDATE idx_items AS i SET vec = (SELECT e.vec FROM idx_embeddings AS e"
                    " WHERE e.text_hash = i.text_hash AND e.model = %s"
                    " AND e.dims = %s)",
                    (self.model, self.dim),
                )
            conn.execute(
                "INSERT INTO idx_meta (key, value) VALUES ('vector_model', %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (wanted,),
            )

        self.write(work)

    def _adopt_graph_options(self) -> None:
        """Drop the HNSW index when it was built with another ``m`` or ``ef_construction``
        than :attr:`hnsw` asks for (its ``pg_class.reloptions`` tell); searches scan
        exactly, still right, until it is built again with these (as after a forget)."""

        def work(conn: Any) -> bool:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('idx-model', 0))")
            row = conn.execute(
                "SELECT c.reloptions FROM pg_class AS c WHERE c.oid = to_regclass(%s)",
                (self.hnsw_name,),
            ).fetchone()
            if row is None or self.hnsw.built_alike(row[0]):
                return False
            log.info(
                "HNSW index %s was built with %s; dropped, built again with %s",
                self.hnsw_name,
                ", ".join(row[0] or ()) or "pgvector's defaults",
                self.hnsw.with_clause,
            )
            conn.execute(f'DROP INDEX IF EXISTS "{self.hnsw_name}"')
            return True

        if self.write(work):
            self.graph_seen_until = 0.0

    @property
    def hnsw_name(self) -> str:
        return f"idx_graph_hnsw_{self.dim}"

    def run(self, sql: str) -> list[tuple[Any, ...]]:
        """The rows of one statement run on the connection (none for a command)."""
        with self.reading() as conn:
            cur = conn.execute(sql)
            return list(cur.fetchall()) if cur.description is not None else []
