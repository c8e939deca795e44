"""The recall log in the SQLite index's file (:class:`kronika.ports.RecallLog`).

Two tables beside the items (migration ``0007_recall_log``): ``recall_log``, one row per
recall, and ``recall_log_items``, one row per item a recall used. Item ids are kept, not
rowids, so the log outlives a rebuild of the index, as the usage statistics do; a file
moved aside as damaged takes its log with it (it is statistics, not memory).

The reads are the SQL indexes' (:class:`kronika.stores.sql.recall_log.RecallLogReads`):
every read joins the items the viewer may see, so the log never names or counts an
item the viewer could not list. :meth:`SqliteRecallLog.drop_forgotten` runs where the
index scrubs what a deletion left behind: their ids leave the log, and so does the query
of any recall that used them.

Writes take the index's connection in a transaction of their own without touching the
index's generation: no snapshot or cache of the items depends on the log.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime

from kronika.core.recall_log import RecallEntry
from kronika.stores.filters import to_epoch
from kronika.stores.sql.recall_log import RecallLogReads
from kronika.stores.sqlite.dialect import SQLITE

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


class SqliteRecallLog(RecallLogReads):
    """The log over the index's connection (``connection()``: it, under the index's lock)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        super().__init__(SQLITE, connection)

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


def _forgotten(conn: sqlite3.Connection, ids: Iterable[str]) -> list[tuple[str]]:
    """Those of ``ids`` that the log names and no item has any more."""
    return [
        (i,)
        for i in dict.fromkeys(ids)
        if conn.execute("SELECT 1 FROM recall_log_items WHERE item_id = ?", (i,)).fetchone()
        and conn.execute("SELECT 1 FROM items WHERE id = ?", (i,)).fetchone() is None
    ]
