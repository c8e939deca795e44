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
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import fields
from typing import TYPE_CHECKING, Any, NamedTuple

from kronika.core.model import ItemType, MemoryItem, Provenance
from kronika.core.serialize import item_to_dict
from kronika.errors import StaleAppend, StoreError
from kronika.ports import RecordAppend, RecordDocument, RecordWritten
from kronika.stores.markdown import proposals
from kronika.stores.postgres.connect import one_line
from kronika.stores.postgres.follow import CHANNEL as FORGOTTEN
from kronika.stores.postgres.follow import ForgetFollower
from kronika.stores.postgres.record_audit import INSERT_AUDIT, AuditRow
from kronika.stores.postgres.trips import sent_together
from kronika.stores.sql.source_diff import PLACE_LIMIT, place, places_by_line

log = logging.getLogger("kronika.record")

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

_UPSERT_ITEM = (
    "INSERT INTO record_items (tenant, agent, path, position, id, type, status, scope,"
    " channel, user_name, team, key, section, content, created_at, valid_from, valid_to,"
    " superseded_by, session_id, speaker, data, digest) VALUES (%s, %s, %s, %s, %s, %s, %s,"
    " %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s)"
    " ON CONFLICT (tenant, agent, path, id) DO UPDATE SET position = excluded.position,"
    " type = excluded.type, status = excluded.status, scope = excluded.scope,"
    " channel = excluded.channel, user_name = excluded.user_name, team = excluded.team,"
    " key = excluded.key, section = excluded.section, content = excluded.content,"
    " created_at = excluded.created_at, valid_from = excluded.valid_from,"
    " valid_to = excluded.valid_to, superseded_by = excluded.superseded_by,"
    " session_id = excluded.session_id, speaker = excluded.speaker, data = excluded.data,"
    " digest = excluded.digest"
)
_PARTS = (
    "(SELECT array_agg(p.{0} ORDER BY p.change) FROM record_document_parts p"
    " WHERE p.tenant = d.tenant AND p.agent = d.agent AND p.path = d.path)"
)
_WHOLE = ", ".join(["d.body", *(_PARTS.format(column) for column in ("text", "at", "cut"))])
"""A document's whole text, as its body and the texts, places and spans of the parts
made since, in order (:func:`_assembled`)."""
_CHANGES = (
    "SELECT d.agent, d.path, d.modified_ns, d.change, d.sha256, n.bases, n.texts, n.ats,"
    " n.cuts, CASE WHEN n.bases IS NULL THEN d.body END,"
    + ", ".join(
        f" CASE WHEN n.bases IS NULL THEN {_PARTS.format(column)} END"
        for column in ("text", "at", "cut")
    )
    + " FROM record_documents d LEFT JOIN LATERAL (SELECT CASE WHEN"
    " bool_and(p.base_sha256 IS NOT NULL) THEN array_agg(p.base_sha256 ORDER BY p.change)"
    " END AS bases,"
    " array_agg(p.text ORDER BY p.change) AS texts,"
    " array_agg(p.at ORDER BY p.change) AS ats, array_agg(p.cut ORDER BY p.change) AS cuts"
    " FROM record_document_parts p WHERE p.tenant = d.tenant AND p.agent = d.agent"
    " AND p.path = d.path AND p.change > %(since)s AND d.body_change <= %(since)s) n"
    " ON %(grown)s WHERE d.tenant = %(tenant)s AND d.change > %(since)s"
    " AND (%(before)s::bigint IS NULL OR d.change < %(before)s) ORDER BY d.change"
)
"""Every document changed after change ``since``; with ``grown``, one whose body was
written by then (``body_change``) and that only had parts made since, as those parts
(each with the SHA-256 the document had before it); any other whole (:data:`_WHOLE`),
one with a part older than migration ``0104`` (which has no such digest) too.
The parts after a change are found by the primary key: a pull of a grown session reads
its new parts, not its body."""
_DOCUMENT = (
    f"SELECT d.agent, d.path, d.modified_ns, d.change, {_WHOLE} FROM record_documents d"
    " WHERE d.tenant = %(tenant)s AND d.agent = %(agent)s AND d.path = %(path)s"
)
SPLICED_PARTS = 32
"""How many parts a document may have before a splice writes it whole again instead
(its body, its parts removed): each read of the whole document puts every part in, and
a write of the whole archive costs a few splices' worth."""
_LOCK_CLASS = 0x6B72  # "kr": with the tenant's hash, the key of its write lock
_STAMP_CLASS = 0x6B73  # "ks": with the tenant's hash, the lock that numbers its changes
_AGENT_SEED = 0x6B61  # "ka": the hash seed of an agent's lock (one 64-bit key)
_FOLLOW_CLASS = 0x6B66  # "kf": with the tenant's hash, the lock of its follow-ups
_FOLLOW_SEED = 0x6B62  # "kb": the hash seed of an agent's follow-up lock


