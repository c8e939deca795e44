"""What use was made of the items in :class:`~kronika.stores.postgres.index.PostgresIndex`
(:class:`~kronika.ports.IndexUsage`): access counts, counted by ``INSERT … ON CONFLICT``
so no access of any worker is lost, and the recall log of the tenant.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kronika.stores.filters import to_epoch
from kronika.stores.postgres.arrays import text_array
from kronika.stores.postgres.index_base import (
    PostgresState,
)
from kronika.stores.postgres.recall_log import PostgresRecallLog

QUIET_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) AS quiet"
"""Joined into a statement run as its own transaction, this makes that transaction's
commit return without waiting for its WAL record to reach the disk (PostgreSQL's
``synchronous_commit = off`` for this transaction alone; the setting of every other
transaction is unchanged). A crash of the server may lose such a transaction's last
fraction of a second; it never leaves the database inconsistent."""


class PostgresUsage:
    """Access counts and the recall log (:class:`~kronika.ports.IndexUsage`)."""

    def __init__(self, state: PostgresState) -> None:
        self.state = state

    def record_access(self, ids: Sequence[str], at: datetime) -> None:
        """Count one access per distinct id; ``last_accessed_at`` never moves backwards."""
        moment = to_epoch(at)
        unique = sorted(set(ids))  # one order for every worker: no deadlock between them
        if not unique:
            return

        # one statement, its own transaction: one round trip. Its commit does not wait
        # for the server's WAL flush (QUIET_COMMIT): a usage count is a ranking signal,
        # nothing a user wrote, and a crash of the server may lose its last moment, as
        # a power cut may the SQLite index's (synchronous=NORMAL)
        self.state.write_statement(
            "INSERT INTO idx_usage AS u (item_id, access_count, last_accessed_at)"
            f" SELECT id, 1, %s FROM unnest(%s::text[]) AS id CROSS JOIN {QUIET_COMMIT}"
            " ORDER BY id ON CONFLICT (item_id) DO UPDATE SET access_count = u.access_count + 1,"
            " last_accessed_at = greatest(u.last_accessed_at, excluded.last_accessed_at)",
            (moment, text_array(unique)),
        )

    def restore_usage(self, rows: Sequence[tuple[str, int, datetime | None]]) -> None:
        """Set usage statistics as a backup recorded them (``0, None`` removes a row)."""
        kept = {i: (n, None if t is None else to_epoch(t)) for i, n, t in rows if n or t}
        removed = sorted({i for i, n, t in rows if not (n or t)})

        def work(conn: Any) -> None:
            if removed:
                conn.execute("DELETE FROM idx_usage WHERE item_id = ANY(%s)", (removed,))
            if kept:
                conn.cursor().executemany(
                    "INSERT INTO idx_usage (item_id, access_count, last_accessed_at)"
                    " VALUES (%s, %s, %s) ON CONFLICT (item_id) DO UPDATE SET"
                    " access_count = excluded.access_count,"
                    " last_accessed_at = excluded.last_accessed_at",
                    [(i, n, t) for i, (n, t) in sorted(kept.items())],
                )

        self.state.write(work)

    def recall_log(self) -> PostgresRecallLog:
        return PostgresRecallLog(self.state.reading, self.state.write, self.state.tenant)
