"""Adding items at the end of one indexed file without re-indexing the rest of it.

A conversation's file only grows at its end, so a new turn needs its own rows and
nothing else: no delete and reinsert of the turns already there. Each row records its
place in its file (``pos``: 0, 1, 2… in file order), and :meth:`SqliteIndex.neighbours`
finds a turn's context by place, so appended rows take the next places and the next
rowids of the whole index, whatever other files were indexed since: sessions growing
side by side each cost one turn's rows per turn. When the index no longer describes
the file as the caller saw it, nothing is written and the caller re-indexes the file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from kronika.core.model import MemoryItem
from kronika.ports import SourceState, SourceTail
from kronika.stores.sqlite import rows as R

_TAIL_SQL = R.SELECT_ITEM_SQL.replace(" FROM items AS i", ", i.text_hash, i.pos FROM items AS i")
_STATE_SQL = "SELECT content_hash, mtime_ns, size FROM sources WHERE agent = ? AND path = ?"
_LAST_POS_SQL = "SELECT max(pos) FROM items WHERE source_agent = ? AND source_path = ?"


def source_tail(conn: sqlite3.Connection, agent: str, path: str, last: int) -> SourceTail | None:
    """The tail of ``(agent, path)``; ``None`` when the index holds no state for it.

    The count is the last item's place + 1 (places run 0, 1, 2… without gaps), read
    from the ``(source_agent, source_path, pos)`` index: no scan of the file's rows."""
    found = conn.execute(_STATE_SQL, (agent, path)).fetchone()
    if found is None:
        return None
    state = SourceState(agent, path, str(found[0]), int(found[1]), int(found[2]))
    rows = conn.execute(
        _TAIL_SQL + " WHERE i.source_agent = ? AND i.source_path = ? ORDER BY i.pos DESC LIMIT ?",
        (agent, path, max(last, 1)),
    ).fetchall()
    count = int(rows[0][-1]) + 1 if rows else 0
    rows = rows[:last]
    rows.reverse()
    items = tuple(R.item_from_row(row[:-2]) for row in rows)
    hashes = tuple(str(row[-2]) for row in rows)
    return SourceTail(state, count, items, hashes, count > 0)


def append_rows(
    conn: sqlite3.Connection,
    expected: SourceState,
    state: SourceState,
    items: Sequence[MemoryItem],
    text_hashes: Sequence[str],
    top: int,
) -> bool:
    """Insert ``items`` after the last row of ``expected``'s file (at the next places,
    with rowids after ``top``) and record ``state``; ``False`` (nothing written) unless
    the index still holds ``expected`` for the file and none of the ids is indexed yet."""
    found = conn.execute(_STATE_SQL, (expected.agent, expected.path)).fetchone()
    if found is None or (str(found[0]), int(found[1]), int(found[2])) != (
        expected.content_hash,
        expected.mtime_ns,
        expected.size,
    ):
        return False
    (last,) = conn.execute(_LAST_POS_SQL, (expected.agent, expected.path)).fetchone()
    if last is None:
        return False
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        return False
    marks = ", ".join("?" * len(ids))
    if conn.execute(f"SELECT 1 FROM items WHERE id IN ({marks}) LIMIT 1", ids).fetchone():
        return False
    pairs = zip(items, text_hashes, strict=True)
    numbered = [(top + 1 + n, int(last) + 1 + n, item, h) for n, (item, h) in enumerate(pairs)]
    conn.executemany(
        R.INSERT_ITEM_SQL, (R.item_row(rid, it, state, h, pos) for rid, pos, it, h in numbered)
    )
    conn.executemany(R.INSERT_FTS_SQL, (R.fts_row(rid, it) for rid, _, it, _ in numbered))
    conn.executemany(
        "INSERT INTO item_entities (item_rowid, entity_norm) VALUES (?, ?)",
        (row for rid, _, it, _ in numbered for row in R.entity_rows(rid, it)),
    )
    conn.execute(
        "UPDATE sources SET content_hash = ?, mtime_ns = ?, size = ? WHERE agent = ? AND path = ?",
        (state.content_hash, state.mtime_ns, state.size, state.agent, state.path),
    )
    return True
