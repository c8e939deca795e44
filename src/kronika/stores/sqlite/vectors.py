"""Exact cosine search over an in-memory matrix of the current model's item vectors (SPEC R5).

A :class:`VectorSnapshot` is loaded once from SQLite and reused until the index
changes. Filters on agent, tenant, scope, type, channel, speaker, status and time
become boolean masks over parallel numpy arrays; the caller passes the allowed
rowids for filters that need a join (keys, entities).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kronika.core.model import RecallFilter
from kronika.ports import Vector
from kronika.stores.sqlite.query import excluded_statuses, normalise_name, to_epoch

_LOAD_SQL = """
SELECT i.rowid, i.id, i.agent, i.tenant, i.scope, i.type, i.status, i.channel,
       i.speaker_norm, i.created_at, coalesce(i.valid_from, i.created_at), i.valid_to, e.vec
FROM items AS i JOIN embeddings AS e ON e.text_hash = i.text_hash AND e.model = ?
WHERE length(e.vec) = ?
ORDER BY i.rowid
"""

Codes = npt.NDArray[np.int32]
Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


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


@dataclass(frozen=True, slots=True)
class VectorSnapshot:
    """Row-normalised vectors of every embedded item plus the columns filters need."""

    rowids: npt.NDArray[np.int64]
    ids: tuple[str, ...]
    matrix: npt.NDArray[np.float32]  # (n, dim), unit rows (or zero rows)
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

    @classmethod
    def load(cls, conn: sqlite3.Connection, model: str, dim: int) -> VectorSnapshot:
        rows = conn.execute(_LOAD_SQL, (model, dim * 4)).fetchall()
        n = len(rows)
        columns = list(zip(*rows, strict=True)) if rows else [()] * 13
        matrix = np.frombuffer(b"".join(columns[12]), dtype="<f4").astype(np.float32)
        matrix = matrix.reshape(n, dim)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        # Zero vectors stay zero (similarity 0) instead of becoming NaN.
        matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
        return cls(
            rowids=np.asarray(columns[0], dtype=np.int64),
            ids=tuple(columns[1]),
            matrix=np.ascontiguousarray(matrix, dtype=np.float32),
            agent=CodedColumn.encode(columns[2]),
            tenant=CodedColumn.encode(columns[3]),
            scope=CodedColumn.encode(columns[4]),
            type=CodedColumn.encode(columns[5]),
            status=CodedColumn.encode(columns[6]),
            channel=CodedColumn.encode(columns[7]),
            speaker=CodedColumn.encode(columns[8]),
            created_at=np.asarray(columns[9], dtype=np.float64),
            valid_from=np.asarray(columns[10], dtype=np.float64),
            valid_to=np.asarray(
                [np.inf if v is None else v for v in columns[11]], dtype=np.float64
            ),
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
        allowed_rowids: npt.NDArray[np.int64] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``limit`` rows most cosine-similar to ``query``, best first.

        Score is ``m_i · q / |q|`` with unit rows ``m_i``; top-k by ``argpartition``
        (O(n)) and a sort of the k survivors only.
        """
        if limit <= 0 or len(self) == 0:
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