class _Row(NamedTuple):
    """An item's row in ``record_items`` as this process wrote it."""

    position: int
    digest: str
    item: MemoryItem


class _Written(NamedTuple):
    """A document as this process last wrote it: the change, its item rows, and
    whether their positions are their lines (:func:`places_by_line`)."""

    change: int
    rows: dict[str, _Row]
    by_line: bool


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
        # each document's change and item rows as this process last wrote them
        self._written: dict[tuple[str, str], _Written] = {}
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
                found = None if since is None else conn.execute(_CHANGES, self._asked(since))
            rows = None if found is None else found.fetchall()
        except Exception as err:
            self._unlock(conn)
            raise StoreError(f"{what}: {one_line(err)}") from err
        self._held, self._holder, self._agents = conn, threading.get_ident(), agents
        return None if rows is None else _documents(rows)

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
        return _documents(self._read(_CHANGES, self._asked(since, grown, before)))

    def _asked(
        self, since: int, grown: bool | None = None, before: int | None = None
    ) -> dict[str, object]:
        """The parameters of :data:`_CHANGES` (``grown`` by default: past change 0)."""
        grown = since > 0 if grown is None else grown
        return {"since": since, "grown": grown, "tenant": self._tenant, "before": before}

    def document(self, agent: str, path: str) -> RecordDocument | None:
        asked = {"tenant": self._tenant, "agent": agent, "path": path}
        return next(
            (
                RecordDocument(a, p, _assembled(body, texts, ats, cuts), int(m), int(c))
                for a, p, m, c, body, texts, ats, cuts in self._read(_DOCUMENT, asked)
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
                    changes.append(self._write_document(conn, doc, items.get(key, ())))
                if self._audit:  # the audit entries of the hold, in the same commit
                    with conn.cursor() as cur:
                        cur.executemany(INSERT_AUDIT, self._audit)
                if fold:  # a forget's: it and the folding land together or not at all
                    self._fold(conn)
            newest = newest_of.fetchone()
            numbers = [change() for change in changes]
        except StoreError:
            raise
        except Exception as err:
            raise StoreError(f"cannot write to the PostgreSQL record: {one_line(err)}") from err
        self._audit = []
        return RecordWritten(min(numbers), max(numbers), int(newest[0]) if newest else 0)

    def _write_document(
        self, conn: psycopg.Connection[Any], doc: RecordDocument, items: Sequence[MemoryItem]
    ) -> Callable[[], int]:
        """Write ``doc`` and its ``items``; its change number, to ask for once the
        statements sent together are answered."""
        if doc.appends is not None and doc.appends.at is not None:
            return self._splice_document(conn, doc, items)
        if doc.appends is not None:
            return self._append_document(conn, doc, items)
        key = (self._tenant, doc.agent, doc.path)
        digest = None if doc.text is None else hashlib.sha256(doc.text.encode()).hexdigest()
        was_of = conn.execute(
            "SELECT change FROM record_documents WHERE tenant = %s AND agent = %s AND path = %s",
            key,
        )
        row_of = conn.execute(
            "WITH c AS (SELECT nextval('record_change_seq') AS n) INSERT INTO record_documents"
            " (tenant, agent, path, body, sha256, modified_ns, change, body_change)"
            " SELECT %s, %s, %s, %s, %s, %s, c.n, c.n FROM c"
            " ON CONFLICT (tenant, agent, path) DO UPDATE SET body = excluded.body,"
            " sha256 = excluded.sha256, modified_ns = excluded.modified_ns,"
            " change = excluded.change, body_change = excluded.change RETURNING change",
            (*key, doc.text, digest, doc.modified_ns),
        )
        conn.execute(
            "DELETE FROM record_document_parts WHERE tenant = %s AND agent = %s AND path = %s",
            key,
        )
        # sent together (:meth:`write`): the three statements went in one round trip
        was, row = was_of.fetchone(), row_of.fetchone()
        change = int(row[0]) if row else 0
        mine = self._written.get((doc.agent, doc.path))
        # the rows as this process last wrote them; the record's still, unless another
        # worker wrote since (their digests hold either way: an item's own)
        current = mine is not None and was is not None and was[0] == mine.change
        rows, by_line = self._write_items(
            conn, key, items, None if mine is None else mine.rows, current
        )
        self._written[(doc.agent, doc.path)] = _Written(change, rows, by_line)
        if doc.text is None:
            self._written.pop((doc.agent, doc.path), None)
        if doc.path == proposals.PATH:
            self._write_proposals(conn, doc)
        return lambda: change

    def _append_document(
        self, conn: psycopg.Connection[Any], doc: RecordDocument, items: Sequence[MemoryItem]
    ) -> Callable[[], int]:
        """Add ``doc.text`` at the end of the body the record holds and ``items`` after
        its rows (:class:`~kronika.ports.RecordAppend`): the rows already there are
        neither read nor compared, so the write costs the same whatever the document's
        length. :class:`StaleAppend` when the body is not the one the text follows or
        an item is there already (the caller writes the document whole)."""
        assert doc.appends is not None and doc.text is not None
        key = (self._tenant, doc.agent, doc.path)
        ids = [item.id for item in items]
        was = conn.execute(
            "SELECT d.change, d.sha256, (SELECT coalesce(max(i.position) + 1, 0)"
            " FROM record_items i WHERE i.tenant = d.tenant AND i.agent = d.agent"
            " AND i.path = d.path), EXISTS (SELECT 1 FROM record_items i"
            " WHERE i.tenant = d.tenant AND i.agent = d.agent AND i.path = d.path"
            " AND i.id = ANY(%s)) FROM record_documents d"
            " WHERE d.tenant = %s AND d.agent = %s AND d.path = %s",
            (ids, *key),
        ).fetchone()
        if was is None or was[1] != doc.appends.base_sha256 or was[3] or len(set(ids)) < len(ids):
            raise StaleAppend(f"{doc.agent}/{doc.path} changed in the record")
        # the body is not written again: the added text is a part of its own, numbered
        # with the document's new change in the same statement, whose answer nothing
        # waits for (it is read once the statements sent together are answered)
        numbered = conn.execute(
            "WITH d AS (UPDATE record_documents SET sha256 = %s, modified_ns = %s,"
            " change = nextval('record_change_seq')"
            " WHERE tenant = %s AND agent = %s AND path = %s RETURNING change)"
            " INSERT INTO record_document_parts (tenant, agent, path, change, text, base_sha256)"
            " SELECT %s, %s, %s, d.change, %s, %s FROM d RETURNING change",
            (doc.appends.sha256, doc.modified_ns, *key, *key, doc.text, doc.appends.base_sha256),
        )
        by_line = places_by_line(items)
        added = {
            item.id: _Row(
                place(item, by_line, int(was[2]) + n),
                _digest(_stored_data(item)),
                item,
            )
            for n, item in enumerate(items)
        }
        _upsert_rows(conn, key, added.values())

        # the rows still go by line when the added ones follow the last line
        follow = by_line and all(r.position >= int(was[2]) for r in added.values())

        def change() -> int:
            row = numbered.fetchone()
            number = int(row[0]) if row else 0
            mine = self._written.pop((doc.agent, doc.path), None)
            if mine is not None and mine.change == was[0]:  # the rows this process wrote
                mine.rows.update(added)
                self._written[(doc.agent, doc.path)] = _Written(
                    number, mine.rows, mine.by_line and follow
                )
            return number

        return change

    def _splice_document(
        self, conn: psycopg.Connection[Any], doc: RecordDocument, items: Sequence[MemoryItem]
    ) -> Callable[[], int]:
        """Put ``doc.text`` over the span of the record's text it replaces as a part of
        its own, delete the rows of the items that span held that ``items`` (those of
        the new text) do not, and write the rows of ``items``
        (:class:`~kronika.ports.RecordAppend` with ``at``): neither the body nor the
        other rows are written, read or compared, so the write costs the same whatever
        the document's length. :class:`StaleAppend` (the caller writes the document
        whole) when the record's text is not the one the splice was made on, when this
        process does not know the document's rows as the record holds them (another
        worker wrote it since) or they do not go by line, when an added item is
        elsewhere in the document, and when the document has :data:`SPLICED_PARTS`
        parts already."""
        splice = doc.appends
        assert splice is not None and splice.at is not None and doc.text is not None
        key = (self._tenant, doc.agent, doc.path)
        was = conn.execute(
            "SELECT d.change, d.sha256, (SELECT count(*) FROM record_document_parts p"
            " WHERE p.tenant = d.tenant AND p.agent = d.agent AND p.path = d.path)"
            " FROM record_documents d WHERE d.tenant = %s AND d.agent = %s AND d.path = %s",
            key,
        ).fetchone()
        mine = self._written.get((doc.agent, doc.path))
        if (
            was is None
            or was[1] != splice.base_sha256
            or int(was[2]) >= SPLICED_PARTS
            or mine is None
            or mine.change != was[0]
            or not mine.by_line
        ):
            raise StaleAppend(f"{doc.agent}/{doc.path} changed in the record")
        replaced = set(splice.gone)
        added: dict[str, _Row] = {}
        last = -1
        for item in items:
            line = item.provenance.line
            if (
                item.type is ItemType.MESSAGE
                or line is None
                or line <= last
                or line >= PLACE_LIMIT
                or (item.id in mine.rows and item.id not in replaced)
            ):
                raise StaleAppend(f"{doc.agent}/{doc.path}: the splice's items do not fit")
            last = line
            added[item.id] = _Row(line, _digest(_stored_data(item)), item)
        numbered = conn.execute(
            "WITH d AS (UPDATE record_documents SET sha256 = %s, modified_ns = %s,"
            " change = nextval('record_change_seq')"
            " WHERE tenant = %s AND agent = %s AND path = %s RETURNING change)"
            " INSERT INTO record_document_parts"
            " (tenant, agent, path, change, text, base_sha256, at, cut)"
            " SELECT %s, %s, %s, d.change, %s, %s, %s, %s FROM d RETURNING change",
            (
                splice.sha256,
                doc.modified_ns,
                *key,
                *key,
                doc.text,
                splice.base_sha256,
                splice.at,
                splice.cut,
            ),
        )
        gone = [item_id for item_id in replaced if item_id not in added]
        _delete_items(conn, key, gone)
        changed = []
        for item_id, row in added.items():
            before = mine.rows.get(item_id)
            if before is None or (before.position, before.digest) != row[:2]:
                changed.append(row)
        _upsert_rows(conn, key, changed)

        def change() -> int:
            row = numbered.fetchone()
            number = int(row[0]) if row else 0
            rows = self._written.pop((doc.agent, doc.path)).rows
            for item_id in gone:
                rows.pop(item_id, None)
            rows.update(added)
            self._written[(doc.agent, doc.path)] = _Written(number, rows, True)
            return number

        return change

    def _write_items(
        self,
        conn: psycopg.Connection[Any],
        key: tuple[str, str, str],
        items: Sequence[MemoryItem],
        rows: Mapping[str, _Row] | None,
        current: bool,
    ) -> tuple[dict[str, _Row], bool]:
        """Bring the document's rows in ``record_items`` to ``items``, touching only the
        rows that differ: a removed item's row is deleted, a new or changed one written,
        one that only moved (a line added above it) gets its new position, and every
        other row is left as it is. A repeated id keeps its first occurrence.

        An item's digest is made again only when it differs from the one this
        process wrote last (its line aside, which the digest leaves out): serialising
        every item of a large document cost more than writing the few that changed.
        ``rows`` are the document's rows as this process last wrote them; ``current``:
        nobody wrote the document since, so the record holds them (else its rows are
        read, and ``rows`` only spare making again the digests of the items that are
        the same). Returns the rows as they are, and whether their positions are their
        lines."""
        stored = None if rows is not None and current else self._stored_rows(conn, key)
        wanted: dict[str, _Row] = {}
        written, moved = [], []
        by_line = places_by_line(items)  # then an item gone moves no other row
        for n, item in enumerate(items):
            if item.id in wanted:
                continue
            position = place(item, by_line, n)
            before = rows.get(item.id) if rows is not None else None
            if before is not None and before.item is item and before.position == position:
                row = before  # most rows of a long document: nothing to compare or make
            elif before is not None and (before.item is item or _same_but_line(before.item, item)):
                row = _Row(position, before.digest, item)
            else:
                row = _Row(position, _digest(_stored_data(item)), item)
            wanted[item.id] = row
            if stored is None:
                was = None if before is None else (before.position, before.digest)
            else:
                was = stored.get(item.id)
            if was is None or was[1] != row.digest:
                written.append(
                    (*key, position, *_item_columns(item), _stored_data(item), row.digest)
                )
            elif was[0] != position:
                moved.append((item.id, position))
        held = stored if stored is not None else rows if rows is not None else {}
        gone = [item_id for item_id in held if item_id not in wanted]
        _delete_items(conn, key, gone)
        if moved:
            conn.execute(
                "UPDATE record_items r SET position = m.position"
                " FROM unnest(%s::text[], %s::int[]) AS m (id, position)"
                " WHERE r.tenant = %s AND r.agent = %s AND r.path = %s AND r.id = m.id",
                ([i for i, _ in moved], [n for _, n in moved], *key),
            )
        if written:
            with conn.cursor() as cur:
                cur.executemany(_UPSERT_ITEM, written)
        return wanted, by_line

    @staticmethod
    def _stored_rows(
        conn: psycopg.Connection[Any], key: tuple[str, str, str]
    ) -> dict[str, tuple[int, str]]:
        """The position and digest of each item row the record holds of a document."""
        return {
            str(item_id): (int(position), str(digest))
            for item_id, position, digest in conn.execute(
                "SELECT id, position, digest FROM record_items"
                " WHERE tenant = %s AND agent = %s AND path = %s",
                key,
            )
        }

    def fold_parts(self) -> int:
        if self._held is None:
            raise StoreError("folding the record's parts needs its write lock")
        try:
            with sent_together(self._held):  # one transaction: the text is the same throughout
                return self._fold(self._held)
        except Exception as err:
            raise StoreError(f"cannot fold the record's parts: {one_line(err)}") from err

    def _fold(self, conn: psycopg.Connection[Any]) -> int:
        """Inside a transaction on ``conn``: every document of the agents held whose
        parts went over a span of it gets its text as one body and no parts (see
        :meth:`fold_parts`); how many. Its read waits for the answers sent so far."""
        agents = None if self._agents is None else sorted(self._agents)
        # a forget's: the other workers bring their folders up to date once it commits
        conn.execute("SELECT pg_notify(%s, %s)", (FORGOTTEN, self._tenant))
        rows = conn.execute(
            f"SELECT d.agent, d.path, {_WHOLE} FROM record_documents d"
            " WHERE d.tenant = %(tenant)s"
            " AND (%(agents)s::text[] IS NULL OR d.agent = ANY(%(agents)s))"
            " AND EXISTS (SELECT 1 FROM record_document_parts p"
            " WHERE p.tenant = d.tenant AND p.agent = d.agent AND p.path = d.path"
            " AND p.at IS NOT NULL)",
            {"tenant": self._tenant, "agents": agents},
        ).fetchall()
        for agent, path, body, texts, ats, cuts in rows:
            key = (self._tenant, agent, path)
            # the change stays: a worker that saw it has nothing new to pull, one that
            # did not gets the document whole (its body is newer)
            conn.execute(
                "UPDATE record_documents SET body = %s, body_change = change"
                " WHERE tenant = %s AND agent = %s AND path = %s",
                (_assembled(body, texts, ats, cuts), *key),
            )
            conn.execute(
                "DELETE FROM record_document_parts WHERE tenant = %s AND agent = %s AND path = %s",
                key,
            )
        return len(rows)

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


def _delete_items(
    conn: psycopg.Connection[Any], key: tuple[str, str, str], ids: Sequence[str]
) -> None:
    """Delete the rows of items ``ids`` of the document ``key`` (none: no statement)."""
    if ids:
        conn.execute(
            "DELETE FROM record_items WHERE tenant = %s AND agent = %s AND path = %s"
            " AND id = ANY(%s)",
            (*key, list(ids)),
        )


def _upsert_rows(
    conn: psycopg.Connection[Any], key: tuple[str, str, str], rows: Iterable[_Row]
) -> None:
    """Write ``rows`` of the document ``key`` (inserted, or over the item's row)."""
    values = [
        (*key, r.position, *_item_columns(r.item), _stored_data(r.item), r.digest) for r in rows
    ]
    if values:
        with conn.cursor() as cur:
            cur.executemany(_UPSERT_ITEM, values)


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
    )


_COMPARED = tuple(f.name for f in fields(MemoryItem) if f.name != "provenance")
_PLACE = tuple(f.name for f in fields(Provenance) if f.name != "line")


def _same_but_line(a: MemoryItem, b: MemoryItem) -> bool:
    """Whether ``a`` and ``b`` hold the same but, maybe, their line in the Markdown."""
    pa, pb = a.provenance, b.provenance
    if any(getattr(pa, name) != getattr(pb, name) for name in _PLACE):
        return False
    return all(getattr(a, name) == getattr(b, name) for name in _COMPARED)


def _digest(data: str) -> str:
    return hashlib.blake2b(data.encode(), digest_size=16).hexdigest()


def _stored_data(item: MemoryItem) -> str:
    """The item as the JSON of ``record_items.data``: every field but its line in the
    Markdown (and the citation made from it), which moves whenever a line is added
    above the item; ``position`` keeps the order of a document's items."""
    data = item_to_dict(item)
    del data["citation"]
    del data["provenance"]["line"]
    return json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)


