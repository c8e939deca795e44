"""The statements behind :meth:`PostgresIndex.neighbours`, :meth:`~PostgresIndex.score_features`
and :meth:`~PostgresIndex.read_candidates`, which sends them in one round trip."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kronika.core.model import MemoryItem, RecallFilter
from kronika.stores.postgres.arrays import text_array
from kronika.stores.postgres.index_rows import filter_clause, item_from_row

_ID = 'COLLATE "C"'  # ids sort by code point, as Python sorts them


class ItemRows(Mapping[str, MemoryItem]):
    """Items read ahead, made from their rows when asked for (most never are)."""

    def __init__(self, rows: dict[str, Any]) -> None:
        self._rows = rows
        self._made: dict[str, MemoryItem] = {}

    def __getitem__(self, item_id: str) -> MemoryItem:
        made = self._made.get(item_id)
        if made is None:
            made = self._made[item_id] = item_from_row(self._rows[item_id])
        return made

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


FEATURES = (
    "SELECT i.id, i.importance, i.created_at, u.last_accessed_at, coalesce(u.access_count, 0),"
    " i.speaker, i.session_id FROM idx_items AS i"
    " LEFT JOIN idx_usage AS u ON u.item_id = i.id WHERE i.id = ANY(%s::text[])"
)
"""The score features (:data:`~kronika.ports.FeatureRow`) of some ids (a :func:`.arrays.
text_array`), after the id."""


def neighbours_sql(
    ids: list[str], flt: RecallFilter, window: int, *, features: bool
) -> tuple[str, list[object]]:
    """The statement of :meth:`PostgresIndex.neighbours`: ``(id, neighbour, offset)`` rows,
    followed by the neighbour's score features when ``features``."""
    where, params = filter_clause(flt, alias="n")
    extra = (
        ", n.importance, n.created_at, u.last_accessed_at, coalesce(u.access_count, 0),"
        " n.speaker, n.session_id"
        if features
        else ""
    )
    usage = " LEFT JOIN idx_usage AS u ON u.item_id = n.id" if features else ""
    # OFFSET 0 fences keep this plan whatever the statistics say (right after a bulk
    # load they say nothing): each message by its id, then a range of its source's
    # positions.
    sql = (
        f"SELECT c.id, n.id, n.pos - c.pos{extra} FROM (SELECT id, source_agent, source_path,"
        " pos, session_id, speaker_norm FROM idx_items WHERE id = ANY(%s::text[])"
        " AND type = 'message' OFFSET 0) AS c CROSS JOIN LATERAL"
        " (SELECT n.id, n.pos, n.importance, n.created_at, n.speaker, n.session_id"
        " FROM idx_items AS n WHERE n.source_agent = c.source_agent"
        " AND n.source_path = c.source_path"
        " AND n.pos BETWEEN c.pos - %s AND c.pos + %s AND n.pos != c.pos"
        " AND n.session_id = c.session_id AND n.type = 'message'"
        " AND coalesce(n.speaker_norm, '') != coalesce(c.speaker_norm, '')"
        f" AND {where} OFFSET 0) AS n{usage}"
        f" ORDER BY c.id {_ID}, n.pos"
    )
    return sql, [text_array(ids), window, window, *params]
