"""What a deletion leaves behind in the index's files, and how it is scrubbed away.

Deleting a row does not erase its bytes everywhere: SQLite leaves them in free space
and free pages, FTS5 only writes a delete marker until its segments are merged, the
``-wal`` file keeps older versions of every page it logged, and the copies and the
vector graph saved beside the file (:mod:`.saved`, :mod:`.ann`) keep what they held
when they were written (usearch only marks a removed vector, its bytes stay). So a
forgotten memory could still be read with a hex editor.

The index connection runs with ``PRAGMA secure_delete``, which overwrites deleted
content inside the file as it goes (cheap: the pages are being written anyway). The
rest is costly and only needed when a text really left the index, not when a file is
re-indexed with the same rows, so the index notes the rows it deletes whose text no
row written in the same transaction has (:func:`searchable_rows`), and after the
sync checks whether one of those is held by no row anywhere any more (:func:`gone_rows`,
:func:`still_held`: a superseded fact moved to the history file is still there). If one
is gone:

1. FTS5 merges all its segments into one (``optimize``), which drops deleted entries
   and delete markers, and the usage statistics of the items gone for good are
   deleted (:func:`drop_usage`);
2. in the saved copies, every row deleted since they were saved goes: the vectors
   are overwritten with zeros in place (:func:`zero_vectors`), the keyword postings
   written again without those rows and the terms only they held
   (:func:`rewrite_bm25`); a copy this index cannot read is removed. A forgotten
   text may sit in a copy under an earlier rowid (re-indexing a file gives its
   unchanged items new ones), hence every deleted row;
3. the saved vector graph is removed (it is rebuilt in the background, searches stay
   exact meanwhile): which vectors it holds, removed ones included, is not known
   without reading it whole;
4. the ``-wal`` file is checkpointed into the database and truncated.

Each scrub also changes the ``scrubbed`` mark in the ``meta`` table. Another process
that held the index open meanwhile brings its snapshots up to date before it saves
them on close, and does not save a graph it read or began building before the mark
changed: that graph may hold the removed vectors.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from kronika.stores.sqlite import saved
from kronika.stores.sqlite.lexical import Bm25Snapshot, QueryTokenizer
from kronika.stores.sqlite.query import quote
from kronika.stores.sqlite.vectors import VectorSnapshot

log = logging.getLogger("kronika")

Searchable = tuple[str, str, str, str]
"""An ``items_fts`` row: accent-folded content, key, entities and speaker."""

Deleted = tuple[str, Searchable]
"""A deleted item's id and its ``items_fts`` row."""

T = TypeVar("T")
_COLUMNS = ("content", "key", "entities", "speaker")
_PHRASE_WORDS = 16  # a phrase of the first words finds the rows to compare, cheaply
_WORDS = re.compile(r"\w+")
_CHECKPOINT_WAIT_MS = 2_000


def searchable_rows(
    conn: sqlite3.Connection, where: str, params: Sequence[object]
) -> dict[int, Deleted]:
    """The ids and ``items_fts`` rows of the items ``where`` selects, by rowid."""
    found = conn.execute(
        "SELECT f.rowid, i.id, f.content, f.key, f.entities, f.speaker FROM items AS i"
        f" CROSS JOIN items_fts AS f ON f.rowid = i.rowid WHERE {where}",
        params,
    )
    return {int(r[0]): (str(r[1]), (str(r[2]), str(r[3]), str(r[4]), str(r[5]))) for r in found}


def drop_usage(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
    """Delete the usage statistics of ``ids`` that no item has any more (inside a write).

    Statistics are kept by id so that they survive a rebuild; an item forgotten for
    good takes its own with it.
    """
    conn.executemany(
        "DELETE FROM usage WHERE item_id = ? AND NOT EXISTS (SELECT 1 FROM items WHERE id = ?)",
        ((i, i) for i in dict.fromkeys(ids)),
    )


def gone_rows(conn: sqlite3.Connection, deleted: dict[int, Deleted]) -> list[str] | None:
    """None when every text of ``deleted`` is still held by some item (:func:`still_held`:
    nothing to scrub); else the ids among them whose usage statistics go with them: no
    item has the id any more, nor its text.

    Each text is checked at most once (about a millisecond each at 10,000 items): those
    whose id no item has any more all (their usage goes with them when they left: a
    forget's few), then those of ids still held only until the first that left (one is
    enough to scrub: a re-import that changed ten thousand texts checks one).
    """
    ids = list(dict.fromkeys(item_id for item_id, _ in deleted.values()))
    kept: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found = conn.execute(f"SELECT id FROM items WHERE id IN ({marks})", chunk)
        kept.update(str(r[0]) for r in found)
    dropped = [
        item_id
        for item_id, row in deleted.values()
        if item_id not in kept and not still_held(conn, row)
    ]
    if dropped or any(
        not still_held(conn, row) for item_id, row in deleted.values() if item_id in kept
    ):
        return dropped
    return None


def still_held(conn: sqlite3.Connection, row: Searchable) -> bool:
    """Whether some item of the index has exactly this searchable text.

    FTS5 finds the rows holding a phrase of the first words of one column (an
    indexed look-up); they are then compared whole. A row with no word at all is
    taken as gone (a merge too many costs time, never a leftover).
    """
    found_words = (
        (column, words)
        for column, text in zip(_COLUMNS, row, strict=True)
        if (words := _WORDS.findall(text)[:_PHRASE_WORDS])
    )
    column, words = next(found_words, ("", []))
    if not words:
        return False
    try:
        found = conn.execute(
            "SELECT 1 FROM items_fts WHERE items_fts MATCH ? AND content = ? AND key = ?"
            " AND entities = ? AND speaker = ? LIMIT 1",
            (f"{column} : {quote(' '.join(words))}", *row),
        ).fetchone()
    except sqlite3.OperationalError:  # a phrase FTS5 refuses: treat the text as gone
        return False
    return found is not None


def merge_fts(conn: sqlite3.Connection) -> None:
    """Merge every FTS5 segment into one, dropping deleted entries (inside a write)."""
    conn.execute("INSERT INTO items_fts (items_fts) VALUES ('optimize')")


def checkpoint(conn: sqlite3.Connection, *, restore_s: float) -> bool:
    """Copy the ``-wal`` into the database and truncate it; False if a reader kept it.

    Waits at most ``_CHECKPOINT_WAIT_MS`` for readers of an older state (a forget must
    not hang on another process), then sets the busy timeout back to ``restore_s``.
    A ``-wal`` a reader kept is truncated by the next scrub, or deleted when the last
    connection to the index closes.
    """
    conn.execute(f"PRAGMA busy_timeout = {_CHECKPOINT_WAIT_MS}")
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(restore_s * 1000)}")
    return not busy


