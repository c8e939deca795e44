"""The audit trail of a tenant in PostgreSQL (:class:`~kronika.ports.AuditLog`).

One row per entry in ``record_audit``, in the order appended (``seq``). The time is
kept as it was written (ISO 8601 with its offset), so an entry read back is the entry
appended, and as a ``timestamptz`` to sort and filter by.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from kronika.core.redaction import Phrases
from kronika.errors import StoreError
from kronika.ports import AuditEntry

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

_COLUMNS = (
    "at, action, target_agent, source_agent, section, item_id, summary, outcome,"
    " api_key, acting_user"
)


INSERT_AUDIT = (
    f"INSERT INTO record_audit (tenant, at_time, {_COLUMNS})"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
"""One audit row (:func:`audit_row`)."""

AuditRow = tuple[object, ...]


def audit_row(tenant: str, entry: AuditEntry) -> AuditRow:
    """The parameters of :data:`INSERT_AUDIT` for ``entry`` of ``tenant``."""
    return (
        tenant,
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


class AuditWithWrites(Protocol):
    """A store of record that writes audit rows in the transaction of its next write."""

    def audit_with_writes(self, rows: Sequence[AuditRow]) -> bool:
        """Keep ``rows`` for the next write of the hold the calling thread has, and
        ``True``; ``False`` (nothing kept) when this thread holds no lock."""
        ...


class PostgresAuditLog:
    """The audit entries of ``tenant``.

    With ``record``, an entry appended by a thread that holds the record's write lock
    is written in the transaction of the record's next write (or when the lock is let
    go, if nothing is written): a write and its audit entry commit together, in one
    commit instead of two."""

    def __init__(
        self, pool: ConnectionPool, tenant: str, record: AuditWithWrites | None = None
    ) -> None:
        self._pool = pool
        self._tenant = tenant
        self._record = record

    def append(self, entry: AuditEntry) -> None:
        self.append_many((entry,))

    def append_many(self, entries: Sequence[AuditEntry]) -> None:
        """Append ``entries`` in order, in one transaction (a batch's entries)."""
        rows = [audit_row(self._tenant, entry) for entry in entries]
        if not rows:
            return
        if self._record is not None and self._record.audit_with_writes(rows):
            return
        try:
            with self._pool.connection() as conn, conn.cursor() as cur:
                cur.executemany(INSERT_AUDIT, rows)
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

    def mentioning(self, agent: str, pattern: Phrases) -> int:
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT summary FROM record_audit WHERE tenant = %s AND target_agent = %s",
                (self._tenant, agent),
            ).fetchall()
        summaries = [summary for (summary,) in rows]
        return sum(1 for n in pattern.which_may_match(summaries) if pattern.search(summaries[n]))

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
            # only summaries in blocks holding a word of every phrase of one are walked
            for n in pattern.which_may_match([summary for _, summary in rows]):
                seq, summary = rows[n]
                new = pattern.sub(marker, summary)
                if new != summary:
                    conn.execute("UPDATE record_audit SET summary = %s WHERE seq = %s", (new, seq))
                    changed += 1
        return changed
