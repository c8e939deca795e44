"""Items created per UTC day, per tier and type, counted in SQL (the growth chart), as
:mod:`kronika.stores.sqlite.day_counts` counts them: the filter of the index's lists,
the reader's visibility included (:func:`~.index_rows.filter_clause`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kronika.core.model import RecallFilter
from kronika.ports import DayCount
from kronika.stores.postgres.index_rows import filter_clause
from kronika.stores.sqlite.query import to_epoch

_DAY = "to_char((to_timestamp(i.created_at) AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD')"


def created_per_day(conn: Any, flt: RecallFilter, since: datetime) -> list[DayCount]:
    """``count(day, tier, type) = |{i passing flt : created_at ≥ since, utc_day(i) = day}|``."""
    where, params = filter_clause(flt)
    rows = conn.execute(
        f"SELECT {_DAY} AS day, i.tier, i.type, count(*)"
        f" FROM idx_items AS i WHERE {where} AND i.created_at >= %s"
        " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        [*params, to_epoch(since)],
    ).fetchall()
    return [DayCount(str(d), str(tier), str(kind), int(n)) for d, tier, kind, n in rows]
