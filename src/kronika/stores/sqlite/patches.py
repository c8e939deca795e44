"""Changing a few items of one indexed file without re-indexing the rest of it.

A remembered fact adds one bullet to ``brain.md``; a superseded one replaces one. The
Brain is rewritten whole on disk (it is small), but its rows need not be: the caller
(:mod:`kronika.engine.indexer`) compares the file's items as the index holds them with
its items now and hands over the difference. Rows of items that changed are deleted
and inserted again (rows are never changed in place: the in-memory snapshots of the
index keep a row until its rowid is deleted), rows of items that only moved to
another line get their new line number (a column no snapshot keeps). New rows take
the next rowids and the file's next places (``pos``), as appended rows do.

A file re-indexed whole (a session, a log) keeps the rows before its first change
(:func:`kept_head`): only the rows from there on are deleted and inserted again, so
the places and rowids of the rows kept still follow the file's order.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from kronika.core.model import MemoryItem
from kronika.ports import SourceState
from kronika.stores.sql import rows as shared
from kronika.stores.sqlite import rows as R
from kronika.stores.sqlite.dialect import SQLITE

_STATE_SQL = "SELECT content_hash, mtime_ns, size FROM sources WHERE agent = ? AND path = ?"


def holds(conn: sqlite3.Connection, expected: SourceState) -> bool:
    """Whether the index still describes ``expected``'s file as ``expected`` does."""
    found = conn.execute(_STATE_SQL, (expected.agent, expected.path)).fetchone()
    return found is not None and (str(found[0]), int(found[1]), int(found[2])) == (
        expected.content_hash,
        expected.mtime_ns,
        expected.size,
    )


def patch_rows(
    conn: sqlite3.Connection,
    state: SourceState,
    items: Sequence[MemoryItem],
    text_hashes: Sequence[str],
    lines: Mapping[str, int | None],
    top: int,
) -> None:
    """Insert ``items`` (their old rows, wherever they were, already deleted), set the
    line of the items in ``lines`` and record ``state`` for the file. New rows take the
    file's next places, as appended rows do (places order a file's rows as rowids do)."""
    (last,) = conn.execute(
        "SELECT coalesce(max(pos), -1) FROM items WHERE source_agent = ? AND source_path = ?",
        (state.agent, state.path),
    ).fetchone()
    numbered = [
        (top + 1 + n, item, h) for n, (item, h) in enumerate(zip(items, text_hashes, strict=True))
    ]
    conn.executemany(
        R.INSERT_ITEM_SQL,
        (R.item_row(rid, it, state, h, int(last) + rid - top) for rid, it, h in numbered),
    )
    conn.executemany(R.INSERT_FTS_SQL, (R.fts_row(rid, it) for rid, it, _ in numbered))
    conn.executemany(
        "INSERT INTO item_entities (item_rowid, entity_norm) VALUES (?, ?)",
        (row for rid, it, _ in numbered for row in R.entity_rows(rid, it)),
    )
    conn.executemany(
        "UPDATE items SET line = ? WHERE id = ? AND source_agent = ? AND source_path = ?",
        ((line, item_id, state.agent, state.path) for item_id, line in lines.items()),
    )
    conn.execute(
        "UPDATE sources SET content_hash = ?, mtime_ns = ?, size = ? WHERE agent = ? AND path = ?",
        (state.content_hash, state.mtime_ns, state.size, state.agent, state.path),
    )


_HEAD_SQL = (
    f"SELECT {', '.join(R.INSERT_COLUMNS[1:])} FROM items"
    " WHERE source_agent = ? AND source_path = ? ORDER BY pos"
)


def kept_head(
    conn: sqlite3.Connection, state: SourceState, rows: Sequence[tuple[MemoryItem, str]]
) -> int:
    """How many of the file's first ``rows`` (item and text hash, numbered 0, 1, 2… as
    a full replace numbers them) the index already holds exactly as a full replace
    would write them: the rows before a file's first change, which a re-index leaves
    as they are. A turn forgotten near the end of a long session, or a line edited
    near the end of a long log, then writes the rows after it alone.

    The rows held are read in place order and compared value by value, and the read
    stops at the first that differs. ``0`` when the file's places are not the plain
    0, 1, 2… there (another row at a place of the head: a file patched before)."""
    if not rows:
        return 0
    held = conn.execute(_HEAD_SQL, (state.agent, state.path))
    same = 0
    for stored in held:
        if same == len(rows):
            break
        item, text_hash = rows[same]
        if tuple(stored) != shared.item_values(SQLITE, item, state, same, text_hash):
            break
        same += 1
    held.close()
    if not same:
        return 0
    (count,) = conn.execute(
        "SELECT count(*) FROM items WHERE source_agent = ? AND source_path = ? AND pos < ?",
        (state.agent, state.path, same),
    ).fetchone()
    return same if int(count) == same else 0
