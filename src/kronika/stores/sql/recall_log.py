"""The reads of the recall log (:class:`kronika.ports.RecallLog`), in SQL of one dialect.

Two tables beside the items: ``recall_log``, one row per recall (``at``, ``tenant``,
``agent``, the user and channel, ``hits``, ``query``), and ``recall_log_items``, one row
per item a recall used (``recall_id``, ``rank``, ``item_id``). Every read joins the
items the viewer may see (:func:`~.where.filter_clause`, the filter lists and counts
use), so the log never names or counts an item the viewer could not list; a recall the
viewer did not make shows only the items the viewer may see, without its user, channel
or query. Writes differ by backend (how they lock and number rows) and stay there.
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
from kronika.stores.filters import to_epoch
from kronika.stores.sql.dialect import Dialect
from kronika.stores.sql.where import filter_clause

Statement = tuple[str, list[object]]
Reading = Callable[[], AbstractContextManager[Any]]


@dataclass(frozen=True, slots=True)
class _Scope:
    recalls: str
    params: list[object]
    own: str
    own_params: list[object]


class RecallLogReads:
    """The log's reads over ``reading()`` (a connection, under the index's lock); a
    backend's log adds its writes (``append``, ``prune``) to them.

    ``tenant``: the log's rows are every tenant's (the reads keep that tenant's), or
    ``None`` where the log holds one tenant's alone.
    """

    def __init__(self, d: Dialect, reading: Reading, tenant: str | None = None) -> None:
        self._d = d
        self._reading = reading
        self._tenant = tenant

    def _rows(self, statement: Statement) -> list[Any]:
        with self._reading() as conn:
            return list(conn.execute(*statement).fetchall())

    def per_day(self, flt: RecallFilter, since: datetime) -> list[RecallDay]:
        rows = self._rows(self.per_day_sql(flt, since))
        return [RecallDay(str(d), int(n), int(u), int(i)) for d, n, u, i in rows]

    def top(self, flt: RecallFilter, since: datetime, limit: int) -> list[ItemUses]:
        rows = self._rows(self.top_sql(flt, since, limit))
        return [(str(i), int(n), _moment(t)) for i, n, t in rows]

    def entries(self, flt: RecallFilter, since: datetime | None = None) -> list[RecallEntry]:
        return [self._entry(row) for row in self._rows(self.entries_sql(flt, since))]

    def _scope(self, flt: RecallFilter, since: datetime | None) -> _Scope:
        """The agent's recalls since ``since`` (a query, to be named ``r``) and the
        condition that one of them is the viewer's own."""
        d = self._d
        agent = flt.agents[0]
        start = -1e18 if since is None else to_epoch(since)
        agents, params = d.one_of("agent", [agent, ALL_AGENTS])
        conditions = [agents, f"at >= {d.mark}"]
        params.append(start)
        if self._tenant is not None:
            conditions.insert(0, f"tenant = {d.mark}")
            params.insert(0, self._tenant)
        recalls = f"SELECT * FROM recall_log WHERE {' AND '.join(conditions)}"
        own = f"r.agent = {d.mark}"  # the owner's (no reader) is every recall of the agent
        own_params: list[object] = [agent]
        reader = flt.reader
        if reader is not None:
            own += f" AND r.tenant = {d.mark} AND {d.same(f'r.{d.user}')} AND {d.same('r.channel')}"
            own_params += [reader.tenant, reader.user, reader.channel]
        return _Scope(recalls, params, own, own_params)

    def _seen(self, flt: RecallFilter) -> Statement:
        """The uses of items the viewer may see, joined to ``r``: every item of the
        filter's agent, superseded ones too (a recall may have used a value replaced
        since)."""
        items = RecallFilter(
            agents=flt.agents, tenant=flt.tenant, reader=flt.reader, include_superseded=True
        )
        where, params = filter_clause(self._d, items)
        sql = (
            "SELECT u.recall_id, u.rank, u.item_id FROM recall_log_items AS u"
            f" JOIN {self._d.items} AS i ON i.id = u.item_id"
            f" WHERE u.recall_id IN (SELECT id FROM r) AND {where}"
        )
        return sql, params

    def per_day_sql(self, flt: RecallFilter, since: datetime) -> Statement:
        """Recalls, uses and items used per UTC day."""
        sc = self._scope(flt, since)
        seen, seen_params = self._seen(flt)
        sql = (
            f"WITH r AS ({sc.recalls}), s AS ({seen})"
            f" SELECT {self._d.utc_day('r.at')} AS day, count(DISTINCT r.id),"
            " count(s.item_id), count(DISTINCT s.item_id) FROM r LEFT JOIN s ON s.recall_id = r.id"
            f" WHERE s.recall_id IS NOT NULL OR ({sc.own}) GROUP BY day ORDER BY day"
        )
        return sql, [*sc.params, *seen_params, *sc.own_params]

    def top_sql(self, flt: RecallFilter, since: datetime, limit: int) -> Statement:
        """The most used items: id, uses, last use."""
        sc = self._scope(flt, since)
        seen, seen_params = self._seen(flt)
        sql = (
            f"WITH r AS ({sc.recalls}), s AS ({seen})"
            " SELECT s.item_id, count(*) AS n, max(r.at) AS last"
            " FROM s JOIN r ON r.id = s.recall_id"
            f" GROUP BY s.item_id ORDER BY n DESC, last DESC, s.item_id LIMIT {self._d.mark}"
        )
        return sql, [*sc.params, *seen_params, limit]

    def entries_sql(self, flt: RecallFilter, since: datetime | None = None) -> Statement:
        """The recalls the viewer may see (:meth:`_entry`)."""
        sc = self._scope(flt, since)
        seen, seen_params = self._seen(flt)
        ids = self._d.ordered_ids(
            "SELECT s.item_id FROM s WHERE s.recall_id = r.id ORDER BY s.rank"
        )
        sql = (
            f"WITH r AS ({sc.recalls}), s AS ({seen})"
            f" SELECT r.at, r.tenant, r.agent, r.{self._d.user}, r.channel, r.hits, r.query,"
            f" ({sc.own}), {ids}"
            f" FROM r WHERE ({sc.own}) OR EXISTS (SELECT 1 FROM s WHERE s.recall_id = r.id)"
            " ORDER BY r.at, r.id"
        )
        return sql, [*sc.params, *seen_params, *sc.own_params, *sc.own_params]

    def _entry(self, row: Sequence[object]) -> RecallEntry:
        """One row of :meth:`entries`: another reader's recall shows only what the viewer
        may see of it."""
        at, tenant, agent, user, channel, hits, query, own, ids = row
        item_ids = self._d.split_ids(ids)
        if not own:
            user = channel = query = None
            hits = len(item_ids)
        return RecallEntry(
            at=_moment(at),
            tenant=str(tenant),
            agent=str(agent),
            user=None if user is None else str(user),
            channel=None if channel is None else str(channel),
            hits=int(hits),  # type: ignore[call-overload]
            item_ids=item_ids,
            query=None if query is None else str(query),
        )


def _moment(epoch: object) -> datetime:
    return datetime.fromtimestamp(float(epoch), tz=UTC)  # type: ignore[arg-type]
