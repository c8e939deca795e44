"""Items of :class:`~kronika.stores.postgres.index.PostgresIndex` read by id, by filter
or as counts (:class:`~kronika.ports.IndexReads`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from kronika.core.model import MemoryItem, RecallFilter
from kronika.ports import (
    DayCount,
)
from kronika.stores.postgres.dialect import POSTGRES
from kronika.stores.postgres.index_base import (
    ID_ORDER,
    PostgresState,
)
from kronika.stores.postgres.index_rows import (
    SELECT_ITEM,
    filter_clause,
    item_from_row,
)
from kronika.stores.sql.day_counts import created_per_day


class PostgresReads:
    """Items by id or filter and their counts (:class:`~kronika.ports.IndexReads`)."""

    def __init__(self, state: PostgresState) -> None:
        self.state = state

    def get_items(self, ids: Sequence[str]) -> list[MemoryItem]:
        """Items in the order of ``ids`` (unknown ids skipped), with usage statistics."""
        with self.state.reading() as conn:
            rows = conn.execute(f"{SELECT_ITEM} WHERE i.id = ANY(%s)", (list(set(ids)),))
            found = {item.id: item for item in map(item_from_row, rows)}
        return [found[i] for i in ids if i in found]

    def list_items(
        self, flt: RecallFilter, *, limit: int | None = None, offset: int = 0
    ) -> list[MemoryItem]:
        """Items matching ``flt``, newest ``created_at`` first (ties by id)."""
        where, params = filter_clause(flt)
        sql = (
            f"{SELECT_ITEM} WHERE {where} ORDER BY i.created_at DESC, i.id {ID_ORDER}"
            " LIMIT %s OFFSET %s"
        )
        with self.state.reading() as conn:
            rows = conn.execute(sql, [*params, limit, offset])
            return [item_from_row(row) for row in rows]

    def count_items(self, flt: RecallFilter) -> int:
        where, params = filter_clause(flt)
        with self.state.reading() as conn:
            found = conn.execute(f"SELECT count(*) FROM idx_items AS i WHERE {where}", params)
            (n,) = found.fetchone()
        return int(n)

    def created_per_day(self, flt: RecallFilter, since: datetime) -> list[DayCount]:
        with self.state.reading() as conn:
            return created_per_day(POSTGRES, conn, flt, since)
