"""The audit trail of a tenant in PostgreSQL (:class:`~kronika.ports.AuditLog`).

One row per entry in ``record_audit``, in the order appended (``seq``). The time is
kept as it was written (ISO 8601 with its offset), so an entry read back is the entry
appended, and as a ``timestamptz`` to sort and filter by.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from kronika.core.redaction import Phrases
from kronika.errors import StoreError
from kronika.ports import AuditEntry

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

_COLUMNS = (
    "at, action, target_agent, source_agent, section, item_id, summary, outcome,"
    " api_key, acting_user"
)


class PostgresAuditLog:
    """The audit entries of ``tenant``."""

    def __init__(self, pool: ConnectionPool, tenant: str) -> None:
        self._pool = pool
        self._tenant = tenant

    def append(self, entry: AuditEntry) -> None:
        self.append_many((entry,))

    def append_many(self, entries: Sequence[AuditEntry]) -> None:
        """Append ``entries`` in order, in one transaction (a batch's entries)."""
        rows = [
            (
                self._tenant,
                entry.at,
                entry.at.isoformat(),
                entry.action,
                entry.target_agent,
                entry.source_agent,
                entry.section,
                entry.item_id,
                entry.summary,
                entry.outcome,
                entry.api_key,
                entry.user,
            )
            for entry in entries
        ]
        if not rows:
            return
        try:
            with self._pool.connection() as conn, conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO record_audit (tenant, at_time, {_COLUMNS})"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    rows,
                )
        except Exception as err:
            raise StoreError(f"cannot append to the audit trail: {err}") from err

    def read(self, agent: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        """Entries oldest first (the last ``limit`` when given), for one agent or all."""
        where = "tenant = %s" + (" AND target_agent = %s" if agent is not None else "")
        args: list[object] = [self._tenant]
        if agent is not None:
            args.append(agent)
        query = f"SELECT seq, {_COLUMNS} FROM record_audit WHERE {where} ORDER BY seq DESC"
        if limit:
            query += " LIMIT %s"
            args.append(limit)
        with self._pool.connection() as conn:
            rows = conn.execute(query, args).fetchall()
        return [AuditEntry(datetime.fromisoformat(row[1]), *row[2:]) for row in reversed(rows)]

    def redact(self, agent: str, pattern: Phrases, marker: str) -> int:
        """Replace what ``pattern`` matches in ``agent``'s summaries with ``marker``
        (Python's regular expressions: the same pattern as on the Markdown side)."""
        changed = 0
        with self._pool.connection() as conn, conn.transaction():
            rows = conn.execute(
                "SELECT seq, summary FROM record_audit WHERE tenant = %s AND target_agent = %s"
                " FOR UPDATE",
                (self._tenant, agent),
            ).fetchall()
            for seq, summary in rows:
                new = pattern.sub(marker, summary)
                if new != summary:
                    conn.execute("UPDATE record_audit SET summary = %s WHERE seq = %s", (new, seq))
                    changed += 1
        return changed
