"""What use was made of the items in :class:`~kronika.stores.sqlite.SqliteIndex`: access
counts and times (they survive a rebuild; a backup restores them) and the recall log
kept beside the items (:mod:`.recall_log`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from kronika.stores.filters import to_epoch
from kronika.stores.sqlite.index_base import IndexState
from kronika.stores.sqlite.recall_log import SqliteRecallLog


class SqliteUsage:
    """Access counts and the recall log (:class:`~kronika.ports.IndexUsage`)."""

    def __init__(self, state: IndexState) -> None:
        self.state = state

    def recall_log(self) -> SqliteRecallLog:
        """The recall log kept beside the items (:class:`~kronika.ports.RecallLog`)."""
        return self.state.recall_log()

    def record_access(self, ids: Sequence[str], at: datetime) -> None:
        """Count one access per distinct id; ``last_accessed_at`` never moves backwards."""
        moment = to_epoch(at)
        with self.state.writing() as conn:
            conn.executemany(
                "INSERT INTO usage (item_id, access_count, last_accessed_at) VALUES (?, 1, ?)"
                " ON CONFLICT (item_id) DO UPDATE SET access_count = access_count + 1,"
                " last_accessed_at = max(coalesce(last_accessed_at, excluded.last_accessed_at),"
                " excluded.last_accessed_at)",
                ((i, moment) for i in dict.fromkeys(ids)),
            )

    def restore_usage(self, rows: Sequence[tuple[str, int, datetime | None]]) -> None:
        """Set usage statistics as a backup recorded them (``0, None`` removes a row)."""
        kept = [(i, n, None if t is None else to_epoch(t)) for i, n, t in rows if n or t]
        with self.state.writing() as conn:
            conn.executemany(
                "DELETE FROM usage WHERE item_id = ?", ((i,) for i, n, t in rows if not (n or t))
            )
            conn.executemany(
                "INSERT INTO usage (item_id, access_count, last_accessed_at) VALUES (?, ?, ?)"
                " ON CONFLICT (item_id) DO UPDATE SET access_count = excluded.access_count,"
                " last_accessed_at = excluded.last_accessed_at",
                kept,
            )
