"""Each document a write of the team's store of record carries
(:meth:`kronika.stores.postgres.record.PostgresRecord.write`): written whole with the
rows of its items that changed, added at its end, or put over the span it replaces
(:class:`~kronika.ports.RecordAppend`); and a document's parts folded into its body.
Every statement goes on the connection of the write's transaction, sent together."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kronika.core.model import ItemType, MemoryItem
from kronika.errors import StaleAppend
from kronika.ports import RecordDocument
from kronika.stores.markdown import proposals
from kronika.stores.postgres.follow import CHANNEL as FORGOTTEN
from kronika.stores.postgres.record_rows import (
    Row,
    Written,
    delete_items,
    row_digest,
    stored_data,
    upsert_rows,
    write_items,
)
from kronika.stores.postgres.record_text import WHOLE, assembled
from kronika.stores.sql.source_diff import PLACE_LIMIT, place, places_by_line

if TYPE_CHECKING:
    import psycopg

SPLICED_PARTS = 32
"""How many parts a document may have before a splice writes it whole again instead
(its body, its parts removed): each read of the whole document puts every part in, and
a write of the whole archive costs a few splices' worth."""


class DocumentWrites:
    """The documents of one tenant as this process last wrote them, and their writes."""

    def __init__(self, tenant: str) -> None:
        self._tenant = tenant
        # each document's change and item rows as this process last wrote them
        self._written: dict[tuple[str, str], Written] = {}

    def write(
        self, conn: psycopg.Connection[Any], doc: RecordDocument, items: Sequence[MemoryItem]
    ) -> Callable[[], int]:
        """Write ``doc`` and its ``items``; its change number, to ask for once the
        statements sent together are answered."""
        if doc.appends is not None and doc.appends.at is not None:
            return self._splice(conn, doc, items)
        if doc.appends is not None:
            return self._append(conn, doc, items)
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
        # sent together (the record's write): the three statements went in one round trip
        was, row = was_of.fetchone(), row_of.fetchone()
        change = int(row[0]) if row else 0
        mine = self._written.get((doc.agent, doc.path))
        # the rows as this process last wrote them; the record's still, unless another
        # worker wrote since (their digests hold either way: an item's own)
        current = mine is not None and was is not None and was[0] == mine.change
        rows, by_line = write_items(conn, key, items, None if mine is None else mine.rows, current)
        self._written[(doc.agent, doc.path)] = Written(change, rows, by_line)
        if doc.text is None:
            self._written.pop((doc.agent, doc.path), None)
        if doc.path == proposals.PATH:
            self._write_proposals(conn, doc)
        return lambda: change

    def _append(
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
            item.id: Row(
                place(item, by_line, int(was[2]) + n),
                row_digest(stored_data(item)),
                item,
            )
            for n, item in enumerate(items)
        }
        upsert_rows(conn, key, added.values())

        # the rows still go by line when the added ones follow the last line
        follow = by_line and all(r.position >= int(was[2]) for r in added.values())

        def change() -> int:
            row = numbered.fetchone()
            number = int(row[0]) if row else 0
            mine = self._written.pop((doc.agent, doc.path), None)
            if mine is not None and mine.change == was[0]:  # the rows this process wrote
                mine.rows.update(added)
                self._written[(doc.agent, doc.path)] = Written(
                    number, mine.rows, mine.by_line and follow
                )
            return number

        return change

    def _splice(
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
        added: dict[str, Row] = {}
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
            added[item.id] = Row(line, row_digest(stored_data(item)), item)
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
        delete_items(conn, key, gone)
        changed = []
        for item_id, row in added.items():
            before = mine.rows.get(item_id)
            if before is None or (before.position, before.digest) != row[:2]:
                changed.append(row)
        upsert_rows(conn, key, changed)

        def change() -> int:
            row = numbered.fetchone()
            number = int(row[0]) if row else 0
            rows = self._written.pop((doc.agent, doc.path)).rows
            for item_id in gone:
                rows.pop(item_id, None)
            rows.update(added)
            self._written[(doc.agent, doc.path)] = Written(number, rows, True)
            return number

        return change

    def fold(self, conn: psycopg.Connection[Any], held: frozenset[str] | None) -> int:
        """Inside a transaction on ``conn``: every document of the ``held`` agents (all:
        ``None``) whose parts went over a span of it gets its text as one body and no
        parts (:meth:`~kronika.stores.postgres.record.PostgresRecord.fold_parts`); how
        many. Its read waits for the answers sent so far."""
        agents = None if held is None else sorted(held)
        # a forget's: the other workers bring their folders up to date once it commits
        conn.execute("SELECT pg_notify(%s, %s)", (FORGOTTEN, self._tenant))
        rows = conn.execute(
            f"SELECT d.agent, d.path, {WHOLE} FROM record_documents d"
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
                (assembled(body, texts, ats, cuts), *key),
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
