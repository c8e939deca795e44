"""Changing a few items of one indexed file without re-indexing the rest of it.

A remembered fact adds one bullet to ``brain.md``; a superseded one replaces one. The
Brain is rewritten whole on disk (it is small), but its rows need not be: the caller
(:mod:`kronika.engine.indexer`) compares the file's items as the index holds them with
its items now and hands over the difference. Rows of items that changed are deleted
and inserted again (rows are never changed in place: the in-memory snapshots of the
index keep a row until its rowid is deleted), rows of items that only moved to
another line get their new line number (a column no snapshot keeps). New rows take
the next rowids and the file's next places (``pos``), as appended rows do.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from kronika.core.model import MemoryItem
from kronika.ports import SourceState
from kronika.stores.sqlite import rows as R

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
