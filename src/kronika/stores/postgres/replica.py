"""Reads that may lag, on a streaming replica, and the rule that keeps them fresh.

With ``postgres_read_url`` a worker sends searches, recall's reads and lists to a read
replica of the primary (PostgreSQL streaming replication), and everything else to the
primary. A replica is behind the primary by its replay lag, so it may miss a memory
just written or still hold one just forgotten. The rule (docs/postgres.md#read-replicas):

* the worker keeps a **mark**, a WAL position of the primary (:class:`ReplayMark`): it is
  raised after every write lock in which this worker wrote (the primary's WAL insert
  position once the write is committed, so past its commit record) and whenever the
  worker sees in the store of record a change it had not seen (another worker's write
  or forget: its position when the change was seen, so past that change's commit);
* a read goes to the replica only while the replica's ``pg_last_wal_replay_lsn()`` is at
  or past the mark, and to the primary otherwise: it never waits for the replica;
* while the worker holds the write lock, or when the mark could not be read, every read
  goes to the primary (a write decides on fresh rows; a mark not known is not guessed).

So a worker reads its own writes, a forget it acknowledged stays forgotten on its next
read however far the replica lags, and once it has seen another worker's forget in the
record (every read of a team memory first asks the primary what changed) it no longer
reads where that forget was not replayed. Reads of other workers' writes not yet seen
may lag: a memory found a moment late. The replica's replay position only grows, so
once it passed the mark the check costs nothing until the mark moves again.

:class:`MarkingRecord` raises the mark around the store of record; :class:`Replica` is
the index's connection to the replica, which says whether a read may go there.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kronika.core.model import MemoryItem
from kronika.errors import StoreError
from kronika.ports import RecordDocument, RecordWritten, StoreOfRecord
from kronika.stores.postgres.connect import connect, gone, one_line, redact_url

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

log = logging.getLogger("kronika")

PRIMARY_LSN = "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')"
"""The primary's WAL insert position, in bytes: past every commit made before it."""
REPLAYED_LSN = "SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')"
"""How far a replica has replayed the primary's WAL (NULL on a server that is not one)."""
RETRY_S = 5.0
"""Seconds reads stay on the primary after the replica could not be reached."""


class ReplayMark:
    """How far a replica must have replayed before this worker reads there (thread-safe).

    :meth:`needed` is the WAL position, or ``None`` while only the primary will do: the
    worker holds the write lock, or the position after its last write could not be read.
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._lsn = 0
        self._holding = 0
        self._wrote = False
        self._unknown = False

    def needed(self) -> int | None:
        with self._guard:
            return None if self._holding or self._unknown else self._lsn

    @property
    def unknown(self) -> bool:
        return self._unknown

    def holding(self) -> None:
        with self._guard:
            self._holding += 1

    def released(self) -> None:
        """Let go of one hold (the caller reads the primary's position first when
        :attr:`wrote_meanwhile`, see :meth:`MarkingRecord.release`)."""
        with self._guard:
            self._holding = max(0, self._holding - 1)
            if not self._holding:
                self._wrote = False

    def wrote(self) -> None:
        """Something was written under the write lock (its end raises the mark)."""
        with self._guard:
            if self._holding:
                self._wrote = True

    @property
    def held(self) -> bool:
        with self._guard:
            return bool(self._holding)

    @property
    def wrote_meanwhile(self) -> bool:
        with self._guard:
            return bool(self._holding) and self._wrote

    def raise_to(self, lsn: int) -> None:
        with self._guard:
            self._lsn = max(self._lsn, lsn)
            self._unknown = False

    def lost(self) -> None:
        """The primary's position could not be read: the primary only, until it is."""
        with self._guard:
            self._unknown = True


