"""Exact cosine search over an in-memory matrix of the current model's item vectors (SPEC R5).

A :class:`VectorSnapshot` is loaded once from SQLite and reused until the index
changes. Filters on agent, tenant, scope, type, channel, speaker, status and time
become boolean masks over parallel numpy arrays; the caller passes the allowed
rowids for filters that need a join (keys, entities).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from kronika.core.model import RecallFilter
from kronika.ports import Vector
from kronika.stores.sqlite.query import excluded_statuses, normalise_name, to_epoch

_COLUMNS = """
SELECT i.rowid, i.id, i.agent, i.tenant, i.scope, i.type, i.status, i.channel,
       i.speaker_norm, i.created_at, coalesce(i.valid_from, i.created_at), i.valid_to, e.vec
"""
_ALL_SQL = (
    _COLUMNS + "FROM items AS i JOIN embeddings AS e ON e.text_hash = i.text_hash"
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

Codes = npt.NDArray[np.int32]
Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
Rowids = npt.NDArray[np.int64]
Marks = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class CodedColumn:
    """A string column as small integer codes: ``values[codes[i]]`` is row ``i``'s value."""

    codes: Codes
    index: dict[str | None, int]

    @classmethod
    def encode(cls, values: Iterable[str | None]) -> CodedColumn:
        index: dict[str | None, int] = {}
        codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int32)
        return cls(codes, index)

    def mask(self, allowed: Iterable[str | None]) -> Mask:
        wanted = [self.index[v] for v in set(allowed) if v in self.index]
        return np.isin(self.codes, np.asarray(wanted, dtype=np.int32))

    def take(self, keep: Mask) -> CodedColumn:
        return CodedColumn(self.codes[keep], self.index)

    def concat(self, other: CodedColumn) -> CodedColumn:
        index = dict(self.index)
        remap = np.fromiter((index.setdefault(v, len(index)) for v in other.index), dtype=np.int32)
        return CodedColumn(np.concatenate([self.codes, remap[other.codes]]), index)


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

    rowids: Rowids
    ids: npt.NDArray[np.object_]
    # (capacity, dim); rows [0, n) are unit vectors (or zero), later rows spare room
    # that _append fills in place so a refresh does not copy the whole matrix.
    buffer: npt.NDArray[np.float32]
    live: Mask  # False for rows whose item was deleted since loading (compacted lazily)
    dead: int
    agent: CodedColumn
    tenant: CodedColumn
    scope: CodedColumn
    type: CodedColumn
    status: CodedColumn
    channel: CodedColumn
    speaker: CodedColumn
    created_at: Floats
    valid_from: Floats  # valid_from, else created_at
    valid_to: Floats  # +inf when open-ended
    marks: Marks = (0, 0, 0)

    @classmethod
    def load(cls, conn: sqlite3.Connection, model: str, dim: int) -> VectorSnapshot:
        """Every embedded item of ``model``; read in one transaction so marks match rows."""
        with _read_transaction(conn):
            *marks, _ = conn.execute(_MARKS_SQL).fetchone()
            rows = conn.execute(_ALL_SQL, (model, dim * 4)).fetchall()
        return cls._from_rows(rows, dim, tuple(marks))

    def refresh(self, conn: sqlite3.Connection, model: str, dim: int) -> VectorSnapshot:
        """This snapshot brought up to date: drop deleted rows, add newer ones.

        Reads only what changed: items and vectors past the marks, and deletions
        from the ``item_deletions`` log. If the log was pruned past this snapshot's
        mark (or cleared by a reset), everything is loaded again.
        """
        items_mark, vectors_mark, deletions_mark = self.marks
        with _read_transaction(conn):
            *marks, oldest_deletion = conn.execute(_MARKS_SQL).fetchone()
            if marks[2] > deletions_mark and (
                oldest_deletion is None or oldest_deletion > deletions_mark + 1
            ):
                rows = conn.execute(_ALL_SQL, (model, dim * 4)).fetchall()
                return VectorSnapshot._from_rows(rows, dim, tuple(marks))
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

    @property
    def matrix(self) -> npt.NDArray[np.float32]:
        return self.buffer[: len(self.ids)]

    @classmethod
    def _from_rows(cls, rows: list[Any], dim: int, marks: tuple[int, ...]) -> VectorSnapshot:
        columns = list(zip(*rows, strict=True)) if rows else [()] * 13
        # Stored vectors are already unit length (SqliteIndex.store_embeddings).
        # Row-by-row copies beat b"".join + frombuffer: no second 4·n·dim buffer.
        matrix = np.empty((len(rows), dim), dtype=np.float32)
        for n, blob in enumerate(columns[12]):
            matrix[n] = np.frombuffer(blob, dtype="<f4")
        return cls(
            rowids=np.asarray(columns[0], dtype=np.int64),
            ids=np.asarray(columns[1], dtype=object),
            buffer=matrix,
            live=np.ones(len(rows), dtype=np.bool_),
            dead=0,
            agent=CodedColumn.encode(columns[2]),
            tenant=CodedColumn.encode(columns[3]),
            scope=CodedColumn.encode(columns[4]),
            type=CodedColumn.encode(columns[5]),
            status=CodedColumn.encode(columns[6]),
            channel=CodedColumn.encode(columns[7]),
            speaker=CodedColumn.encode(columns[8]),
            created_at=np.asarray(columns[9], dtype=np.float64),
            valid_from=np.asarray(columns[10], dtype=np.float64),
            valid_to=np.asarray([np.inf if v is None else v for v in columns[11]], np.float64),
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
            rowids=self.rowids[live],
            ids=self.ids[live],
            buffer=self.matrix[live],
            live=np.ones(len(live) - dead, dtype=np.bool_),
            dead=0,
            agent=self.agent.take(live),
            tenant=self.tenant.take(live),
            scope=self.scope.take(live),
            type=self.type.take(live),
            status=self.status.take(live),
            channel=self.channel.take(live),
            speaker=self.speaker.take(live),
            created_at=self.created_at[live],
            valid_from=self.valid_from[live],
            valid_to=self.valid_to[live],
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
            rowids=np.concatenate([self.rowids, new.rowids]),
            ids=np.concatenate([self.ids, new.ids]),
            buffer=buffer,
            live=np.concatenate([self.live, new.live]),
            dead=self.dead,
            agent=self.agent.concat(new.agent),
            tenant=self.tenant.concat(new.tenant),
            scope=self.scope.concat(new.scope),
            type=self.type.concat(new.type),
            status=self.status.concat(new.status),
            channel=self.channel.concat(new.channel),
            speaker=self.speaker.concat(new.speaker),
            created_at=np.concatenate([self.created_at, new.created_at]),
            valid_from=np.concatenate([self.valid_from, new.valid_from]),
            valid_to=np.concatenate([self.valid_to, new.valid_to]),
            marks=new.marks,
        )

    def __len__(self) -> int:
        return len(self.ids)

    def mask(self, flt: RecallFilter) -> Mask | None:
        """Rows passing every non-join filter of ``flt``; ``None`` means all rows.

        Mirrors :func:`kronika.stores.sqlite.query.filter_clause` (the tests check both agree).
        """
        masks: list[Mask] = []
        if flt.agents:
            masks.append(self.agent.mask(flt.agents))
        if flt.tenant is not None:
            masks.append(self.tenant.mask([flt.tenant]))
        if flt.scopes:
            masks.append(self.scope.mask(str(s) for s in flt.scopes))
        if flt.types:
            masks.append(self.type.mask(str(t) for t in flt.types))
        if flt.channel is not None:
            masks.append(self.channel.mask([flt.channel]))
        if flt.speakers:
            masks.append(self.speaker.mask(normalise_name(s) for s in flt.speakers))
        if flt.since is not None:
            masks.append(self.created_at >= to_epoch(flt.since))
        if flt.until is not None:
            masks.append(self.created_at <= to_epoch(flt.until))
        if flt.as_of is not None:
            moment = to_epoch(flt.as_of)
            masks.append((self.valid_from <= moment) & (self.valid_to > moment))
        excluded = excluded_statuses(flt)
        if excluded:
            masks.append(~self.status.mask(excluded))
        if self.dead:
            masks.append(self.live)
        if not masks:
            return None
        combined = masks[0]
        for m in masks[1:]:
            combined = combined & m
        return combined

    def search(
        self,
        query: Vector,
        flt: RecallFilter,
        limit: int,
        allowed_rowids: Rowids | None = None,
    ) -> list[tuple[str, float]]:
        """The ``limit`` rows most cosine-similar to ``query``, best first.

        Score is ``m_i · q / |q|`` with unit rows ``m_i``; top-k by ``argpartition``
        (O(n)) and a sort of the k survivors only.
        """
        if limit <= 0 or len(self) == self.dead:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        q_norm = float(np.linalg.norm(q))
        if q_norm == 0.0:
            return []
        q = q / q_norm
        mask = self.mask(flt)
        if allowed_rowids is not None:
            in_allowed = np.isin(self.rowids, allowed_rowids)
            mask = in_allowed if mask is None else mask & in_allowed
        if mask is None:
            candidates = None
            scores = self.matrix @ q
        else:
            candidates = np.flatnonzero(mask)
            if candidates.size == 0:
                return []
            # A narrow filter multiplies only the selected rows; a wide one multiplies all
            # (a fancy-indexed copy of most of the matrix costs more than the product).
            if candidates.size * 4 < len(self):
                scores = self.matrix[candidates] @ q
            else:
                scores = (self.matrix @ q)[candidates]
        k = min(limit, scores.size)
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
        top = top[np.argsort(-scores[top], kind="stable")]
        rows = top if candidates is None else candidates[top]
        return [(self.ids[r], float(scores[t])) for r, t in zip(rows, top, strict=True)]


@contextmanager
def _read_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """Several SELECTs seeing one state of the database (``conn`` is in autocommit mode)."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")
