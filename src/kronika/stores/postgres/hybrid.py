"""Recall's vector search riding in its keyword search's round trip
(:meth:`~kronika.stores.postgres.index_search.PostgresSearch.search_hybrid`).

The keyword search scores its rows in this process and then asks the server which of
the best pass the filter (:func:`kronika.stores.postgres.search.lexical`): one round
trip, inside a read-only snapshot. :class:`VectorAlong` queues the vector search's
statements in that same pipeline, after the filter's: whether the HNSW index is
there (unless it was seen valid lately), then the walk over it (its settings made
``SET LOCAL`` for that snapshot alone) or the exact scan. They are the statements
:func:`~kronika.stores.postgres.search.vectors` sends, so the rows are the same.
"""

from __future__ import annotations

from typing import Any

from kronika.core.model import RecallFilter
from kronika.ports import Vector
from kronika.stores.postgres.search import ef_search, exact_sql, unit_query, walk_sql

GRAPH_CHECK = (
    "SELECT (SELECT x.indisvalid FROM pg_index AS x WHERE x.indexrelid = to_regclass(%s)),"
    " (SELECT coalesce(sum(n), 0) FROM idx_corpus)"
)
"""Whether the HNSW index (named by the parameter) is valid (NULL: there is none), and
the items of the index (one build starts once they reach ``ann_threshold``)."""
GRAPH_VALID = (
    "SELECT (SELECT x.indisvalid FROM pg_index AS x WHERE x.indexrelid = to_regclass(%s)),"
    " EXISTS (SELECT 1 FROM pg_stat_progress_create_index AS p"
    " WHERE p.index_relid = to_regclass(%s))"
)
"""Whether the HNSW index (named by both parameters) is valid (NULL: there is none), and
whether some session is building it now (one that holds no lock of kronika's: an
operator's ``CREATE INDEX``, an older kronika)."""
GRAPH_BUILDING = "SELECT pg_try_advisory_lock(hashtextextended(current_schema() || '.' || %s, 0))"
"""Take the session lock of building the HNSW index (named by the parameter) in this
index's schema; false when another worker holds it (it is building that index). Let go
when the connection closes."""


class VectorAlong:
    """One vector search, sent with a keyword search's filter (:class:`~kronika.stores.
    postgres.search.Along`).

    ``walk``: the dimension of the HNSW index to walk (seen valid), else None (exact);
    ``graph``: the name of the HNSW index to check on the way (None: not checked).
    After :meth:`collect`, :attr:`found` holds the rows (None: the walk found fewer than
    ``limit``, and the exact scan is still to be made) and :attr:`checked` what the
    check said: ``(valid, items)``, ``valid`` None when there is no HNSW index.
    """

    def __init__(
        self,
        query: Vector,
        flt: RecallFilter,
        limit: int,
        *,
        walk: int | None,
        margin: int,
        graph: str | None,
    ) -> None:
        self._query = unit_query(query)
        self._flt = flt
        self._limit = limit
        self._walk = walk
        self._margin = margin
        self._graph = graph
        self._sent: tuple[Any, Any] = (None, None)
        self.waiting = True
        self.checked: tuple[bool | None, int] | None = None
        self.found: list[tuple[str, float]] | None = None

    @property
    def walks(self) -> bool:
        """Whether the search walks the HNSW index (else it is the exact scan)."""
        return self._walk is not None

    def send(self, conn: Any) -> None:
        """Queue the statements on ``conn`` (in a pipeline, inside a transaction)."""
        check = conn.execute(GRAPH_CHECK, (self._graph,)) if self._graph is not None else None
        rows = None
        if self._query is not None and self._limit > 0:
            if self._walk is not None:
                ef = ef_search(self._limit, self._margin)
                conn.execute(f"SET LOCAL hnsw.ef_search = {ef}")
                conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                rows = conn.execute(*walk_sql(self._query, self._flt, self._limit, self._walk))
            else:
                rows = conn.execute(*exact_sql(self._query, self._flt, self._limit))
        self._sent = (check, rows)

    def collect(self) -> None:
        """Read the rows of the statements sent (the pipeline is through)."""
        check, rows = self._sent
        if check is not None:
            valid, items = check.fetchone()
            self.checked = (valid, int(items))
        found = [] if rows is None else [(str(i), float(s)) for i, s in rows.fetchall()]
        walked_short = rows is not None and self._walk is not None and len(found) < self._limit
        self.found = None if walked_short else found
        self.waiting = False
