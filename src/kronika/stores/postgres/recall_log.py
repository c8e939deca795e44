"""The recall log in PostgreSQL (:class:`kronika.ports.RecallLog`), read as every SQL
index reads it (:class:`kronika.stores.sql.recall_log.RecallLogReads`).

Its tables (migration ``0500_recall_log``) live in the shared schema, keyed by tenant;
each read joins the tenant's ``idx_items`` (first on the index connection's
``search_path``) under the viewer's visibility.
An appended use locks the item it names (``FOR KEY SHARE``), so a forget that deletes
the item at the same moment either waits for it and then takes the use away
(:func:`drop_forgotten`), or has deleted it first and the use is not written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from kronika.core.recall_log import RecallEntry
from kronika.stores.filters import to_epoch
from kronika.stores.postgres.dialect import POSTGRES
from kronika.stores.postgres.trips import pipeline
from kronika.stores.sql.recall_log import RecallLogReads

Reading = Callable[[], AbstractContextManager[Any]]
Writing = Callable[[Callable[[Any], Any]], Any]


class PostgresRecallLog(RecallLogReads):
    """The log of ``tenant`` over the index's connection."""

    def __init__(self, reading: Reading, write: Writing, tenant: str) -> None:
        self._reading = reading
        self._write = write
        self._tenant = tenant
        super().__init__(POSTGRES, reading, tenant)

    def append(self, entries: Sequence[RecallEntry]) -> None:
        if not entries:
            return

        def work(conn: Any) -> None:
            # a statement per recall, its items with it, all sent in one round trip
            with pipeline(conn):
                for e in entries:
                    conn.execute(
                        "WITH r AS (INSERT INTO recall_log"
                        " (at, tenant, agent, user_id, channel, hits, query)"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id)"
                        " INSERT INTO recall_log_items (recall_id, rank, item_id)"
                        " SELECT r.id, u.n - 1, u.id FROM r, unnest(%s::text[]) WITH ORDINALITY"
                        " AS u(id, n) JOIN idx_items AS i ON i.id = u.id FOR KEY SHARE OF i",
                        (
                            to_epoch(e.at),
                            e.tenant,
                            e.agent,
                            e.user,
                            e.channel,
                            e.hits,
                            e.query,
                            list(e.item_ids),
                        ),
                    )

        self._write(work)

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
    # the ids still held looked up by these ids alone: a correlated NOT EXISTS may be
    # planned as a hash of every item's id
    held = "u.item_id NOT IN (SELECT i.id FROM idx_items AS i WHERE i.id = ANY(%s))"
    gone = f"SELECT u.recall_id FROM recall_log_items AS u WHERE u.item_id = ANY(%s) AND {held}"
    conn.execute(
        f"UPDATE recall_log SET query = NULL WHERE tenant = %s AND query IS NOT NULL"
        f" AND id IN ({gone})",
        (tenant, list(ids), list(ids)),
    )
    conn.execute(
        "DELETE FROM recall_log_items AS u USING recall_log AS r WHERE r.id = u.recall_id"
        f" AND r.tenant = %s AND u.item_id = ANY(%s) AND {held}",
        (tenant, list(ids), list(ids)),
    )
