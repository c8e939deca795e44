"""The vector scores of a batch of queries, from one matrix product.

A vector search reads every row of the snapshot's matrix for one query: at 10k × 512
floats that is 20 MB of memory read for a few multiplications per float, so the search
waits on memory, not on arithmetic. Queries that arrive together (the server embeds
them together, :mod:`kronika.server.batching`) are better scored together: one matrix
product ``M · Qᵀ`` reads the matrix once for the whole batch. Measured on a 2-core
machine with one BLAS thread, 10k × 512: 1.5 ms of CPU for one query alone, 4.5 ms for
16 together (0.3 ms each).

:class:`QueryScores` holds the batch's queries and computes the product the first time
one of them is searched, against the snapshot of that moment (again if its rows
changed meanwhile). Each query's column is handed out once per time it was asked for;
when every one has been, the scores are let go, so nothing outlives its batch and no
later recall reads them (:meth:`SqliteIndex.score_together
<kronika.stores.sqlite.index.SqliteIndex.score_together>`). Over many rows the product
is taken for a group of queries at a time, so that no more than :data:`MAX_SCORES`
similarities are held at once.

The column only chooses candidates: :meth:`VectorSnapshot.search
<kronika.stores.sqlite.vectors.VectorSnapshot.search>` scores the rows near the cut
again one by one, so a query's hits and scores are the same in a batch as alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kronika.ports import Vector
from kronika.stores.sqlite.vectors import VectorSnapshot, unit


def _key(query: Vector) -> bytes:
    return np.asarray(query, dtype=np.float32).reshape(-1).tobytes()


MAX_SCORES = 4_000_000
"""Most similarities held at once (16 MB of float32): a batch over more rows than this
allows for all its queries is scored in groups of queries, one group at a time."""


class QueryScores:
    """Similarities of every row of a snapshot to each query of a batch (module docstring)."""

    def __init__(self, queries: Sequence[Vector], *, max_scores: int = MAX_SCORES) -> None:
        units: dict[bytes, npt.NDArray[np.float32]] = {}
        self._wanted: Counter[bytes] = Counter()
        for query in queries:
            q = unit(query)
            if q is None:  # a zero vector matches nothing: the search says so itself
                continue
            key = _key(query)
            units.setdefault(key, q)
            self._wanted[key] += 1
        self._column = {key: n for n, key in enumerate(units)}
        self._queries = np.stack(list(units.values())) if units else None
        self._max_scores = max_scores
        self._rows: tuple[npt.NDArray[np.float32], int] | None = None
        self._group = range(0)  # the columns self._scores holds
        self._scores: npt.NDArray[np.float32] | None = None

    def __len__(self) -> int:
        """Searches of the batch still to come."""
        return sum(self._wanted.values())

    def take(self, snapshot: VectorSnapshot, query: Vector) -> npt.NDArray[np.float32] | None:
        """``query``'s similarity to every row of ``snapshot``; None when ``query`` is not
        one of the batch's (or was searched as often as it was asked for)."""
        key = _key(query)
        if self._wanted[key] <= 0 or self._queries is None:
            return None
        column = self._column[key]
        if self._scores is None or column not in self._group or not self._fits(snapshot):
            # queries are searched in the order they were embedded: in groups, in turn
            size = max(2, self._max_scores // max(len(snapshot), 1))
            start = column - column % size
            self._group = range(start, min(start + size, len(self._queries)))
            group = self._queries[self._group.start : self._group.stop]
            self._scores = snapshot.matrix @ group.T
            self._rows = (snapshot.buffer, len(snapshot))
        found = self._scores[:, column - self._group.start]
        self._wanted[key] -= 1
        if not len(self):  # the column handed out stays valid
            self._scores, self._rows, self._group = None, None, range(0)
        return found

    def _fits(self, snapshot: VectorSnapshot) -> bool:
        """Whether the scores are of ``snapshot``'s rows. Each recall records its hits'
        use, so the next one finds a refreshed snapshot; its rows are the same while it
        keeps the buffer and the row count (rows are only added at the end, in place,
        or the whole matrix is copied; deleted rows are masked, not moved)."""
        return self._rows is not None and (
            self._rows[0] is snapshot.buffer and self._rows[1] == len(snapshot)
        )
