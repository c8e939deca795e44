"""The team's store of record on PostgreSQL (:class:`~kronika.ports.StoreOfRecord`).

Tables (migration ``0100_record.sql``): ``record_tenants`` and ``record_agents``;
``record_documents``, one row per Markdown document of an agent with the number of
the change that last wrote it (a removed document keeps its row with no text, so each
worker's copy learns of the removal), and ``record_document_parts``, the text added at
the end of a document since its body was last written whole (migration ``0103``: a
session's new turns, :class:`~kronika.ports.RecordAppend`; a document's text is its
body and then its parts); ``record_items``, what was parsed from each
document (facts with ``status``, ``valid_from``, ``valid_to`` and ``superseded_by``,
notes, turns, summaries), one row per item id, written in the same transaction as the
document: only the rows of items that were added, changed, moved or removed
(migration ``0102``), so a write to a large document writes few rows;
``record_proposals``, the proposals waiting in ``proposals.md``; and ``record_audit``
(:mod:`kronika.stores.postgres.record_audit`).

Writers of one agent take turns; writers of different agents of a tenant do not wait
for each other. :meth:`PostgresRecord.hold` takes session-level advisory locks on a
connection kept until :meth:`PostgresRecord.release`: the tenant's lock, exclusive
(a hold of the whole tenant: a forget, a sync, an edit) or shared with each held
agent's own lock (a hold of some agents), and every write made meanwhile goes through
that connection in one transaction. A worker that dies while holding it loses its
connection, and with it the locks and the uncommitted transaction: nothing
half-written is ever seen by another worker.

A hold of some agents may hand over to a *follow-up* (``release(then=…)``: the index
brought up to date with what the hold wrote): before the agents' locks are let go,
their follow-up locks are taken on the same connection (with the tenant's follow-up
lock, shared), and kept while ``then`` runs. The next writer of the agents goes on at
once; its own follow-up waits for this one, so follow-ups of an agent run in the order
of their holds, and a hold of the whole tenant (which takes the tenant's follow-up lock
exclusive) waits for every follow-up running.

Each write takes the tenant's *stamp*, a transaction-level lock, before it numbers its
changes, and keeps it until it commits: the changes of a tenant are numbered in the
order they are committed, so a worker that has seen change ``n`` has seen every change
of the tenant before it, and a write knows that a change below its own first number
that it did not pull was made by a writer of another agent meanwhile
(:class:`~kronika.ports.RecordWritten`).

:class:`PostgresRecord` holds the locks, the reads and the write's transaction; the
documents a write carries are written by its part
:class:`~kronika.stores.postgres.record_writes.DocumentWrites` (their item rows:
:mod:`~kronika.stores.postgres.record_rows`), and a document is read back as
:mod:`~kronika.stores.postgres.record_text` assembles it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from kronika.core.model import MemoryItem
from kronika.errors import StoreError
from kronika.ports import RecordDocument, RecordWritten
from kronika.stores.postgres.connect import one_line
from kronika.stores.postgres.follow import ForgetFollower
from kronika.stores.postgres.record_audit import INSERT_AUDIT, AuditRow
from kronika.stores.postgres.record_text import CHANGES, DOCUMENT, assembled, documents
from kronika.stores.postgres.record_writes import DocumentWrites
from kronika.stores.postgres.trips import sent_together

log = logging.getLogger("kronika.record")

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

_LOCK_CLASS = 0x6B72  # "kr": with the tenant's hash, the key of its write lock
_STAMP_CLASS = 0x6B73  # "ks": with the tenant's hash, the lock that numbers its changes
_AGENT_SEED = 0x6B61  # "ka": the hash seed of an agent's lock (one 64-bit key)
_FOLLOW_CLASS = 0x6B66  # "kf": with the tenant's hash, the lock of its follow-ups
_FOLLOW_SEED = 0x6B62  # "kb": the hash seed of an agent's follow-up lock


class PostgresRecord:
    """One tenant's documents in a PostgreSQL database reached through ``pool``; the
    database may hold other tenants too: every statement names this one."""

    def __init__(self, pool: ConnectionPool, tenant: str, *, owns_pool: bool = False) -> None:
        self._pool = pool
        self._owns_pool = owns_pool
        self._tenant = tenant
        self._follower: ForgetFollower | None = None
        self._held: psycopg.Connection[Any] | None = None
        self._holder: int | None = None  # the thread that holds the lock
        self._agents: frozenset[str] | None = None  # the agents held (all: None)
        self._audit: list[AuditRow] = []  # audit rows kept for the next write of the hold
        self._documents = DocumentWrites(tenant)  # each document a write carries
        with self._pool.connection() as conn:
            conn.execute(
                "INSERT INTO record_tenants (tenant) VALUES (%s) ON CONFLICT DO NOTHING",
                (tenant,),
            )

    @property
    def tenant(self) -> str:
        return self._tenant

    # -- the write lock -------------------------------------------------------------

    def hold(
        self, agents: frozenset[str] | None = None, *, since: int | None = None
    ) -> list[RecordDocument] | None:
        if self._held is not None:
            raise StoreError("the record's write lock is already held")
        what = f"cannot take the write lock of tenant {self._tenant!r}"
        try:
            conn = self._pool.getconn()
        except Exception as err:  # the server is gone: no connection came in time
            raise StoreError(f"{what}: {one_line(err)}") from err
        tenant = (_LOCK_CLASS, self._tenant)
        try:
            with sent_together(conn, transaction=False):  # the locks in one round trip
                if agents is None:  # and every follow-up of the tenant done
                    conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", tenant)
                    conn.execute(
                        "SELECT pg_advisory_lock(%s, hashtext(%s))", (_FOLLOW_CLASS, self._tenant)
                    )
                else:  # in one order, so two holds of several agents never wait in a circle
                    conn.execute("SELECT pg_advisory_lock_shared(%s, hashtext(%s))", tenant)
                    for key in self._agent_keys(agents):
                        conn.execute(
                            "SELECT pg_advisory_lock(hashtextextended(%s, %s))", (key, _AGENT_SEED)
                        )
                # run once the locks are granted, in a statement of its own: it sees
                # every write committed before them, as a read after them would
                found = None if since is None else conn.execute(CHANGES, self._asked(since))
            rows = None if found is None else found.fetchall()
        except Exception as err:
            self._unlock(conn)
            raise StoreError(f"{what}: {one_line(err)}") from err
        self._held, self._holder, self._agents = conn, threading.get_ident(), agents
        return None if rows is None else documents(rows)

    def release(self, then: Callable[[], None] | None = None) -> None:
        """Let go of the lock; audit rows no write took are written first. ``then``
        runs as :meth:`~kronika.ports.StoreOfRecord.release` says (see the module)."""
        conn, self._held, self._holder = self._held, None, None
        rows, self._audit = self._audit, []
        agents, self._agents = self._agents, None
        if conn is None:
            return
        try:
            if rows:
                try:
                    with sent_together(conn), conn.cursor() as cur:
                        cur.executemany(INSERT_AUDIT, rows)
                except Exception as err:
                    raise StoreError(f"cannot append to the audit trail: {one_line(err)}") from err
            # a hand-over that failed (the server gone) leaves ``then`` undone: the
            # write is stored, and whoever gave ``then`` finds it did not run
            if then is not None and (agents is None or self._handed_over(conn, agents)):
                then()
        finally:
            self._unlock(conn)

    def _agent_keys(self, agents: frozenset[str]) -> list[str]:
        """What the locks of ``agents`` are keyed by, hashed with a seed per lock, in
        the one order every hold takes them in."""
        return [f"{self._tenant}\x1f{agent}" for agent in sorted(agents)]

    def _handed_over(self, conn: psycopg.Connection[Any], agents: frozenset[str]) -> bool:
        """Take ``agents``' follow-up locks, then let go of their write locks, in one
        round trip (in one order, as :meth:`hold` takes them); whether it could."""
        tenant = (self._tenant,)
        keys = self._agent_keys(agents)
        try:
            with sent_together(conn, transaction=False):
                conn.execute(
                    "SELECT pg_advisory_lock_shared(%s, hashtext(%s))", (_FOLLOW_CLASS, *tenant)
                )
                for key in keys:
                    conn.execute(
                        "SELECT pg_advisory_lock(hashtextextended(%s, %s))", (key, _FOLLOW_SEED)
                    )
                for key in keys:
                    conn.execute(
                        "SELECT pg_advisory_unlock(hashtextextended(%s, %s))", (key, _AGENT_SEED)
                    )
                conn.execute(
                    "SELECT pg_advisory_unlock_shared(%s, hashtext(%s))", (_LOCK_CLASS, *tenant)
                )
        except Exception as err:  # noqa: BLE001 - the caller is told by a False
            log.warning("the follow-up of a write was not run: %s", one_line(err))
            return False
        return True

    def audit_with_writes(self, rows: Sequence[AuditRow]) -> bool:
        """Keep audit ``rows`` for the transaction of this hold's next write (or its
        release), when the calling thread holds the lock (see
        :class:`~kronika.stores.postgres.record_audit.PostgresAuditLog`)."""
        if self._held is None or self._holder != threading.get_ident():
            return False
        self._audit.extend(rows)
        return True

    def _unlock(self, conn: psycopg.Connection[Any]) -> None:
        """Let go of every lock ``conn`` holds and give it back to the pool."""
        try:
            conn.rollback()  # a transaction left open (no round trip when there is none)
            with sent_together(conn, transaction=False):
                conn.execute("SELECT pg_advisory_unlock_all()")
        except Exception:  # noqa: BLE001 - a dead connection holds no lock any more
            conn.close()
        finally:
            self._pool.putconn(conn)

    # -- documents ------------------------------------------------------------------

    def changes(
        self, since: int, *, grown: bool = False, before: int | None = None
    ) -> list[RecordDocument]:
        return documents(self._read(CHANGES, self._asked(since, grown, before)))

    def _asked(
        self, since: int, grown: bool | None = None, before: int | None = None
    ) -> dict[str, object]:
        """The parameters of :data:`~kronika.stores.postgres.record_text.CHANGES`
        (``grown`` by default: past change 0)."""
        grown = since > 0 if grown is None else grown
        return {"since": since, "grown": grown, "tenant": self._tenant, "before": before}

    def document(self, agent: str, path: str) -> RecordDocument | None:
        asked = {"tenant": self._tenant, "agent": agent, "path": path}
        return next(
            (
                RecordDocument(a, p, assembled(body, texts, ats, cuts), int(m), int(c))
                for a, p, m, c, body, texts, ats, cuts in self._read(DOCUMENT, asked)
            ),
            None,
        )

    def _read(self, sql: str, asked: Mapping[str, object]) -> list[Any]:
        """The rows of a read of the record: on the held connection under the write lock
        (its snapshot ended after), else on one of the pool's."""
        import psycopg

        try:
            # one round trip: the statement and the end of its snapshot sent together
            conn_of = nullcontext(self._held) if self._held is not None else self._pool.connection()
            with conn_of as conn:
                with sent_together(conn, transaction=False):
                    found = conn.execute(sql, asked)
                rows = found.fetchall()
        except psycopg.Error as err:  # the server went away: kronika's error, on one line
            raise StoreError(f"cannot read the PostgreSQL record: {one_line(err)}") from err
        return list(rows)

    def write(
        self,
        documents: Sequence[RecordDocument],
        items: Mapping[tuple[str, str], Sequence[MemoryItem]],
        *,
        fold: bool = False,
    ) -> RecordWritten:
        if self._held is None:
            raise StoreError("a write to the record needs its write lock")
        if not documents:
            if fold:
                self.fold_parts()
            return RecordWritten(0, 0)
        conn = self._held
        changes: list[Callable[[], int]] = []  # each read once the stream is answered
        try:
            # sent together: a statement whose answer nothing waits for rides with the
            # next one that is waited for (a write of one document: two round trips)
            with sent_together(conn):
                # numbered in the order of commit: the stamp is held until then
                conn.execute(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_STAMP_CLASS, self._tenant)
                )
                # read after the stamp is held, so as to see the writes made before it
                newest_of = conn.execute(
                    "SELECT coalesce(max(change), 0) FROM record_documents WHERE tenant = %s",
                    (self._tenant,),
                )
                for agent in sorted({doc.agent for doc in documents}):
                    conn.execute(
                        "INSERT INTO record_agents (tenant, agent) VALUES (%s, %s)"
                        " ON CONFLICT DO NOTHING",
                        (self._tenant, agent),
                    )
                for doc in documents:
                    key = (doc.agent, doc.path)
                    changes.append(self._documents.write(conn, doc, items.get(key, ())))
                if self._audit:  # the audit entries of the hold, in the same commit
                    with conn.cursor() as cur:
                        cur.executemany(INSERT_AUDIT, self._audit)
                if fold:  # a forget's: it and the folding land together or not at all
                    self._documents.fold(conn, self._agents)
            newest = newest_of.fetchone()
            numbers = [change() for change in changes]
        except StoreError:
            raise
        except Exception as err:
            raise StoreError(f"cannot write to the PostgreSQL record: {one_line(err)}") from err
        self._audit = []
        return RecordWritten(min(numbers), max(numbers), int(newest[0]) if newest else 0)

    def fold_parts(self) -> int:
        if self._held is None:
            raise StoreError("folding the record's parts needs its write lock")
        try:
            with sent_together(self._held):  # one transaction: the text is the same throughout
                return self._documents.fold(self._held, self._agents)
        except Exception as err:
            raise StoreError(f"cannot fold the record's parts: {one_line(err)}") from err

    def follow_forgets(self, follow: Callable[[], object]) -> None:
        """Call ``follow`` whenever a forget of this tenant is committed, by any worker
        (:class:`~kronika.stores.postgres.follow.ForgetFollower`), until :meth:`close`."""
        if self._follower is None:
            info = self._pool.conninfo
            self._follower = ForgetFollower(
                info() if callable(info) else info, self._tenant, follow
            )

    def close(self) -> None:
        """Let go of the lock; with ``owns_pool``, close the pool too (the memory's end)."""
        if self._follower is not None:
            self._follower.close()
            self._follower = None
        self.release()
        if self._owns_pool:
            self._pool.close()
