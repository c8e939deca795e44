"""Adding items at the end of one indexed file without re-indexing the rest of it.

A conversation's file only grows at its end, so a new turn needs its own rows and
nothing else: no delete and reinsert of the turns already there. Item rowids stay
consecutive in file order (:meth:`SqliteIndex.neighbours` relies on it), so rows are
appended only while the file's last row is the newest row of the index; otherwise,
or when the index no longer describes the file as the caller saw it, nothing is
written and the caller re-indexes the whole file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from kronika.core.model import ItemType, MemoryItem
from kronika.ports import SourceState, SourceTail
from kronika.stores.sqlite import rows as R

_TAIL_SQL = R.SELECT_ITEM_SQL.replace(" FROM items AS i", ", i.text_hash, i.rowid FROM items AS i")
_STATE_SQL = "SELECT content_hash, mtime_ns, size FROM sources WHERE agent = ? AND path = ?"


def source_tail(
    conn: sqlite3.Connection, agent: str, path: str, last: int, top: int
) -> SourceTail | None:
    """The tail of ``(agent, path)``; ``None`` when the index holds no state for it."""
    found = conn.execute(_STATE_SQL, (agent, path)).fetchone()
    if found is None:
        return None
    state = SourceState(agent, path, str(found[0]), int(found[1]), int(found[2]))
    (count,) = conn.execute(
        "SELECT count(*) FROM items WHERE source_agent = ? AND source_path = ?", (agent, path)
    ).fetchone()
    rows = conn.execute(
        _TAIL_SQL + " WHERE i.source_agent = ? AND i.source_path = ? ORDER BY i.rowid DESC LIMIT ?",
        (agent, path, last),
    ).fetchall()
    rows.reverse()
    items = tuple(R.item_from_row(row[:-2]) for row in rows)
    hashes = tuple(str(row[-2]) for row in rows)
    at_end = bool(rows) and int(rows[-1][-1]) == top
    return SourceTail(state, int(count), items, hashes, at_end)


def append_rows(
    conn: sqlite3.Connection,
    expected: SourceState,
    state: SourceState,
    items: Sequence[MemoryItem],
    text_hashes: Sequence[str],
    top: int,
) -> bool:
    """Insert ``items`` after the last row of ``expected``'s file and record ``state``;
    ``False`` (nothing written) unless the index still holds ``expected`` for the file,
    its last row is row ``top`` and none of the ids is indexed yet."""
    found = conn.execute(_STATE_SQL, (expected.agent, expected.path)).fetchone()
    if found is None or (str(found[0]), int(found[1]), int(found[2])) != (
        expected.content_hash,
        expected.mtime_ns,
        expected.size,
    ):
        return False
    (last,) = conn.execute(
        "SELECT max(rowid) FROM items WHERE source_agent = ? AND source_path = ?",
        (expected.agent, expected.path),
    ).fetchone()
    # a conversation's rows must stay consecutive (neighbours); other rows go at the top
    messages = any(item.type is ItemType.MESSAGE for item in items)
    if last is None or (messages and int(last) != top):
        return False
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        return False
    marks = ", ".join("?" * len(ids))
    if conn.execute(f"SELECT 1 FROM items WHERE id IN ({marks}) LIMIT 1", ids).fetchone():
        return False
    pairs = zip(items, text_hashes, strict=True)
    numbered = [(top + 1 + n, item, h) for n, (item, h) in enumerate(pairs)]
    conn.executemany(R.INSERT_ITEM_SQL, (R.item_row(rid, it, state, h) for rid, it, h in numbered))
    conn.executemany(R.INSERT_FTS_SQL, (R.fts_row(rid, it) for rid, it, _ in numbered))
    conn.executemany(
        "INSERT INTO item_entities (item_rowid, entity_norm) VALUES (?, ?)",
        (row for rid, it, _ in numbered for row in R.entity_rows(rid, it)),
    )
    conn.execute(
        "UPDATE sources SET content_hash = ?, mtime_ns = ?, size = ? WHERE agent = ? AND path = ?",
        (state.content_hash, state.mtime_ns, state.size, state.agent, state.path),
    )
    return True
