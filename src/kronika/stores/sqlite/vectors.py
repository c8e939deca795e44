"""Exact cosine search over an in-memory matrix of the current model's item vectors (SPEC R5).

A :class:`VectorSnapshot` is loaded once from SQLite and reused until the index
changes. Filters on agent, tenant, scope, type, channel, speaker, status and time
become boolean masks over parallel numpy arrays; the caller passes the allowed
rowids for filters that need a join (keys, entities).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from kronika.core.model import RecallFilter
from kronika.core.ranking import best_first
from kronika.ports import Vector
from kronika.stores.sqlite.ann import AnnGraph, ann_count
from kronika.stores.sqlite.columns import COLUMN_COUNT, COLUMNS_SQL, ItemColumns, Mask, Rowids
from kronika.stores.sqlite.saved import (
    Arrays,
    Kind,
    Saved,
    item_columns_from_arrays,
    item_columns_to_arrays,
    last_item,
)

_COLUMNS = COLUMNS_SQL + ", e.vec\n"
_ALL_SQL = (
    _COLUMNS + "FROM items AS i JOIN embeddings AS e ON e.text_hash = i.text_hash"
    " WHERE e.model = ? AND length(e.vec) = ?"
)
_COUNT_SQL = (
    "SELECT count(*) FROM items AS i JOIN embeddings AS e ON e.text_hash = i.text_hash"
    " WHERE e.model = ? AND length(e.vec) = ?"
)
# Rows added since a snapshot was taken: items with a higher rowid, and older items
# whose vector was stored later (a higher embeddings.seq). Two indexed range scans.
_NEWER_SQL = (
    _COLUMNS + "FROM items AS i JOIN embeddings AS e ON e.text_hash = i.text_hash"
    " WHERE e.model = ? AND length(e.vec) = ? AND i.rowid > ?"
    " UNION ALL "
    # CROSS JOIN keeps embeddings as the outer loop: a range scan of the new vectors
    # instead of a scan of every older item.
     + _COLUMNS + "FROM embeddings AS e CROSS JOIN items AS i ON i.text_hash = e.text_hash"
    " WHERE e.model = ? AND length(e.vec) = ? AND e.seq > ? AND i.rowid <= ?"
)
_MARKS_SQL = (
    "SELECT (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'items'),"
    " (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'embeddings'),"
    " (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'item_deletions'),"
    " (SELECT min(seq) FROM item_deletions)"
)

Marks = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class VectorSnapshot:
    """Row-normalised vectors of every embedded item plus the columns filters need.

    ``marks`` are the highest item rowid, embedding ``seq`` and deletion ``seq``
    the snapshot has seen; all only grow, which makes :meth:`refresh` incremental.
    Item rows are never updated in place (a replaced item gets a new rowid), so a
    row once loaded stays valid until its rowid shows up in ``item_deletions``.

    Only the newest snapshot may be refreshed (the index keeps exactly one): the
    refreshed one can write into the spare rows of the shared ``buffer``, which
    older snapshots never look at.
    """

    cols: ItemColumns
    # (capacity, dim); rows [0, n) are unit vectors (or zero), later rows spare room
    # that _append fills in place so a refresh does not copy the whole matrix.
    buffer: npt.NDArray[np.float32]
    live: Mask  # False for rows whose item was deleted since loading (compacted lazily)
    dead: int
    marks: Marks = (0, 0, 0)

    @staticmethod
    def newest_marks(conn: sqlite3.Connection) -> Marks:
        """The index's marks now (highest item rowid, embedding seq, deletion seq)."""
        items, vectors, deletions, _ = conn.execute(_MARKS_SQL).fetchone()
        return (int(items), int(vectors), int(deletions))

    @classmethod
    def load(cls, conn: sqlite3.Connection, model: str, dim: int) -> VectorSnapshot:
        """Every embedded item of ``model``; read in one transaction so marks match rows."""
        with read_transaction(conn):
            return cls._stream(conn, model, dim, cls.newest_marks(conn))

    def refresh(self, conn: sqlite3.Connection, model: str, dim: int) -> VectorSnapshot:
        """This snapshot brought up to date: drop deleted rows, add newer ones.

        Reads only what changed: items and vectors past the marks, and deletions
        from the ``item_deletions`` log. If the log was pruned past this snapshot's
        mark (or cleared by a reset), everything is loaded again.
        """
        items_mark, vectors_mark, deletions_mark = self.marks
        with read_transaction(conn):
            *marks, oldest_deletion = conn.execute(_MARKS_SQL).fetchone()
            if tuple(marks) == self.marks:
                # nothing added, stored or deleted: the index changed elsewhere (each
                # recall records its hits' use), so this snapshot is the current one
                return self
            if marks[2] > deletions_mark and (
                oldest_deletion is None or oldest_deletion > deletions_mark + 1
            ):
                return VectorSnapshot._stream(conn, model, dim, tuple(marks))
            deleted = conn.execute(
                "SELECT item_rowid FROM item_deletions WHERE seq > ?", (deletions_mark,)
            ).fetchall()
            params = (model, dim * 4, items_mark, model, dim * 4, vectors_mark, items_mark)
            rows = conn.execute(_NEWER_SQL, params).fetchall()
        newer = VectorSnapshot._from_rows(rows, dim, tuple(marks))
        # A re-stored vector arrives again in ``newer``; its old copy goes.
        gone = np.isin(self.rowids, np.asarray([r for (r,) in deleted], dtype=np.int64))
        gone |= np.isin(self.rowids, newer.rowids)
        return self._drop(gone)._append(newer)

    def to_saved(self) -> tuple[Arrays, Arrays, dict[str, Any]]:
        """The live rows as a saved copy's parts (:mod:`.saved`): mapped, arrays, meta."""
        live = self.live if self.dead else None
        cols = self.cols if live is None else self.cols.take(live)
        matrix = self.matrix if live is None else self.matrix[live]
        arrays, values = item_columns_to_arrays(cols)
        meta = {"rows": len(cols), "values": values, "last_item": last_item(cols)}
        return {"vectors": matrix}, arrays, meta

    @classmethod
    def saved_kind(cls, model: str, dim: int) -> Kind[VectorSnapshot]:
        """The saved copy of the vectors of ``model`` in ``dim`` dimensions."""
        return Kind(
            "vectors",
            cls.newest_marks,
            {"model": model, "dim": dim},
            lambda copy: cls.from_saved(copy, dim),
        )

    @classmethod
    def from_saved(cls, saved: Saved, dim: int) -> VectorSnapshot:
        """The snapshot a saved copy holds, its vectors memory-mapped (read-only).

        Raises ``ValueError``, ``KeyError`` or ``TypeError`` if the parts do not fit
        together. The mapped matrix has no spare rows, so the first rows a refresh
        adds copy it into memory (:meth:`_append`); nothing ever writes to the file.
        """
        rows = int(saved.meta["rows"])
        matrix = saved.mapped["vectors"]
        if matrix.dtype != np.float32 or matrix.shape != (rows, dim) or len(saved.marks) != 3:
            raise ValueError("vectors of another shape")
        cols = item_columns_from_arrays(saved.arrays, saved.meta["values"], rows)
        items, vectors, deletions = saved.marks
        return cls(
            cols=cols,
            buffer=matrix,
            live=np.ones(rows, dtype=np.bool_),
            dead=0,
            marks=(items, vectors, deletions),
        )

    @property
    def matrix(self) -> npt.NDArray[np.float32]:
        return self.buffer[: len(self.cols)]

    @property
    def rowids(self) -> Rowids:
        return self.cols.rowids

    @classmethod
    def _stream(
        cls, conn: sqlite3.Connection, model: str, dim: int, marks: tuple[int, ...]
    ) -> VectorSnapshot:
        """Every embedded item, read in batches into a matrix of the exact size.

        Never holds all the vector blobs at once (2 GB at 1M × 512): peak memory is
        the matrix plus one batch.
        """
        (count,) = conn.execute(_COUNT_SQL, (model, dim * 4)).fetchone()
        matrix = np.empty((count, dim), dtype=np.float32)
        columns: list[Any] = []
        cursor = conn.execute(_ALL_SQL, (model, dim * 4))
        n = 0
        while batch := cursor.fetchmany(4096):
            for row in batch:
                matrix[n] = np.frombuffer(row[COLUMN_COUNT], dtype="<f4")
                columns.append(row[:COLUMN_COUNT])
                n += 1
        return cls(
            cols=ItemColumns.from_rows(columns),
            buffer=matrix[:n],
            live=np.ones(n, dtype=np.bool_),
            dead=0,
            marks=(int(marks[0]), int(marks[1]), int(marks[2])),
        )

    @classmethod
    def _from_rows(cls, rows: list[Any], dim: int, marks: tuple[int, ...]) -> VectorSnapshot:
        # Stored vectors are already unit length (SqliteIndex.store_embeddings).
        # Row-by-row copies beat b"".join + frombuffer: no second 4·n·dim buffer.
        matrix = np.empty((len(rows), dim), dtype=np.float32)
        for n, row in enumerate(rows):
            matrix[n] = np.frombuffer(row[COLUMN_COUNT], dtype="<f4")
        return cls(
            cols=ItemColumns.from_rows(rows),
            buffer=matrix,
            live=np.ones(len(rows), dtype=np.bool_),
            dead=0,
            marks=(int(marks[0]), int(marks[1]), int(marks[2])),
        )

    def _drop(self, gone: Mask) -> VectorSnapshot:
        """Mark ``gone`` rows dead; compact once over a quarter of the rows are dead."""
        live = self.live & ~gone
        dead = len(live) - int(np.count_nonzero(live))
        if dead == self.dead:
            return self
        if dead * 4 <= len(live):
            return replace(self, live=live, dead=dead)
        return VectorSnapshot(
            cols=self.cols.take(live),
            buffer=self.matrix[live],
            live=np.ones(len(live) - dead, dtype=np.bool_),
            dead=0,
            marks=self.marks,
        )

    def _append(self, new: VectorSnapshot) -> VectorSnapshot:
        """Rows of ``new`` added at the end; a full buffer grows by 25 % (amortised O(1))."""
        if len(new) == 0:
            return replace(self, marks=new.marks)
        start, end = len(self), len(self) + len(new)
        buffer = self.buffer
        if buffer.shape[0] < end:
            buffer = np.empty((end + end // 4 + 64, new.buffer.shape[1]), dtype=np.float32)
            buffer[:start] = self.matrix
        buffer[start:end] = new.matrix
        return VectorSnapshot(
            cols=self.cols.concat(new.cols),
            buffer=buffer,
            live=np.concatenate([self.live, new.live]),
            dead=self.dead,
            marks=new.marks,
        )

    def __len__(self) -> int:
        return len(self.cols)

    def vectors_at(self, rows: Sequence[tuple[int, str]]) -> dict[str, npt.NDArray[np.float32]]:
        """The unit vector of each ``(rowid, id)`` this snapshot holds live, by id
        (others absent)."""
        if not rows:
            return {}
        places = self.cols.positions(np.asarray([rowid for rowid, _ in rows], dtype=np.int64))
        held = [
            (item_id, int(n))
            for (_, item_id), n in zip(rows, places.tolist(), strict=True)
            if n >= 0 and (not self.dead or self.live[n])
        ]
        block = self.matrix[[n for _, n in held]]
        return {item_id: block[m] for m, (item_id, _) in enumerate(held)}

    def mask(self, flt: RecallFilter) -> Mask | None:
        """Rows passing every non-join filter of ``flt``; ``None`` means all rows."""
        return self.cols.mask(flt, self.live if self.dead else None)

    def search(
        self,
        query: Vector,
        flt: RecallFilter,
        limit: int,
        allowed_rowids: Rowids | None = None,
        ann: AnnGraph | None = None,
        scores: npt.NDArray[np.float32] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``limit`` rows most cosine-similar to ``query``, best first (ties by id).

        Score is ``m_i · q / |q|`` with unit rows ``m_i``. Rows are chosen on fast
        scores: one matrix-vector product, or ``scores``, the query's column of a matrix
        product over a batch of queries (:class:`~.batch.QueryScores`, one row per row of
        this snapshot). BLAS rounds the last bit differently by the shape of the product,
        so the rows near the cut are scored again one by one (:func:`similarities`, whose
        result depends on nothing but the row and the query): a query finds the same rows
        with the same scores alone, in a batch, or under a narrow filter. With ``ann`` (a
        graph covering this snapshot) the rows scored are the graph's candidates that
        pass the filter, unless too few do (:mod:`.ann`).
        """
        if limit <= 0 or len(self) == self.dead:
            return []
        q = unit(query)
        if q is None:
            return []
        mask = self.mask(flt)
        if allowed_rowids is not None:
            in_allowed = np.isin(self.rowids, allowed_rowids)
            mask = in_allowed if mask is None else mask & in_allowed
        if ann is not None:
            kept = len(self) - self.dead if mask is None else int(np.count_nonzero(mask))
            if kept == 0:
                return []
            found = self._search_ann(ann, q, mask, limit, kept)
            if found is not None:
                return found
        candidates = None if mask is None else np.flatnonzero(mask)
        if candidates is not None and candidates.size == 0:
            return []
        if candidates is None or candidates.size == len(self):  # e.g. the only agent
            return self._best(self.matrix @ q if scores is None else scores, None, q, limit)
        # A narrow filter multiplies only the selected rows; a wide one multiplies all
        # (a fancy-indexed copy of most of the matrix costs more than the product).
        if scores is None and candidates.size * 4 < len(self):
            fast = self.matrix[candidates] @ q
        else:
            fast = (self.matrix @ q if scores is None else scores)[candidates]
        return self._best(fast, candidates, q, limit)

    def _best(
        self,
        fast: npt.NDArray[np.float32],
        rows: npt.NDArray[np.int64] | None,
        q: npt.NDArray[np.float32],
        limit: int,
    ) -> list[tuple[str, float]]:
        """The ``limit`` best of the rows ``rows`` (all when None) by exact score, best
        first, ties by id; ``fast`` holds their fast scores, in the same order.

        Every row whose fast score is within :data:`SLACK` of the ``limit``-th best is
        scored exactly; the rows fast scores would rank in or out wrongly differ from it
        by rounding alone (a few 1e-7), so the exact best ``limit`` are among them.
        """
        k = min(limit, fast.size)
        if k < fast.size:  # O(n) selection of the cut, then the few rows near it
            cut = np.partition(fast, fast.size - k)[fast.size - k]
            near = np.flatnonzero(fast >= cut - SLACK)
        else:
            near = np.arange(fast.size)
        chosen = near if rows is None else rows[near]
        exact = similarities(self.matrix[chosen], q).tolist()
        return best_first(zip(self.cols.ids[chosen].tolist(), exact, strict=True))[:k]

    def _search_ann(
        self,
        ann: AnnGraph,
        q: npt.NDArray[np.float32],
        mask: Mask | None,
        limit: int,
        kept: int,
    ) -> list[tuple[str, float]] | None:
        """Exact scores of the graph's candidates passing ``mask``; None if too few pass."""
        count = ann_count(limit, kept, len(self))
        if count is None:
            return None
        rows = self.cols.positions(ann.search(q, count))
        rows = rows[rows >= 0]
        if mask is not None:
            rows = rows[mask[rows]]
        if rows.size < min(limit, kept):
            return None
        return self._best(self.matrix[rows] @ q, rows, q, limit)


SLACK = 1e-4
"""How far under the cut a fast score may be and its row still be scored exactly: far
more than the rounding by which BLAS kernels differ on unit vectors (below 1e-6)."""


def unit(query: Vector) -> npt.NDArray[np.float32] | None:
    """``query`` as a float32 unit vector; None for a zero vector (it matches nothing)."""
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    q_norm = float(np.linalg.norm(q))
    if q_norm == 0.0:
        return None
    return q / q_norm


def similarities(
    rows: npt.NDArray[np.float32], q: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """``rows_i · q`` for each row: elementwise products summed row by row, so each
    result depends on its row and ``q`` alone (BLAS's products round by their shape)."""
    found: npt.NDArray[np.float32] = np.multiply(rows, q).sum(axis=1, dtype=np.float32)
    return found


@contextmanager
def read_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """Several SELECTs seeing one state of the database (``conn`` is in autocommit mode)."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")
