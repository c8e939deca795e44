"""Converting :class:`MemoryItem` to and from rows of the ``items`` table.

The mapping is the SQL indexes' (:mod:`kronika.stores.sql.rows`) in SQLite's dialect:
tuples are stored as JSON arrays (``ensure_ascii=False`` keeps the text readable in the
file), booleans as integers. Here: SQLite's own columns (``rowid``), the FTS5 rows
and the entity rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from kronika.core.model import MemoryItem
from kronika.core.text import fold, key_words, searchable_content
from kronika.ports import SourceState
from kronika.stores.sql import rows as shared
from kronika.stores.sqlite.dialect import SQLITE

# Order of the columns written by item_row(); rowid comes first.
INSERT_COLUMNS: tuple[str, ...] = ("rowid", *shared.item_columns(SQLITE))
INSERT_ITEM_SQL = (
    f"INSERT INTO items ({', '.join(INSERT_COLUMNS)})"
    f" VALUES ({', '.join('?' * len(INSERT_COLUMNS))})"
)
INSERT_FTS_SQL = (
    "INSERT INTO items_fts (rowid, content, key, entities, speaker) VALUES (?, ?, ?, ?, ?)"
)

SELECT_ITEM_SQL = shared.select_item(SQLITE)
"""What :func:`item_from_row` reads: the item columns plus usage statistics."""


def item_row(
    rowid: int, item: MemoryItem, state: SourceState, text_hash: str, pos: int
) -> tuple[object, ...]:
    """The ``items`` row for ``item``, the ``pos``-th item of its file (from 0), in the
    order of :data:`INSERT_COLUMNS`."""
    return (rowid, *shared.item_values(SQLITE, item, state, pos, text_hash))


def fts_row(rowid: int, item: MemoryItem) -> tuple[object, ...]:
    """The ``items_fts`` row: accent-folded content (a keyed fact's value), key words,
    entities and speaker (whose words count towards how common a word is, and score
    nothing: :data:`~kronika.stores.sql.terms.COLUMN_WEIGHTS`)."""
    return (
        rowid,
        fold(searchable_content(item)),
        fold(key_words(item.key or "")),
        fold(" ".join(item.entities)),
        fold(item.speaker or ""),
    )


def entity_rows(rowid: int, item: MemoryItem) -> list[tuple[int, str]]:
    return [(rowid, norm) for norm in shared.entity_norms(item)]


def item_from_row(row: sqlite3.Row | Sequence[Any]) -> MemoryItem:
    """Rebuild a :class:`MemoryItem` from a row selected by :data:`SELECT_ITEM_SQL`."""
    return shared.item_from_row(SQLITE, row)