def _documents(rows: Sequence[Any]) -> list[RecordDocument]:
    """The documents of rows of :data:`_CHANGES`: a document written whole, or the
    parts made since as documents of their own, in order (:func:`_parts`)."""
    found: list[RecordDocument] = []
    for a, p, m, c, sha, bases, texts, ats, cuts, body, all_texts, all_ats, all_cuts in rows:
        if bases is None:
            whole = _assembled(body, all_texts, all_ats, all_cuts)
            found.append(RecordDocument(a, p, whole, int(m), int(c)))
        else:
            found.extend(_parts(a, p, int(m), int(c), sha, bases, texts, ats, cuts))
    return found


def _parts(
    agent: str,
    path: str,
    modified_ns: int,
    change: int,
    sha256: str,
    bases: Sequence[str],
    texts: Sequence[str],
    ats: Sequence[int | None],
    cuts: Sequence[int | None],
) -> list[RecordDocument]:
    """The parts of a document made since a pull, each the text that went in with the
    SHA-256 the document had before it and after it (the next part's before, the
    document's own after the last); parts added at the end one after the other come as
    one. Each carries the document's time and change."""
    found: list[RecordDocument] = []
    afters = [*bases[1:], sha256]
    n = 0
    while n < len(texts):
        stop = n + 1
        if ats[n] is None:
            while stop < len(texts) and ats[stop] is None:
                stop += 1
        splice = RecordAppend(bases[n], afters[stop - 1], ats[n], cuts[n] or 0)
        text = "".join(texts[n:stop])
        found.append(RecordDocument(agent, path, text, modified_ns, change, appends=splice))
        n = stop
    return found


def _assembled(
    body: str | None,
    texts: Sequence[str] | None,
    ats: Sequence[int | None] | None,
    cuts: Sequence[int | None] | None,
) -> str | None:
    """A document's text: its ``body`` with its parts put in, in order (each at the
    end, or over the span it replaces); ``None`` for a removed document."""
    if body is None or not texts:
        return body
    if ats is None or all(at is None for at in ats):
        return body + "".join(texts)
    text = body
    for part, at, cut in zip(texts, ats, cuts or [None] * len(texts), strict=True):
        text = text + part if at is None else text[:at] + part + text[at + (cut or 0) :]
    return text
