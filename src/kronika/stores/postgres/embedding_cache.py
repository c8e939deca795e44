"""The index's cache of vectors by text hash on PostgreSQL (``idx_embeddings``): rows
made from an embedder's vectors, written (each given to the items of its text), read
back for a vector index outside the database, and dropped once no item uses them
(then the tables that lost rows are vacuumed). A write of a file's rows caches the
vectors it brings in its own transaction (:meth:`PostgresEmbeddings.cache`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from kronika.ports import Vector, VectorPoint
from kronika.stores.postgres.index_base import GRAPH_ORPHANS_DELETE, PostgresState, as_vector
from kronika.stores.postgres.index_rows import SELECT_ITEM, item_from_row
from kronika.stores.postgres.index_upkeep import PostgresUpkeep
from kronika.stores.postgres.recall_log import drop_forgotten
from kronika.stores.sql.rows import cached_vector

Cached = tuple[str, str, "np.ndarray[Any, Any]"]
"""A row of the embedding cache: text hash, model, unit vector (``float4``)."""


class PostgresEmbeddings:
    """The vector cache by text hash (the embedding verbs of
    :class:`~kronika.ports.IndexSources`)."""

    def __init__(self, state: PostgresState, upkeep: PostgresUpkeep) -> None:
        self.state = state
        self.upkeep = upkeep

    def embeddings_missing(self, text_hashes: Iterable[str]) -> set[str]:
        wanted = list(dict.fromkeys(text_hashes))
        with self.state.reading() as conn:
            found = conn.execute(
                "SELECT text_hash FROM idx_embeddings WHERE model = %s AND text_hash = ANY(%s)"
                " AND dims = %s",
                (self.state.model, wanted, self.state.dim),
            ).fetchall()
        return set(wanted) - {h for (h,) in found}

    def store_embeddings(self, vectors: Mapping[str, Vector]) -> None:
        """Cache one unit vector per text hash (replacing any old one) and give it to the
        items of that text."""
        self.store(self.rows(vectors))

    def store(self, rows: Sequence[Cached]) -> None:
        """``rows`` of the embedding cache written in a transaction of their own."""
        if rows:
            self.state.write(lambda conn: self.cache(conn, rows), together=True)

    def rows(self, vectors: Mapping[str, Vector]) -> list[Cached]:
        """The rows of the embedding cache for ``vectors``: unit length, ``float4``."""
        model, dim = self.state.model, self.state.dim
        return [
            (text_hash, model, cached_vector(text_hash, vec, dim=dim, model=model))
            for text_hash, vec in sorted(vectors.items())
        ]

    def cache(self, conn: Any, rows: Sequence[Cached]) -> None:
        """Cache ``rows`` and give each vector to the items of its text, in the caller's
        transaction (and pipeline, if any)."""
        if not rows:
            return
        conn.cursor().executemany(
            "INSERT INTO idx_embeddings (text_hash, model, vec) VALUES (%s, %s, %s)"
            " ON CONFLICT (text_hash, model) DO UPDATE SET vec = excluded.vec",
            rows,
        )
        conn.execute(
            "UPDATE idx_items AS i SET vec = e.vec FROM idx_embeddings AS e"
            " WHERE e.model = %s AND e.text_hash = ANY(%s) AND i.text_hash = e.text_hash"
            " AND i.vec IS DISTINCT FROM e.vec",
            (self.state.model, [r[0] for r in rows]),
        )

    def vector_points(self, text_hashes: Iterable[str] | None = None) -> list[VectorPoint]:
        """The items embedded from ``text_hashes`` (every item when ``None``) that have a
        vector, with it: what a vector index outside this database holds."""
        where = "" if text_hashes is None else " AND i.text_hash = ANY(%s)"
        params = () if text_hashes is None else (sorted(set(text_hashes)),)
        with self.state.reading() as conn:
            rows = conn.execute(
                SELECT_ITEM.replace(" FROM idx_items", ", i.text_hash, i.vec FROM idx_items")
                + f" WHERE i.vec IS NOT NULL{where} ORDER BY i.rowid",
                params,
            ).fetchall()
        return [VectorPoint(item_from_row(r[:-2]), str(r[-2]), as_vector(r[-1])) for r in rows]

    def drop_unused_embeddings(self, *, everywhere: bool = False) -> int:
        """Delete cached vectors no item uses any more (of the texts this index replaced or
        removed since the last call; ``everywhere``: of every text), and the usage
        statistics and graph vectors of ids gone for good (``everywhere``: every graph
        vector without an item; migration ``0207``); then VACUUM the tables, when a
        vector went or an id is gone for good. An id whose row was deleted and written
        again elsewhere (a fact moved from the archive to the history) is not: its id
        and text are still held. Returns how many vectors went."""
        with self.state.lock:
            candidates = sorted(self.state.maybe_unused)
            vanished = sorted(self.state.vanished)
            self.state.maybe_unused.clear()
            self.state.vanished.clear()
        unused = "NOT EXISTS (SELECT 1 FROM idx_items AS i WHERE i.text_hash = e.text_hash)"
        # the texts still used looked up by the candidates alone: a correlated NOT EXISTS
        # may be planned as a hash of every item's text (165 ms at 20,000 items, 0.6 ms so)
        still_used = (
            "e.text_hash NOT IN"
            " (SELECT i.text_hash FROM idx_items AS i WHERE i.text_hash = ANY(%s))"
        )

        def work(conn: Any) -> Any:
            # sent together with the transaction's BEGIN and COMMIT: the counts are read
            # from the cursor once the answers are in
            dropped = gone = None
            if everywhere:
                dropped = conn.execute(f"DELETE FROM idx_embeddings AS e WHERE {unused}")
            elif candidates:
                dropped = conn.execute(
                    f"DELETE FROM idx_embeddings AS e WHERE e.text_hash = ANY(%s) AND {still_used}",
                    (candidates, candidates),
                )
            if everywhere:
                conn.execute(GRAPH_ORPHANS_DELETE)
            if vanished:
                gone = conn.execute(
                    "SELECT count(*) FROM unnest(%s::text[]) AS v (id) WHERE v.id NOT IN"
                    " (SELECT i.id FROM idx_items AS i WHERE i.id = ANY(%s))",
                    (vanished, vanished),
                )
                # a vector of the graph stays while its item moves (migration 0207)
                conn.execute(
                    "DELETE FROM idx_graph AS g WHERE g.item_id = ANY(%s) AND g.item_id NOT IN"
                    " (SELECT i.id FROM idx_items AS i WHERE i.id = ANY(%s) AND i.vec IS NOT NULL)",
                    (vanished, vanished),
                )
                conn.execute(
                    "DELETE FROM idx_usage AS u WHERE u.item_id = ANY(%s)"
                    " AND u.item_id NOT IN (SELECT i.id FROM idx_items AS i WHERE i.id = ANY(%s))",
                    (vanished, vanished),
                )
                drop_forgotten(conn, self.state.tenant, vanished)  # their ids leave the recall log
            return dropped, gone

        if not (everywhere or candidates or vanished):
            return 0
        found, gone = self.state.write(work, together=True)
        dropped = 0 if found is None else max(0, int(found.rowcount))
        row = None if gone is None else gone.fetchone()
        if dropped or (row is not None and int(row[0]) > 0):
            self.upkeep.vacuum()
        return dropped
