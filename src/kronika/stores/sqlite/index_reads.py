"""The read side of :class:`~kronika.stores.sqlite.SqliteIndex` other than search:
sources, items by id, filter or file, what the R3 score needs, a turn's neighbours,
the embedding cache's contents, and the counts of ``stats``.

Where the BM25 snapshot is loaded, scores and neighbours come from its columns;
before that SQLite answers (the ``*_sql`` twins give the same results).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from kronika.core.model import MemoryItem, RecallFilter, layer_counts
from kronika.ports import (
    DayCount,
    FeatureRow,
    ScoreFeatures,
    SourceState,
    SourceTail,
    Usage,
    VectorPoint,
)
from kronika.stores.sql import day_counts
from kronika.stores.sql import rows as shared
from kronika.stores.sqlite import appends, context, points
from kronika.stores.sqlite import rows as R
from kronika.stores.sqlite.dialect import SQLITE
from kronika.stores.sqlite.index_base import _CHUNK, IndexState, _chunks
from kronika.stores.sqlite.index_snapshots import Snapshots
from kronika.stores.sqlite.migrations import applied_migrations
from kronika.stores.sqlite.query import filter_clause
from kronika.stores.sqlite.vectors import read_transaction

_ITEMS_MARK_SQL = (
    "SELECT (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'items'),"
    " (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'item_deletions'),"
    " (SELECT value FROM meta WHERE key = 'index_id')"
)

_SELECT_KEYED_SQL = R.SELECT_ITEM_SQL.replace(
    " FROM items AS i ", " FROM items AS i INDEXED BY items_key "
)
assert _SELECT_KEYED_SQL != R.SELECT_ITEM_SQL


class SqliteReads:
    """Reads of sources, items, score features, neighbours, embeddings and statistics."""

    def __init__(self, state: IndexState, snapshots: Snapshots) -> None:
        self.state = state
        self.snapshots = snapshots

    def items_mark(self) -> tuple[str, int, int]:
        """What changes with every write of an item, by this connection or another
        (:class:`~kronika.ports.ItemsMark`): the highest item rowid and deletion seq
        ever given (an item is only ever inserted anew or deleted, each deletion logged,
        and neither count goes back, not even when the rows go) and the file's
        identity (a file made anew starts both again). Usage statistics leave it."""
        with self.state.reading() as conn:
            items, deletions, identity = conn.execute(_ITEMS_MARK_SQL).fetchone()
        return (str(identity), int(items), int(deletions))

    def source_states(self, agent: str) -> dict[str, SourceState]:
        with self.state.reading() as conn:
            return shared.source_states(SQLITE, conn, agent)

    def source_state(self, agent: str, path: str) -> SourceState | None:
        """The state of one indexed file (``None`` when the index holds none)."""
        with self.state.reading() as conn:
            return shared.source_state(SQLITE, conn, agent, path)

    def source_tail(self, agent: str, path: str, last: int = 2) -> SourceTail | None:
        """The end of one indexed file (:func:`kronika.stores.sqlite.appends.source_tail`)."""
        with self.state.reading() as conn, read_transaction(conn):
            return appends.source_tail(conn, agent, path, last)

    def get_items(self, ids: Sequence[str]) -> list[MemoryItem]:
        """Items in the order of ``ids`` (unknown ids skipped), with usage statistics."""
        found: dict[str, MemoryItem] = {}
        wanted = list(dict.fromkeys(ids))
        with self.state.reading() as conn:
            for chunk in _chunks(wanted):
                marks = ", ".join("?" * len(chunk))
                for row in conn.execute(f"{R.SELECT_ITEM_SQL} WHERE i.id IN ({marks})", chunk):
                    item = R.item_from_row(row)
                    found[item.id] = item
        return [found[i] for i in ids if i in found]

    def item_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """``{id: content}`` of the items of ``ids`` (unknown ids absent), no item built."""
        found: dict[str, str] = {}
        with self.state.reading() as conn:
            for chunk in _chunks(list(dict.fromkeys(ids))):
                marks = ", ".join("?" * len(chunk))
                found.update(
                    conn.execute(f"SELECT id, content FROM items WHERE id IN ({marks})", chunk)
                )
        return found

    def score_features(self, ids: Sequence[str]) -> ScoreFeatures:
        """What the R3 score needs of each item, without building whole items.

        Read from the BM25 snapshot's columns once it is loaded (only usage comes
        from SQLite), else from SQLite (:meth:`_score_features_sql`).
        """
        return self._score_features(ids, with_usage=True)

    def score_columns(self, ids: Sequence[str]) -> ScoreFeatures:
        """:meth:`score_features` without the usage columns once the BM25 snapshot is
        loaded (they are a lookup per item; the rest comes from memory): recall reads
        them with :meth:`usage` for the candidates that can still reach the top
        (:class:`~kronika.ports.UsageApart`)."""
        return self._score_features(ids, with_usage=False)

    def usage(self, ids: Sequence[str]) -> Usage:
        """``last_accessed_at`` and ``access_count`` of the items of ``ids`` that have them."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        with self.state.reading() as conn:
            return self._usage(conn, wanted)

    def _score_features(self, ids: Sequence[str], *, with_usage: bool) -> ScoreFeatures:
        wanted = list(dict.fromkeys(ids))
        with self.state.reading() as conn:
            if self.state.bm25 is None or not wanted:
                return self._score_features_sql(conn, wanted)
            with read_transaction(conn):
                bm25 = self.snapshots.current_bm25(conn)
                rows = bm25.rows_of(wanted)
                usage = None
                if with_usage:
                    known = [i for i, r in zip(wanted, rows.tolist(), strict=True) if r >= 0]
                    usage = self._usage(conn, known)
            return context.score_features(bm25.cols, bm25.context, wanted, rows, usage)

    @staticmethod
    def _usage(conn: sqlite3.Connection, ids: Sequence[str]) -> Usage:
        found: dict[str, tuple[float | None, int]] = {}
        for chunk in _chunks(ids):
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT item_id, last_accessed_at, access_count FROM usage"
                f" WHERE item_id IN ({marks})",
                chunk,
            )
            for item_id, accessed, count in rows:
                found[item_id] = (None if accessed is None else float(accessed), int(count))
        return found

    @staticmethod
    def _score_features_sql(conn: sqlite3.Connection, wanted: Sequence[str]) -> ScoreFeatures:
        """:meth:`score_features` read from SQLite (before the BM25 snapshot is loaded)."""
        found: dict[str, FeatureRow] = {}
        for chunk in _chunks(wanted):
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT i.id, i.importance, i.created_at, u.last_accessed_at,"
                " coalesce(u.access_count, 0), i.speaker, i.session_id FROM items AS i"
                f" LEFT JOIN usage AS u ON u.item_id = i.id WHERE i.id IN ({marks})",
                chunk,
            )
            for item_id, *features in rows:
                found[item_id] = shared.feature_row(features)
        return ScoreFeatures.from_rows({i: found[i] for i in wanted if i in found})

    def neighbours(
        self, ids: Sequence[str], flt: RecallFilter, window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """The other party's messages at most ``window`` turns from each message in ``ids``.

        A turn's context is the exchange it belongs to: the question it answers, the
        answer it got. Consecutive messages of the same speaker are separate statements
        (and where the other side was not kept, as when only user turns are imported,
        they were not even adjacent), so they are not each other's context.

        Every row records its place in its file (``pos``, in file order), so a turn's
        neighbours are the rows of the same file whose places are within ``window`` of
        its own: range lookups in the ``(source_agent, source_path, pos)`` index, no
        scan, wherever appends from other files put their rowids. Neighbours come from
        the same session and must pass ``flt``; the offset is the difference of places.
        """
        wanted = list(dict.fromkeys(ids))
        if window < 1 or not wanted:
            return {}
        with self.state.reading() as conn:
            if self.state.bm25 is None:
                return self._neighbours_sql(conn, wanted, flt, window)
            with read_transaction(conn):
                bm25 = self.snapshots.current_bm25(conn)
                allowed = self.snapshots.allowed_rowids(conn, flt)
            keep = bm25.cols.mask(flt, bm25.live if bm25.dead else None)
            if allowed is not None:
                allowed_rows = np.isin(bm25.cols.rowids, allowed)
                keep = allowed_rows if keep is None else keep & allowed_rows
            rows = bm25.rows_of(wanted)
            found: dict[str, list[tuple[str, int]]] = {}
            for start in range(0, len(wanted), _CHUNK):  # ordered per chunk, as in SQL
                part = slice(start, start + _CHUNK)
                near = context.neighbours(
                    bm25.cols, bm25.context, wanted[part], rows[part], keep, window
                )
                if near is None:  # more files or places than the columns can key
                    return self._neighbours_sql(conn, wanted, flt, window)
                found.update(near)
            return found

    @staticmethod
    def _neighbours_sql(
        conn: sqlite3.Connection, wanted: Sequence[str], flt: RecallFilter, window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """:meth:`neighbours` answered by SQLite (before the BM25 snapshot is loaded)."""
        found: dict[str, list[tuple[str, int]]] = {}
        where, params = filter_clause(flt, alias="n")
        for chunk in _chunks(wanted):
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                # CROSS JOIN and the unary + keep SQLite on this plan: each c by its
                # id, then n by a range of places in c's file. Left to itself it scans
                # every message as c (150 ms instead of 10 at 100k items).
                "SELECT c.id, n.id, n.pos - c.pos FROM items AS c CROSS JOIN items AS n"
                " ON n.source_agent = c.source_agent AND n.source_path = c.source_path"
                " AND n.pos BETWEEN c.pos - ? AND c.pos + ? AND n.pos != c.pos"
                " AND n.session_id = c.session_id AND +n.type = 'message'"
                " AND coalesce(n.speaker_norm, '') != coalesce(c.speaker_norm, '')"
                f" WHERE c.id IN ({marks}) AND +c.type = 'message' AND {where}"
                " ORDER BY c.id, n.pos",
                [window, window, *chunk, *params],
            )
            for item_id, other, offset in rows:
                found.setdefault(item_id, []).append((other, int(offset)))
        return found

    def list_items(
        self, flt: RecallFilter, *, limit: int | None = None, offset: int = 0
    ) -> list[MemoryItem]:
        """Items matching ``flt``, newest ``created_at`` first (ties by id). Asked by key,
        the index of keys finds them: SQLite would otherwise walk every item of the agent
        or tenant the filter names as well."""
        where, params = filter_clause(flt)
        select = _SELECT_KEYED_SQL if flt.keys else R.SELECT_ITEM_SQL
        sql = f"{select} WHERE {where} ORDER BY i.created_at DESC, i.id LIMIT ? OFFSET ?"
        with self.state.reading() as conn:
            found = conn.execute(sql, [*params, -1 if limit is None else limit, offset])
            return [R.item_from_row(row) for row in found]

    def source_items(self, agent: str, path: str) -> list[MemoryItem]:
        """The items indexed from one file, in file order."""
        sql = f"{R.SELECT_ITEM_SQL} WHERE i.source_agent = ? AND i.source_path = ? ORDER BY i.pos"
        with self.state.reading() as conn:
            return [R.item_from_row(row) for row in conn.execute(sql, (agent, path))]

    def count_items(self, flt: RecallFilter) -> int:
        where, params = filter_clause(flt)
        with self.state.reading() as conn:
            (n,) = conn.execute(f"SELECT count(*) FROM items AS i WHERE {where}", params).fetchone()
        return int(n)

    def created_per_day(self, flt: RecallFilter, since: datetime) -> list[DayCount]:
        with self.state.reading() as conn:
            return day_counts.created_per_day(SQLITE, conn, flt, since)

    def agents(self) -> list[str]:
        with self.state.reading() as conn:
            found = conn.execute(
                "SELECT agent FROM sources UNION SELECT agent FROM items ORDER BY 1"
            ).fetchall()
        return [a for (a,) in found]

    def meta_value(self, key: str) -> str | None:
        with self.state.reading() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def embeddings_missing(self, text_hashes: Iterable[str]) -> set[str]:
        """The hashes with no cached vector for this index's ``embedding_model``."""
        wanted = list(dict.fromkeys(text_hashes))
        present: set[str] = set()
        with self.state.reading() as conn:
            for chunk in _chunks(wanted):
                marks = ", ".join("?" * len(chunk))
                found = conn.execute(
                    f"SELECT text_hash FROM embeddings WHERE model = ? AND length(vec) = ?"
                    f" AND text_hash IN ({marks})",
                    [self.state.model, self.state.dim * 4, *chunk],
                )
                present.update(h for (h,) in found)
        return set(wanted) - present

    def vector_points(self, text_hashes: Iterable[str] | None = None) -> list[VectorPoint]:
        """The items embedded from ``text_hashes`` (every item when ``None``) that have a
        cached vector, with it: what a vector index outside this file holds."""
        with self.state.reading() as conn, read_transaction(conn):
            wanted = points.every_text_hash(conn) if text_hashes is None else text_hashes
            return points.vector_points(conn, wanted, self.state.model, self.state.dim)

    def stats(self) -> dict[str, Any]:
        """Counts per agent and type, embedded items, the model, file sizes and migrations."""
        with self.state.reading() as conn:
            one = conn.execute
            by_agent = dict(one("SELECT agent, count(*) FROM items GROUP BY 1").fetchall())
            by_type = dict(one("SELECT type, count(*) FROM items GROUP BY 1").fetchall())
            by_layer = dict(one("SELECT layer, count(*) FROM items GROUP BY 1").fetchall())
            (embedded,) = one(
                "SELECT count(*) FROM items AS i WHERE EXISTS (SELECT 1 FROM embeddings AS e"
                " WHERE e.text_hash = i.text_hash AND e.model = ? AND length(e.vec) = ?)",
                (self.state.model, self.state.dim * 4),
            ).fetchone()
            (cached,) = one("SELECT count(*) FROM embeddings").fetchone()
            (sources,) = one("SELECT count(*) FROM sources").fetchone()
            migrations = applied_migrations(conn)
        return {
            "path": str(self.state.path),
            "items": sum(by_agent.values()),
            "items_by_agent": by_agent,
            "items_by_type": by_type,
            "items_by_layer": layer_counts(by_layer),
            "sources": sources,
            "embedded": embedded,
            "embedding_model": self.state.model,
            "dim": self.state.dim,
            "embedding_cache": cached,
            "file_size": self._file_size(),
            # the vector graph and the saved snapshot copies beside the file, if any
            "caches_size": self._caches_size(),
            "migrations": migrations,
        }

    def _caches_size(self) -> int:
        if not isinstance(self.state.path, Path):
            return 0
        found = (
            p
            for kind in ("ann", "vectors", "bm25")
            for p in self.state.path.parent.glob(f"{self.state.path.name}.{kind}*")
        )
        return sum(p.stat().st_size for p in found if p.is_file())

    def _file_size(self) -> int:
        if not isinstance(self.state.path, Path):
            return 0
        files = (self.state.path, Path(f"{self.state.path}-wal"))
        return sum(f.stat().st_size for f in files if f.exists())
