"""Items of :class:`~kronika.stores.sqlite.SqliteIndex` read by id, by filter or as
counts (:class:`~kronika.ports.IndexReads`), and the mark that changes with every
write of an item (:class:`~kronika.ports.ItemsMark`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from kronika.core.model import MemoryItem, RecallFilter
from kronika.ports import (
    DayCount,
)
from kronika.stores.sql import day_counts
from kronika.stores.sqlite import rows as R
from kronika.stores.sqlite.dialect import SQLITE
from kronika.stores.sqlite.index_base import IndexState, _chunks
from kronika.stores.sqlite.query import filter_clause

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
    """Items by id or filter, their counts, and the mark of their changes
    (:class:`~kronika.ports.IndexReads`, :class:`~kronika.ports.ItemsMark`)."""

    def __init__(self, state: IndexState) -> None:
        self.state = state

    def items_mark(self) -> tuple[str, int, int]:
        """What changes with every write of an item, by this connection or another
        (:class:`~kronika.ports.ItemsMark`): the highest item rowid and deletion seq
        ever given (an item is only ever inserted anew or deleted, each deletion logged,
        and neither count goes back, not even when the rows go) and the file's
        identity (a file made anew starts both again). Usage statistics leave it."""
        with self.state.reading() as conn:
            items, deletions, identity = conn.execute(_ITEMS_MARK_SQL).fetchone()
        return (str(identity), int(items), int(deletions))

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

    def count_items(self, flt: RecallFilter) -> int:
        where, params = filter_clause(flt)
        with self.state.reading() as conn:
            (n,) = conn.execute(f"SELECT count(*) FROM items AS i WHERE {where}", params).fetchone()
        return int(n)

    def list_keys(self, flt: RecallFilter, *, limit: int) -> list[str]:
        where, params = filter_clause(flt)
        sql = (
            "SELECT key FROM (SELECT i.key, i.created_at FROM items AS i"
            f" WHERE {where} AND i.key IS NOT NULL ORDER BY i.created_at DESC, i.id LIMIT ?)"
            " GROUP BY key ORDER BY max(created_at) DESC, key"
        )
        with self.state.reading() as conn:
            return [key for (key,) in conn.execute(sql, [*params, limit])]

    def created_per_day(self, flt: RecallFilter, since: datetime) -> list[DayCount]:
        with self.state.reading() as conn:
            return day_counts.created_per_day(SQLITE, conn, flt, since)
