"""Items of :class:`~kronika.stores.postgres.index.PostgresIndex` read by id, by filter
or as counts (:class:`~kronika.ports.IndexReads`): reads that may lag, on the read
replica when it has replayed what this worker must see (:meth:`.PostgresState.lagging`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from datetime import datetime
from typing import Any

from kronika.core.model import MemoryItem, RecallFilter
from kronika.ports import (
    DayCount,
)
from kronika.stores.postgres.arrays import text_array
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

_ITEMS_MARK_SQL = (
    "SELECT 'idx_corpus'::regclass::oid, count(*), md5(coalesce(string_agg(format("
    "'%s.%s.%s.%s.%s', length(agent), length(tenant), agent, tenant, generation), ''"
    " ORDER BY agent, tenant), '')) FROM idx_corpus"
)
"""The state of every agent's items, in one short row: each (agent, tenant) of
``idx_corpus`` carries a generation that every insert and delete of its items moves to
a new value of one sequence (migration ``0201``); an item is only ever inserted anew or
deleted (a row that only moved in its file keeps its fields but ``pos`` and ``line``)."""


class PostgresReads:
    """Items by id or filter and their counts (:class:`~kronika.ports.IndexReads`)."""

    def __init__(self, state: PostgresState) -> None:
        self.state = state

    def items_mark(self) -> Hashable:
        """What changes with every write of an item, by this worker or another
        (:class:`~kronika.ports.ItemsMark`): the generations of every agent's items
        (:data:`_ITEMS_MARK_SQL`), one round trip of a few hundred microseconds where
        the user's keys and names it saves reading cost milliseconds at 10,000 items.
        With a read replica a new object each time (never the same mark): the mark and
        the reading it guards could come from different servers, the reading the older."""
        if self.state.replica is not None:
            return object()
        with self.state.reading() as conn:
            oid, agents, digest = conn.execute(_ITEMS_MARK_SQL).fetchone()
        return (int(oid), int(agents), str(digest))

    def get_items(self, ids: Sequence[str]) -> list[MemoryItem]:
        """Items in the order of ``ids`` (unknown ids skipped), with usage statistics."""

        def work(conn: Any) -> dict[str, MemoryItem]:
            rows = conn.execute(
                f"{SELECT_ITEM} WHERE i.id = ANY(%s::text[])", (text_array(set(ids)),)
            ).fetchall()
            return {item.id: item for item in map(item_from_row, rows)}

        found = self.state.lagging(work)
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
        asked = [*params, limit, offset]
        return self.state.lagging(
            lambda conn: [item_from_row(row) for row in conn.execute(sql, asked).fetchall()]
        )

    def count_items(self, flt: RecallFilter) -> int:
        where, params = filter_clause(flt)
        sql = f"SELECT count(*) FROM idx_items AS i WHERE {where}"
        return self.state.lagging(lambda conn: int(conn.execute(sql, params).fetchone()[0]))

    def list_keys(self, flt: RecallFilter, *, limit: int) -> list[str]:
        where, params = filter_clause(flt)
        # one row, the keys in an array: a thousand rows cost more to fetch than to find
        sql = (
            'SELECT array_agg(key ORDER BY newest DESC, key COLLATE "C") FROM (SELECT key,'
            " max(created_at) AS newest FROM (SELECT i.key, i.created_at FROM idx_items AS i"
            f" WHERE {where} AND i.key IS NOT NULL ORDER BY i.created_at DESC, i.id {ID_ORDER}"
            " LIMIT %s) AS k GROUP BY key) AS g"
        )
        return self.state.lagging(
            lambda conn: list(conn.execute(sql, [*params, limit]).fetchone()[0] or ())
        )

    def created_per_day(self, flt: RecallFilter, since: datetime) -> list[DayCount]:
        return self.state.lagging(lambda conn: created_per_day(POSTGRES, conn, flt, since))
