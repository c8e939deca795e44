"""The recall log in the SQLite index's file (:class:`kronika.ports.RecallLog`).

Two tables beside the items (migration ``0007_recall_log``): ``recall_log``, one row per
recall, and ``recall_log_items``, one row per item a recall used. Item ids are kept, not
rowids, so the log outlives a rebuild of the index, as the usage statistics do; a file
moved aside as damaged takes its log with it (it is statistics, not memory).

Every read joins the items the viewer may see (:func:`~.query.filter_clause`, the
filter list and count use), so the log never names or counts an item the viewer
could not list. :meth:`SqliteRecallLog.drop_forgotten` runs where the index scrubs what a
deletion left behind: their ids leave the log, and so does the query of any recall
that used them.

Writes take the index's connection in a transaction of their own without touching the
index's generation: no snapshot or cache of the items depends on the log.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from kronika.core.model import RecallFilter
from kronika.core.recall_log import ALL_AGENTS, RecallDay, RecallEntry
from kronika.ports import ItemUses
from kronika.stores.sqlite.query import filter_clause, to_epoch

SCHEMA = """
CREATE TABLE recall_log (
    id      INTEGER PRIMARY KEY,
    at      REAL NOT NULL,
    tenant  TEXT NOT NULL,
    agent   TEXT NOT NULL,
    user    TEXT,
    channel TEXT,
    hits    INTEGER NOT NULL,
    query   TEXT
);
CREATE INDEX recall_log_agent_at ON recall_log (agent, at);
CREATE INDEX recall_log_at ON recall_log (at);
CREATE TABLE recall_log_items (
    recall_id INTEGER NOT NULL,
    rank      INTEGER NOT NULL,
    item_id   TEXT NOT NULL,
    PRIMARY KEY (recall_id, rank)
) WITHOUT ROWID;
CREATE INDEX recall_log_items_item ON recall_log_items (item_id);
"""

Connection = Callable[[], AbstractContextManager[sqlite3.Connection]]


@dataclass(frozen=True, slots=True)
class _Scope:
    recalls: str
    params: list[object]
    own: str
    own_params: list[object]


class SqliteRecallLog:
    """The log over the index's connection (``connection()``: it, under the index's lock)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def append(self, entries: Sequence[RecallEntry]) -> None:
        if not entries:
            return
        with self._transaction() as conn:
            for e in entries:
                found = conn.execute(
                    "INSERT INTO recall_log (at, tenant, agent, user, channel, hits, query)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (to_epoch(e.at), e.tenant, e.agent, e.user, e.channel, e.hits, e.query),
                )
                recall_id = found.lastrowid
                # an item forgotten since the recall (in another process) is not logged
                conn.executemany(
                    "INSERT INTO recall_log_items (recall_id, rank, item_id) SELECT ?, ?, ?"
                    " WHERE EXISTS (SELECT 1 FROM items WHERE id = ?)",
                    ((recall_id, rank, i, i) for rank, i in enumerate(e.item_ids)),
                )

    def _scope(self, flt: RecallFilter, since: datetime | None) -> _Scope:
        """The agent's recalls since ``since`` (a query, to be named ``r``) and the
        condition that one of them is the viewer's own."""
        agent = flt.agents[0]
        start = -1e18 if since is None else to_epoch(since)
        recalls = "SELECT * FROM recall_log WHERE agent IN (?, ?) AND at >= ?"
        reader = flt.reader
        own = "r.agent = ?"  # the owner's (no reader) is every recall of the agent
        own_params: list[object] = [agent]
        if reader is not None:
            own += " AND r.tenant = ? AND r.user IS ? AND r.channel IS ?"
            own_params += [reader.tenant, reader.user, reader.channel]
        return _Scope(recalls, [agent, ALL_AGENTS, start], own, own_params)

    def _seen(self, flt: RecallFilter) -> tuple[str, list[object]]:
        """The uses of items the viewer may see, joined to ``r``."""
        where, params = filter_clause(_items_of(flt))
        sql = (
            "SELECT u.recall_id, u.rank, u.item_id FROM recall_log_items AS u"
            " JOIN items AS i ON i.id = u.item_id"
            f" WHERE u.recall_id IN (SELECT id FROM r) AND {where}"
        )
        return sql, params

    def per_day(self, flt: RecallFilter, since: datetime) -> list[RecallDay]:
        sc = self._scope(flt, since)
        seen, seen_params = self._seen(flt)
        sql = (
            f"WITH r AS ({sc.recalls}), s AS ({seen})"
            " SELECT date(r.at, 'unixepoch') AS day, count(DISTINCT r.id), count(s.item_id),"
            " count(DISTINCT s.item_id) FROM r LEFT JOIN s ON s.recall_id = r.id"
            f" WHERE s.recall_id IS NOT NULL OR ({sc.own}) GROUP BY day ORDER BY day"
        )
        with self._connection() as conn:
            rows = conn.execute(sql, [*sc.params, *seen_params, *sc.own_params]).fetchall()
        return [RecallDay(str(d), int(n), int(u), int(i)) for d, n, u, i in rows]

    def top(self, flt: RecallFilter, since: datetime, limit: int) -> list[ItemUses]:
        sc = self._scope(flt, since)
        seen, seen_params = self._seen(flt)
        sql = (
            f"WITH r AS ({sc.recalls}), s AS ({seen})"
            " SELECT s.item_id, count(*) AS n, max(r.at) AS last"
            " FROM s JOIN r ON r.id = s.recall_id"
            " GROUP BY s.item_id ORDER BY n DESC, last DESC, s.item_id LIMIT ?"
        )
        with self._connection() as conn:
            rows = conn.execute(sql, [*sc.params, *seen_params, limit]).fetchall()
        return [(str(i), int(n), _moment(t)) for i, n, t in rows]

    def entries(self, flt: RecallFilter, since: datetime | None = None) -> list[RecallEntry]:
        sc = self._scope(flt, since)
        seen, seen_params = self._seen(flt)
        sql = (
            f"WITH r AS ({sc.recalls}), s AS ({seen})"
            " SELECT r.id, r.at, r.tenant, r.agent, r.user, r.channel, r.hits, r.query,"
            f" ({sc.own}),"
            " (SELECT group_concat(item_id, char(31)) FROM"
            "  (SELECT item_id FROM s WHERE s.recall_id = r.id ORDER BY s.rank))"
            f" FROM r WHERE ({sc.own}) OR EXISTS (SELECT 1 FROM s WHERE s.recall_id = r.id)"
            " ORDER BY r.at, r.id"
        )
        params = [*sc.params, *seen_params, *sc.own_params, *sc.own_params]
        with self._connection() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [_entry(row) for row in rows]

    def drop_forgotten(self, ids: Iterable[str]) -> int:
        """Take the ids no item has any more out of the log, and the query of every
        recall that used one of them; returns how many ids went."""
        wanted = list(ids)
        with self._connection() as conn:
            if not _forgotten(conn, wanted):
                return 0  # the usual case: nothing to write
        with self._transaction() as conn:
            gone = _forgotten(conn, wanted)
            conn.executemany(
                "UPDATE recall_log SET query = NULL WHERE query IS NOT NULL AND id IN"
                " (SELECT recall_id FROM recall_log_items WHERE item_id = ?)",
                gone,
            )
            conn.executemany("DELETE FROM recall_log_items WHERE item_id = ?", gone)
        return len(gone)

    def prune(self, before: datetime) -> int:
        moment = to_epoch(before)
        with self._transaction() as conn:
            conn.execute(
                "DELETE FROM recall_log_items WHERE recall_id IN"
                " (SELECT id FROM recall_log WHERE at < ?)",
                (moment,),
            )
            return int(conn.execute("DELETE FROM recall_log WHERE at < ?", (moment,)).rowcount)


def _items_of(flt: RecallFilter) -> RecallFilter:
    """Every item of the filter's agent the viewer may see, superseded ones too: a recall
    may have used a value that has been replaced since."""
    return RecallFilter(
        agents=flt.agents, tenant=flt.tenant, reader=flt.reader, include_superseded=True
    )


def _moment(epoch: object) -> datetime:
    return datetime.fromtimestamp(float(epoch), tz=UTC)  # type: ignore[arg-type]


def _entry(row: Sequence[object]) -> RecallEntry:
    _, at, tenant, agent, user, channel, hits, query, own, ids = row
    item_ids = tuple(str(ids).split("\x1f")) if ids else ()
    if not own:  # another reader's recall: only what the viewer may see of it
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


def _forgotten(conn: sqlite3.Connection, ids: Iterable[str]) -> list[tuple[str]]:
    """Those of ``ids`` that the log names and no item has any more."""
    return [
        (i,)
        for i in dict.fromkeys(ids)
        if conn.execute("SELECT 1 FROM recall_log_items WHERE item_id = ?", (i,)).fetchone()
        and conn.execute("SELECT 1 FROM items WHERE id = ?", (i,)).fetchone() is None
    ]
