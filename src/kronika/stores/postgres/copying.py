"""Rows for ``COPY … FROM STDIN`` written as text in one piece.

A bulk load writes about fifteen keyword postings per item; handing psycopg one tuple
per posting to convert value by value cost more of the load than the server's work on
them. Their text is simple (words, ids, numbers and integer arrays), so it is written
here directly in COPY's text format.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kronika.core.model import MemoryItem
from kronika.stores.postgres.lexical import weighted_tf

_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def copy_text(value: str) -> str:
    """``value`` as a field of COPY's text format (backslash, tab and line ends escaped)."""
    return value.translate(_ESCAPES)


def postings_copy_text(
    pairs: Sequence[tuple[MemoryItem, str]], rowids: Sequence[int], postings: Sequence[Any]
) -> str:
    """The ``idx_terms`` rows ``(term, item_rowid, agent, tenant, tf, pos, doc_len)`` of
    the items of ``pairs`` (with their row ids and :class:`~.lexical.Postings`)."""
    lines: list[str] = []
    for (item, _), rowid, found in zip(pairs, rowids, postings, strict=True):
        tail = f"{rowid}\t{copy_text(item.agent)}\t{copy_text(item.tenant)}\t"
        length = found.length
        lines.extend(
            f"{copy_text(term)}\t{tail}{weighted_tf(places)!r}"
            f"\t{{{','.join(map(str, places))}}}\t{length}\n"
            for term, places in found.terms.items()
        )
    return "".join(lines)
