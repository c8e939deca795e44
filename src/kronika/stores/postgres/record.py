"""The team's store of record on PostgreSQL (:class:`~kronika.ports.StoreOfRecord`).

Tables (migration ``0100_record.sql``): ``record_tenants`` and ``record_agents``;
``record_documents``, one row per Markdown document of an agent with the number of
the change that last wrote it (a removed document keeps its row with no text, so each
worker's copy learns of the removal); ``record_items``, what was parsed from each
document (facts with ``status``, ``valid_from``, ``valid_to`` and ``superseded_by``,
notes, turns, summaries), rewritten in the same transaction as the document;
``record_proposals``, the proposals waiting in ``proposals.md``; and ``record_audit``
(:mod:`kronika.stores.postgres.record_audit`).

Writers of one tenant take turns: :meth:`PostgresRecord.hold` takes a session-level
advisory lock on a connection kept until :meth:`PostgresRecord.release`, and every
write made meanwhile goes through that connection in one transaction. A worker that
dies while holding it loses its connection, and with it the lock and the uncommitted
transaction: nothing half-written is ever seen by another worker.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from psycopg.types.json import Jsonb

from kronika.core.model import MemoryItem
from kronika.core.serialize import item_to_dict
from kronika.errors import StoreError
from kronika.ports import RecordDocument
from kronika.stores.markdown import proposals

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

_LOCK_CLASS = 0x6B72  # "kr": with the tenant's hash, the key of its write lock


class PostgresRecord:
    """One tenant's documents in a PostgreSQL database reached through ``pool``; the
    database may hold other tenants too: every statement names this one."""

    def __init__(self, pool: ConnectionPool, tenant: str, *, owns_pool: bool = False) -> None:
        self._pool = pool
        self._owns_pool = owns_pool
        self._tenant = tenant
        self._held: psycopg.Connection[Any] | None = None
        with self._pool.connection() as conn:
            conn.execute(
                "INSERT INTO record_tenants (tenant) VALUES (%s) ON CONFLICT DO NOTHING",
                (tenant,),
            )

    @property
    def tenant(self) -> str:
        return self._tenant

    # -- the write lock -------------------------------------------------------------

    def hold(self) -> None:
        if self._held is not None:
            raise StoreError("the record's write lock is already held")
        conn = self._pool.getconn()
        try:
            conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (_LOCK_CLASS, self._tenant))
            conn.commit()
        except Exception as err:
            self._pool.putconn(conn)
            what = f"cannot take the write lock of tenant {self._tenant!r}"
            raise StoreError(f"{what}: {err}") from err
        self._held = conn

    def release(self) -> None:
        conn, self._held = self._held, None
        if conn is None:
            return
        try:
            conn.rollback()
            conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (_LOCK_CLASS, self._tenant))
            conn.commit()
        except Exception:  # noqa: BLE001 - a dead connection holds no lock any more
            conn.close()
        finally:
            self._pool.putconn(conn)

    # -- documents ------------------------------------------------------------------

    def changes(self, since: int) -> list[RecordDocument]:
        query = (
            "SELECT agent, path, body, modified_ns, change FROM record_documents"
            " WHERE tenant = %s AND change > %s ORDER BY change"
        )
        import psycopg

        try:
            if self._held is not None:
                rows = self._held.execute(query, (self._tenant, since)).fetchall()
                self._held.commit()
            else:
                with self._pool.connection() as conn:
                    rows = conn.execute(query, (self._tenant, since)).fetchall()
        except psycopg.Error as err:  # the server went away: kronika's error, on one line
            said = " ".join(str(err).split())
            raise StoreError(f"cannot read the PostgreSQL record: {said}") from err
        return [RecordDocument(a, p, body, int(m), int(c)) for a, p, body, m, c in rows]

    def write(
        self,
        documents: Sequence[RecordDocument],
        items: Mapping[tuple[str, str], Sequence[MemoryItem]],
    ) -> int:
        if self._held is None:
            raise StoreError("a write to the record needs its write lock")
        if not documents:
            return 0
        conn = self._held
        last = 0
        try:
            with conn.transaction():
                for agent in sorted({doc.agent for doc in documents}):
                    conn.execute(
                        "INSERT INTO record_agents (tenant, agent) VALUES (%s, %s)"
                        " ON CONFLICT DO NOTHING",
                        (self._tenant, agent),
                    )
                for doc in documents:
                    last = self._write_document(conn, doc, items.get((doc.agent, doc.path), ()))
            conn.commit()
        except StoreError:
            raise
        except Exception as err:
            raise StoreError(f"cannot write to the PostgreSQL record: {err}") from err
        return last

    def _write_document(
        self, conn: psycopg.Connection[Any], doc: RecordDocument, items: Sequence[MemoryItem]
    ) -> int:
        key = (self._tenant, doc.agent, doc.path)
        digest = None if doc.text is None else hashlib.sha256(doc.text.encode()).hexdigest()
        row = conn.execute(
            "INSERT INTO record_documents"
            " (tenant, agent, path, body, sha256, modified_ns, change)"
            " VALUES (%s, %s, %s, %s, %s, %s, nextval('record_change_seq'))"
            " ON CONFLICT (tenant, agent, path) DO UPDATE SET body = excluded.body,"
            " sha256 = excluded.sha256, modified_ns = excluded.modified_ns,"
            " change = excluded.change RETURNING change",
            (*key, doc.text, digest, doc.modified_ns),
        ).fetchone()
        conn.execute("DELETE FROM record_items WHERE tenant = %s AND agent = %s AND path = %s", key)
        if items:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO record_items (tenant, agent, path, position, id, type, status,"
                    " scope, channel, user_name, team, key, section, content, created_at,"
                    " valid_from, valid_to, superseded_by, session_id, speaker, data) VALUES"
                    " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
                    " %s, %s, %s)",
                    [(*key, n, *_item_columns(item)) for n, item in enumerate(items)],
                )
        if doc.path == proposals.PATH:
            self._write_proposals(conn, doc)
        return int(row[0]) if row else 0

    def _write_proposals(self, conn: psycopg.Connection[Any], doc: RecordDocument) -> None:
        conn.execute(
            "DELETE FROM record_proposals WHERE tenant = %s AND agent = %s",
            (self._tenant, doc.agent),
        )
        if doc.text is None:
            return
        entries = {e.id: e for e in proposals.parse_proposals(doc.text).entries}
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO record_proposals (tenant, agent, id, source_agent, created_at,"
                " section, text) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                [
                    (self._tenant, doc.agent, e.id, e.source_agent, e.created_at, e.section, e.text)
                    for e in entries.values()
                ],
            )

    def close(self) -> None:
        """Let go of the lock; with ``owns_pool``, close the pool too (the memory's end)."""
        self.release()
        if self._owns_pool:
            self._pool.close()


def _item_columns(item: MemoryItem) -> tuple[Any, ...]:
    return (
        item.id,
        item.type.value,
        item.status.value,
        item.scope.value,
        item.channel,
        item.user,
        item.team,
        item.key,
        item.section,
        item.content,
        item.created_at,
        item.valid_from,
        item.valid_to,
        item.superseded_by,
        item.provenance.session_id,
        item.speaker,
        Jsonb(item_to_dict(item)),
    )
