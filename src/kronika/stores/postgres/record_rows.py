"""The rows of ``record_items`` (the items parsed from each document of the team's store
of record, :mod:`kronika.stores.postgres.record`): only the rows of items that were
added, changed, moved or removed are written, each with a digest of what it holds but
its line, so a write to a large document writes few rows."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from kronika.core.model import MemoryItem
from kronika.core.serialize import item_to_dict
from kronika.stores.sql.source_diff import place, places_by_line, same_but_line

if TYPE_CHECKING:
    import psycopg

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


class Row(NamedTuple):
    """An item's row in ``record_items`` as this process wrote it."""

    position: int
    digest: str
    item: MemoryItem


class Written(NamedTuple):
    """A document as this process last wrote it: the change, its item rows, and
    whether their positions are their lines (:func:`places_by_line`)."""

    change: int
    rows: dict[str, Row]
    by_line: bool


def write_items(
    conn: psycopg.Connection[Any],
    key: tuple[str, str, str],
    items: Sequence[MemoryItem],
    rows: Mapping[str, Row] | None,
    current: bool,
) -> tuple[dict[str, Row], bool]:
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
    stored = None if rows is not None and current else stored_rows(conn, key)
    wanted: dict[str, Row] = {}
    written, moved = [], []
    by_line = places_by_line(items)  # then an item gone moves no other row
    for n, item in enumerate(items):
        if item.id in wanted:
            continue
        position = place(item, by_line, n)
        before = rows.get(item.id) if rows is not None else None
        if before is not None and before.item is item and before.position == position:
            row = before  # most rows of a long document: nothing to compare or make
        elif before is not None and (before.item is item or same_but_line(before.item, item)):
            row = Row(position, before.digest, item)
        else:
            row = Row(position, row_digest(stored_data(item)), item)
        wanted[item.id] = row
        if stored is None:
            was = None if before is None else (before.position, before.digest)
        else:
            was = stored.get(item.id)
        if was is None or was[1] != row.digest:
            written.append((*key, position, *_item_columns(item), stored_data(item), row.digest))
        elif was[0] != position:
            moved.append((item.id, position))
    held = stored if stored is not None else rows if rows is not None else {}
    gone = [item_id for item_id in held if item_id not in wanted]
    delete_items(conn, key, gone)
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


def stored_rows(
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


def delete_items(
    conn: psycopg.Connection[Any], key: tuple[str, str, str], ids: Sequence[str]
) -> None:
    """Delete the rows of items ``ids`` of the document ``key`` (none: no statement)."""
    if ids:
        conn.execute(
            "DELETE FROM record_items WHERE tenant = %s AND agent = %s AND path = %s"
            " AND id = ANY(%s)",
            (*key, list(ids)),
        )


def upsert_rows(
    conn: psycopg.Connection[Any], key: tuple[str, str, str], rows: Iterable[Row]
) -> None:
    """Write ``rows`` of the document ``key`` (inserted, or over the item's row)."""
    values = [
        (*key, r.position, *_item_columns(r.item), stored_data(r.item), r.digest) for r in rows
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


def row_digest(data: str) -> str:
    """A short digest of an item row's data (:func:`stored_data`)."""
    return hashlib.blake2b(data.encode(), digest_size=16).hexdigest()


def stored_data(item: MemoryItem) -> str:
    """The item as the JSON of ``record_items.data``: every field but its line in the
    Markdown (and the citation made from it), which moves whenever a line is added
    above the item; ``position`` keeps the order of a document's items."""
    data = item_to_dict(item)
    del data["citation"]
    del data["provenance"]["line"]
    return json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