def primary_lsn(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute(PRIMARY_LSN).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


class MarkingRecord:
    """A :class:`~kronika.ports.StoreOfRecord` that raises ``mark`` (see the module):
    after a write lock in which something was written, and when :meth:`changes` finds
    a change this worker had not seen. ``pool`` reaches the primary."""

    def __init__(self, record: StoreOfRecord, pool: ConnectionPool, mark: ReplayMark) -> None:
        self.inner = record
        self._pool = pool
        self._mark = mark
        self._seen = 0  # the newest change this worker saw or wrote

    @property
    def tenant(self) -> str:
        return self.inner.tenant

    def hold(
        self, agents: frozenset[str] | None = None, *, since: int | None = None
    ) -> list[RecordDocument] | None:
        self._mark.holding()
        try:
            found = self.inner.hold(agents, since=since)
        except BaseException:
            self._mark.released()
            raise
        if found is not None and since is not None:
            self._saw(since, found)
        return found

    def release(self, then: Callable[[], None] | None = None) -> None:
        try:  # the mark is raised after ``then``: what it wrote is read on the primary
            self.inner.release(then)
        finally:
            if self._mark.wrote_meanwhile:
                self._mark_now()  # before the hold ends: no read slips in with the old mark
            self._mark.released()

    def changes(
        self, since: int, *, grown: bool = False, before: int | None = None
    ) -> list[RecordDocument]:
        found = self.inner.changes(since, grown=grown, before=before)
        self._saw(since, found)
        return found

    def _saw(self, since: int, found: Sequence[RecordDocument]) -> None:
        """The changes after ``since`` were read: raise the mark when they are new."""
        # ``since`` past what this worker saw: another process sharing its folder moved on
        new = bool(found) or since > self._seen
        self._seen = max(self._seen, since, *(doc.change for doc in found))
        if new and self._mark.held:
            self._mark.wrote()  # under the write lock: the position is read at its end
        elif new or self._mark.unknown:
            self._mark_now()

    def document(self, agent: str, path: str) -> RecordDocument | None:
        return self.inner.document(agent, path)

    def write(
        self,
        documents: Sequence[RecordDocument],
        items: Mapping[tuple[str, str], Sequence[MemoryItem]],
        *,
        fold: bool = False,
    ) -> RecordWritten:
        written = self.inner.write(documents, items, fold=fold)
        self._seen = max(self._seen, written.last)
        if documents:
            self._mark.wrote()
        return written

    def fold_parts(self) -> int:
        return self.inner.fold_parts()

    def close(self) -> None:
        self.inner.close()

    def _mark_now(self) -> None:
        try:
            with self._pool.connection() as conn:
                self._mark.raise_to(primary_lsn(conn))
        except Exception as err:  # noqa: BLE001 - what was written stays written
            self._mark.lost()
            log.warning("reads stay on the primary: its WAL position is unknown (%s)", err)


class Replica:
    """The index's connection to a read replica (``url``, scoped to the tenant's
    schema), opened when first wanted and again after it failed (not before
    :data:`RETRY_S`). :meth:`ready` gives it when a read may go there (see the module)."""

    def __init__(self, url: str, mark: ReplayMark) -> None:
        self.url = url
        self.mark = mark
        self.conn: psycopg.Connection[Any] | None = None
        self.replayed = -1  # the last replay position seen on ``conn``
        self.down_until = 0.0
        self.graph_settings: str | None = None  # the HNSW settings run on ``conn``
        self._said = False

    def ready(self) -> psycopg.Connection[Any] | None:
        """The replica's connection when it has replayed the mark; ``None``: the primary."""
        needed = self.mark.needed()
        if needed is None:
            return None
        if self.conn is not None and needed <= self.replayed:
            return self.conn
        conn = self._connection()
        if conn is None:
            return None
        try:
            row = conn.execute(REPLAYED_LSN).fetchone()
        except Exception as err:  # noqa: BLE001 - the primary answers meanwhile
            self.failed(err)
            return None
        if row is None or row[0] is None:
            self._down(f"{redact_url(self.url)} is not a replica (not in recovery)")
            return None
        self.replayed = int(row[0])
        return conn if needed <= self.replayed else None

    def served(self) -> None:
        """A read was served here (a later failure is said again)."""
        self._said = False

    def failed(self, err: BaseException) -> None:
        """A read on the replica failed: it is retried on the primary; a broken
        connection is dropped, a cancelled statement (a recovery conflict) is not."""
        conn = self.conn
        if conn is None or conn.closed or conn.broken:
            self._down(one_line(err))
            return
        log.info("a read on the replica failed and went to the primary: %s", one_line(err))
        try:
            conn.rollback()
        except Exception:  # noqa: BLE001
            self._down(one_line(err))

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()

    def _connection(self) -> psycopg.Connection[Any] | None:
        if self.conn is not None and not gone(self.conn):
            return self.conn
        self.close()
        if time.monotonic() < self.down_until:
            return None
        try:
            conn = connect(self.url, autocommit=True)
        except StoreError as err:
            self._down(str(err))
            return None
        if conn.adapters.types.get("vector") is None:  # pgvector not replayed there yet
            conn.close()
            self._down(f"{redact_url(self.url)} has no vector type yet")
            return None
        self.conn, self.replayed, self.graph_settings = conn, -1, None
        return conn

    def _down(self, why: str) -> None:
        self.close()
        self.replayed = -1
        self.down_until = time.monotonic() + RETRY_S
        if not self._said:
            self._said = True
            log.warning("reads go to the primary: the read replica cannot be used (%s)", why)
