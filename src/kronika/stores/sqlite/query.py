"""Turning user input into safe SQLite: FTS5 MATCH expressions, filter clauses.

The filter is the SQL indexes' (:func:`kronika.stores.sql.where.filter_clause`) in
SQLite's dialect. Nothing here touches a connection; every function is pure so it can
be tested alone.
"""

from __future__ import annotations

from kronika.core.model import Reader, RecallFilter
from kronika.stores import filters
from kronika.stores.sql import where
from kronika.stores.sql.terms import query_terms
from kronika.stores.sqlite.dialect import SQLITE


def match_expression(query: str, *, whole_phrase: bool = True) -> str | None:
    """An FTS5 MATCH expression for arbitrary user text, or ``None`` when it has no words.

    Every word becomes a quoted string (so ``AND``, ``NEAR``, ``*``, ``-``, ``:``
    and parentheses are plain text) and the words are OR-ed; BM25 then ranks
    rarer and repeated terms higher. With two or more words (and ``whole_phrase``)
    the whole phrase is OR-ed in as well, which adds its own BM25 term to documents
    containing the exact phrase.
    """
    terms = query_terms(query)
    if not terms:
        return None
    quoted = [quote(t) for t in terms]
    if len(terms) > 1 and whole_phrase:
        quoted.insert(0, quote(" ".join(terms)))
    return " OR ".join(quoted)


def quote(text: str) -> str:
    """``text`` as one FTS5 string (a phrase): double quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def filter_clause(flt: RecallFilter, alias: str = "i") -> tuple[str, list[object]]:
    """A SQL boolean expression over ``items AS <alias>`` implementing ``flt``, and its
    parameters (:func:`kronika.stores.filters.recall_predicate`)."""
    return where.filter_clause(SQLITE, flt, alias)


def visibility_clause(reader: Reader, alias: str = "i") -> tuple[str, list[object]]:
    """:func:`kronika.core.visibility.visible` as SQL over ``items AS <alias>``
    (:func:`kronika.stores.filters.visibility`)."""
    return where.render(SQLITE, filters.visibility(reader), alias)
