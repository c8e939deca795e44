"""Items to and from rows of ``idx_items``, and :class:`RecallFilter` as a SQL condition.

The mapping and the filter are the SQL indexes' (:mod:`kronika.stores.sql`) in
PostgreSQL's dialect: times as float seconds since the epoch, names compared in their
normalised forms, lists as ``text[]``, so the SQLite and PostgreSQL indexes answer
every filter alike. Here: PostgreSQL's own columns (``entity_norms``, ``doc_len``).
Nothing here touches a connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kronika.core.model import MemoryItem, Reader, RecallFilter
from kronika.ports import SourceState
from kronika.stores import filters
from kronika.stores.postgres.dialect import POSTGRES
from kronika.stores.sql import rows as shared
from kronika.stores.sql import where

COLUMNS: tuple[str, ...] = (*shared.item_columns(POSTGRES), "entity_norms", "doc_len")
"""The columns :func:`item_row` fills, in its order (``rowid`` and ``vec`` are not)."""

SELECT_ITEM = shared.select_item(POSTGRES)
"""What :func:`item_from_row` reads: the item's columns and its usage statistics."""


def item_row(
    item: MemoryItem, state: SourceState, pos: int, text_hash: str, doc_len: int
) -> tuple[object, ...]:
    """The ``idx_items`` row of ``item`` (:data:`COLUMNS` order), at ``pos`` in its source."""
    values = shared.item_values(POSTGRES, item, state, pos, text_hash)
    return (*values, shared.entity_norms(item), doc_len)


def item_from_row(row: Sequence[Any]) -> MemoryItem:
    """The :class:`MemoryItem` of a row selected by :data:`SELECT_ITEM`."""
    return shared.item_from_row(POSTGRES, row)


def visibility_clause(reader: Reader, alias: str = "i") -> tuple[str, list[object]]:
    """:func:`kronika.core.visibility.visible` as SQL over ``idx_items AS <alias>``
    (:func:`kronika.stores.filters.visibility`)."""
    return where.render(POSTGRES, filters.visibility(reader), alias)


def filter_clause(flt: RecallFilter, alias: str = "i") -> tuple[str, list[object]]:
    """A condition over ``idx_items AS <alias>`` implementing ``flt``, and its parameters
    (:func:`kronika.stores.filters.recall_predicate`, the reader's visibility included)."""
    return where.filter_clause(POSTGRES, flt, alias)
