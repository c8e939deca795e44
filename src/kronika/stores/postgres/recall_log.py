"""The recall log in PostgreSQL (:class:`kronika.ports.RecallLog`), as the SQLite index
keeps it (:mod:`kronika.stores.sqlite.recall_log`).

Its tables (migration ``0500_recall_log``) live in the shared schema, keyed by tenant;
each read joins the tenant's ``idx_items`` (first on the index connection's
``search_path``) under the viewer's visibility (:func:`~.index_rows.filter_clause`).
An appended use locks the item it names (``FOR KEY SHARE``), so a forget that deletes
the item at the same moment either waits for it and then takes the use away
(:func:`drop_forgotten`), or has deleted it first and the use is not written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kronika.core.model import RecallFilter
from kronika.core.recall_log import ALL_AGENTS, RecallDay, RecallEntry
from kronika.ports import ItemUses
from kronika.stores.postgres.index_rows import filter_clause
from kronika.stores.sqlite.query import to_epoch

Reading = Callable[[], AbstractContextManager[Any]]
Writing = Callable[[Callable[[Any], Any]], Any]
_DAY = "to_char((to_timestamp({0}) AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD')"


@dataclass(frozen=True, slots=True)
class _Scope:
    recalls: str
    params: list[object]
    own: str
    own_params: list[object]


class PostgresRecallLog:
    """The log of ``tenant`` over the index's connection."""

    def __init__(self, reading: Reading, write: Writing, tenant: str) -> None:
        self._reading = reading
        self._write = write
        self._tenant = tenant

    def append(self, entries: Sequence[RecallEntry]) -> None:
        if not entries:
            return

        def work(conn: Any) -> None:
            for e in entries:
                (recall_id,) = conn.execute(
                    "INSERT INTO recall_log (at, tenant, agent, user_id, channel, hits, query)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
                    (to_epoch(e.at), e.tenant, e.agent, e.user, e.channel, e.hits, e.query),
                ).fetchone()
                if e.item_ids:
                    conn.execute(
                        "INSERT INTO recall_log_items (recall_id, rank, item_id)"
                        " SELECT %s, u.n - 1, u.id FROM unnest(%s::text[]) WITH ORDINALITY"
                        " AS u(id, n) JOIN idx_items AS i ON i.id = u.id FOR KEY SHARE OF i",
                        (recall_id, list(e.item_ids)),
                    )

        self._write(work)

    def _scope(self, flt: RecallFilter, since: datetime | None) -> _Scope:
        agent = flt.agents[0]
        start = -1e18 if since is None else to_epoch(since)
        recalls = "SELECT * FROM recall_log WHERE tenant = %s AND agent = ANY(%s) AND at >= %s"
        own = "r.agent = %s"  # the owner's (no reader) is every recall of the agent
        own_params: list[object] = [agent]
        reader = flt.reader
        if reader is not None:
            own += (
                " AND r.tenant = %s AND r.user_id IS NOT DISTINCT FROM %s"
                " AND r.channel IS NOT DISTINCT FROM %s"
            )
            own_params += [reader.tenant, reader.user, reader.channel]
        return _Scope(recalls, [self._tenant, [agent, ALL_AGENTS], start], own, own_params)

    @staticmethod
    def _seen(flt: RecallFilter) -> tuple[str, list[object]]:
        where, params = filter_clause(
            RecallFilter(
                agents=flt.agents, tenant=flt.tenant, reader=flt.reader, include_superseded=True
            )
        )
        return (
            "SELECT u.recall_id, u.rank, u.item_id FROM recall_log_items AS u"
            " JOIN idx_items AS i ON i.id = u.item_id"
            f" WHERE u.recall_id IN (SELECT id FROM r) AND {where}"
        ), params

    def per_day(self, flt: RecallFilter, since: datetime) -> list[RecallDay]:
        sc = self._scope(flt, since)
        seen, seen_params = self._seen(flt)
        sql = (
            f"WITH r AS ({sc.recalls}), s AS ({seen})"
            f" SELECT {_DAY.format('r.at')} AS day, count(DISTINCT r.id), count(s.item_id),"
            " count(DISTINCT s.item_id) FROM r LEFT JOIN s ON s.recall_id = r.id"
            f" WHERE s.recall_id IS NOT NULL OR ({sc.own}) GROUP BY day ORDER BY day"
        )
        with self._reading() as conn:
            rows = conn.execute(sql, [*sc.params, *seen_params, *sc.own_params]).fetchall()
        return [RecallDay(str(d), int(n), int(u), int(i)) for d, n, u, i in rows]

    def top(self, flt: RecallFilter, since: datetime, limit: int) -> list[ItemUses]:
        sc = self._scope(flt, since)
        seen, seen_params = self._seen(flt)
        sql = (
            f"WITH r AS ({sc.recalls}), s AS ({seen})"
            " SELECT s.item_id, count(*) AS n, max(r.at) AS last"
            " FROM s JOIN r ON r.id = s.recall_id"
            " GROUP BY s.item_id ORDER BY n DESC, last DESC, s.item_id LIMIT %s"
        )
        with self._reading() as conn:
            rows = conn.execute(sql, [*sc.params, *seen_params, limit]).fetchall()
        return [(str(i), int(n), datetime.fromtimestamp(float(t), tz=UTC)) for i, n, t in rows]

    def entries(self, flt: RecallFilter, since: datetime | None = None) -> list[RecallEntry]:
        sc = self._scope(flt, since)
        seen, seen_params = self._seen(flt)
        sql = (
            f"WITH r AS ({sc.recalls}), s AS ({seen})"
            " SELECT r.at, r.tenant, r.agent, r.user_id, r.channel, r.hits, r.query,"
            f" ({sc.own}), ARRAY(SELECT s.item_id FROM s WHERE s.recall_id = r.id"
            " ORDER BY s.rank)"
            f" FROM r WHERE ({sc.own}) OR EXISTS (SELECT 1 FROM s WHERE s.recall_id = r.id)"
            " ORDER BY r.at, r.id"
        )
        params = [*sc.params, *seen_params, *sc.own_params, *sc.own_params]
        with self._reading() as conn:
            rows = conn.execute(sql, params).fetchall()
        found = []
        for at, tenant, agent, user, channel, hits, query, own, ids in rows:
            if not own:  # another reader's recall: only what the viewer may see of it
                user = channel = query = None
                hits = len(ids)
            found.append(
                RecallEntry(
                    at=datetime.fromtimestamp(float(at), tz=UTC),
                    tenant=str(tenant),
                    agent=str(agent),
                    user=user,
                    channel=channel,
                    hits=int(hits),
                    item_ids=tuple(ids),
                    query=query,
                )
            )
        return found

    def prune(self, before: datetime) -> int:
        def work(conn: Any) -> int:
            # the items of a pruned recall go with it (ON DELETE CASCADE)
            gone = conn.execute(
                "DELETE FROM recall_log WHERE tenant = %s AND at < %s",
                (self._tenant, to_epoch(before)),
            )
            return int(gone.rowcount)

        return int(self._write(work))


def drop_forgotten(conn: Any, tenant: str, ids: Sequence[str]) -> None:
    """Inside the index's write: take the ids of ``ids`` no item has any more out of
    ``tenant``'s log, and the query of every recall that used one of them."""
    gone = (
        "SELECT u.recall_id FROM recall_log_items AS u WHERE u.item_id = ANY(%s)"
        " AND NOT EXISTS (SELECT 1 FROM idx_items AS i WHERE i.id = u.item_id)"
    )
    conn.execute(
        f"UPDATE recall_log SET query = NULL WHERE tenant = %s AND query IS NOT NULL"
        f" AND id IN ({gone})",
        (tenant, list(ids)),
    )
    conn.execute(
        "DELETE FROM recall_log_items AS u USING recall_log AS r WHERE r.id = u.recall_id"
        " AND r.tenant = %s AND u.item_id = ANY(%s)"
        " AND NOT EXISTS (SELECT 1 FROM idx_items AS i WHERE i.id = u.item_id)",
        (tenant, list(ids)),
    )