def _with_deletions(
    conn: sqlite3.Connection, index_path: Path, kind: saved.Kind[T], identity: str
) -> tuple[T, dict[str, Any], npt.NDArray[np.int64]] | None:
    """The copy of ``kind`` as ``build`` makes it, its description, and the rowids
    deleted since it was saved; ``None`` (and the copy removed) if this index cannot
    use it (another model, damaged, older than the deletion log) or there is none.
    ``conn`` is in a read transaction that sees ``newest``."""
    described = saved.description_path(index_path, kind.name)
    if not described.is_file():
        return None
    snapshot = saved.load_kind(conn, index_path, kind, identity)
    try:
        meta = json.loads(described.read_text(encoding="utf-8"))
        mark = int(meta["marks"][-1])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        snapshot = None
    (oldest,) = conn.execute("SELECT min(seq) FROM item_deletions").fetchone()
    if snapshot is None or (oldest is not None and oldest > mark + 1):
        remove_copy(index_path, kind.name)
        return None
    found = conn.execute("SELECT item_rowid FROM item_deletions WHERE seq > ?", (mark,))
    return snapshot, meta, np.fromiter((r for (r,) in found), dtype=np.int64)


def zero_vectors(
    conn: sqlite3.Connection, index_path: Path, identity: str, model: str, dim: int
) -> None:
    """Overwrite with zeros, in the saved copy of the vectors, every row deleted since
    it was saved; a copy this index cannot use is removed.

    In place: O(deleted rows), where writing the copy again costs seconds at 100k
    items. The rows keep their place and their rowid (not their vector), and the
    copy its marks: the deletion log names them, so a snapshot read from the copy
    drops them before any search, as it did before.
    """
    found = _with_deletions(conn, index_path, VectorSnapshot.saved_kind(model, dim), identity)
    if found is None:
        return
    snapshot, meta, deleted = found
    rows = np.flatnonzero(np.isin(snapshot.rowids, deleted))
    if rows.size == 0:
        return
    try:
        path = index_path.with_name(str(meta["mapped"]["vectors"][0]))
        matrix = np.load(path, mmap_mode="r+", allow_pickle=False)
        matrix[rows] = 0
        matrix.flush()
        del matrix
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        log.warning("could not scrub the vectors copy beside %s (%s); removing it", index_path, exc)
        remove_copy(index_path, "vectors")


def rewrite_bm25(
    conn: sqlite3.Connection, index_path: Path, identity: str, tokenizer: QueryTokenizer
) -> None:
    """Write the saved copy of the keyword postings again without the rows deleted since
    it was saved, and without the terms only they held; a copy this index cannot use
    is removed.

    The marks stay those of the copy: the rows it lacks are ones the deletion log
    names, which a snapshot read from it drops anyway.
    """
    found = _with_deletions(conn, index_path, Bm25Snapshot.saved_kind(tokenizer), identity)
    if found is None:
        return
    snapshot, _, deleted = found
    if not snapshot.without(deleted):
        return
    arrays, meta = snapshot.to_saved()
    meta["last_item"] = saved.fingerprint(conn, meta["last_item"])
    if not saved.save(
        index_path,
        "bm25",
        identity=identity,
        marks=snapshot.marks,
        mapped={},
        arrays=arrays,
        meta=meta,
    ):
        remove_copy(index_path, "bm25")


def remove_copy(index_path: Path, kind: str) -> None:
    """Remove a saved copy: its description first (a copy without one is never read)."""
    saved.description_path(index_path, kind).unlink(missing_ok=True)
    for path in index_path.parent.glob(f"{index_path.name}.{kind}-*"):
        if path.suffix in (".npy", ".npz"):
            path.unlink(missing_ok=True)


def remove_graph(graph_path: Path) -> None:
    """Remove the saved vector graph and its description (it is rebuilt when needed)."""
    graph_path.with_name(graph_path.name + ".json").unlink(missing_ok=True)
    graph_path.unlink(missing_ok=True)
