"""Items created per UTC day, per tier and type, counted in SQL (the growth chart).

The same filter as :meth:`~kronika.stores.sqlite.SqliteIndex.list_items` (the reader's
visibility included, :func:`~.query.filter_clause`), so a day's count is exactly how
many of the items that list returns were created that day, without reading them.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

from kronika.core.model import RecallFilter
from kronika.ports import DayCount
from kronika.stores.sqlite.query import filter_clause, to_epoch


def created_per_day(conn: sqlite3.Connection, flt: RecallFilter, since: datetime) -> list[DayCount]:
    """``count(day, tier, type) = |{i passing flt : created_at ≥ since, utc_day(i) = day}|``."""
    where, params = filter_clause(flt)
    rows = conn.execute(
        "SELECT date(i.created_at, 'unixepoch') AS day, i.tier, i.type, count(*)"
        f" FROM items AS i WHERE {where} AND i.created_at >= ?"
        " GROUP BY day, i.tier, i.type ORDER BY day, i.tier, i.type",
        [*params, to_epoch(since)],
    ).fetchall()
    return [DayCount(str(d), str(tier), str(kind), int(n)) for d, tier, kind, n in rows]
