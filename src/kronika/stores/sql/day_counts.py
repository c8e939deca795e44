"""Items created per UTC day, per tier and type, counted in SQL (the growth chart).

The same filter as the index's lists (the reader's visibility included,
:func:`~.where.filter_clause`), so a day's count is exactly how many of the items that
list returns were created that day, without reading them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kronika.core.model import RecallFilter
from kronika.ports import DayCount
from kronika.stores.filters import to_epoch
from kronika.stores.sql.dialect import Dialect
from kronika.stores.sql.where import filter_clause


def created_per_day(d: Dialect, conn: Any, flt: RecallFilter, since: datetime) -> list[DayCount]:
    """``count(day, tier, type) = |{i passing flt : created_at ≥ since, utc_day(i) = day}|``."""
    where, params = filter_clause(d, flt)
    rows = conn.execute(
        f"SELECT {d.utc_day('i.created_at')} AS day, i.tier, i.type, count(*)"
        f" FROM {d.items} AS i WHERE {where} AND i.created_at >= {d.mark}"
        " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        [*params, to_epoch(since)],
    ).fetchall()
    return [DayCount(str(d), str(tier), str(kind), int(n)) for d, tier, kind, n in rows]
