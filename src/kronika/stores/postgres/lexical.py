"""Keyword search on PostgreSQL: the SQLite index's BM25, over postings kept in PostgreSQL.

PostgreSQL has no Polish or Ukrainian stemmer, and its ``ts_rank`` is not BM25. The
SQLite index folds accents (:func:`kronika.core.text.fold`), tokenizes with FTS5's
``porter unicode61 remove_diacritics 2`` and ranks by FTS5's ``bm25()``
(:mod:`kronika.stores.sqlite.lexical`). Here the *same* tokenizer makes the tokens (an
in-memory SQLite FTS5 table of this process: the stdlib has it, nothing is copied or
re-implemented), PostgreSQL keeps them as postings in ``idx_terms`` (term, row,
occurrences, positions), and the score is FTS5's formula over the statistics of the
agents and tenant a search names::

    idf(p)  = ln((N − n(p) + 0.5) / (n(p) + 0.5)), at least 1e-6
    part(p) = idf(p) · f·(k1 + 1) / (f + k1·(1 − b + b·D / avgdl)),  k1 = 1.2, b = 0.75

``N`` rows and their mean length ``avgdl`` come from ``idx_corpus`` (kept by triggers),
``n(p)`` and ``f`` from the postings (a phrase's occurrences from the positions), and
``D`` is copied into each posting. ``f`` counts each occurrence with the weight of its
column, as the SQLite index does (:data:`COLUMN_WEIGHTS`: a word of a fact's key counts
a quarter, a turn's speaker nothing). The parts are summed in the
phrases' order, so scores equal the SQLite index's up to the last bits of floating
point. How a search reads and scores the postings is
:func:`kronika.stores.postgres.search.lexical`.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kronika.core.model import MemoryItem
from kronika.core.ranking import best_first
from kronika.core.text import fold, key_words, searchable_content
from kronika.stores.sql.terms import COLUMN_WEIGHTS, COLUMNS, WordTokens

K1 = 1.2
B = 0.75
MIN_IDF = 1e-6
TOKENIZE = "porter unicode61 remove_diacritics 2"
"""The SQLite index's tokenizer (its migration ``0002_fts_porter_stemming``)."""
COLUMN_SHIFT = 1 << 24  # a position is column · 2^24 + offset
_COLUMN = {name: n for n, name in enumerate(COLUMNS)}
_WEIGHTS = tuple(COLUMN_WEIGHTS[name] for name in COLUMNS)


def weighted_tf(positions: Sequence[int]) -> float:
    """The occurrences at ``positions`` (column · 2^24 + offset), each counted with its
    column's weight."""
    return sum(_WEIGHTS[p // COLUMN_SHIFT] for p in positions)


Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Phrase:
    text: str
    tokens: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Postings:
    """One item's tokens: ``{token: positions}`` and its length in tokens."""

    terms: dict[str, list[int]]
    length: int


_BATCH_KEPT = 256
"""Rows tokenized at once above which the table is made again rather than emptied:
FTS5 keeps the emptied index's pages, so after one bulk load (a file of 100,000 facts)
tokenizing a single item read them all, about 100 ms each time."""


class Tokenizer:
    """FTS5's tokenizer, run on a private in-memory SQLite database (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._create()
        self._words = WordTokens()

    def _create(self) -> None:
        self._conn.execute(
            f"CREATE VIRTUAL TABLE t USING fts5 ({', '.join(COLUMNS)}, tokenize = '{TOKENIZE}')"
        )
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')")

    def items(self, items: Sequence[MemoryItem]) -> list[Postings]:
        """The postings of each item: its folded content (a keyed fact's value), key
        words, entities and speaker, as the SQLite index's ``items_fts`` row."""
        rows = [
            (
                n,
                fold(searchable_content(it)),
                fold(key_words(it.key or "")),
                fold(" ".join(it.entities)),
                fold(it.speaker or ""),
            )
            for n, it in enumerate(items)
        ]
        found: list[dict[str, list[int]]] = [{} for _ in rows]
        lengths = [0] * len(rows)
        for doc, col, offset, term in self._run(
            "INSERT INTO t (rowid, content, key, entities, speaker) VALUES (?, ?, ?, ?, ?)", rows
        ):
            found[doc].setdefault(term, []).append(col * COLUMN_SHIFT + offset)
            lengths[doc] += 1
        return [Postings(terms, length) for terms, length in zip(found, lengths, strict=True)]

    def words(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """The tokens of each (already folded) query word or phrase, in order."""
        return self._words.of(
            words,
            lambda missing: self._run(
                "INSERT INTO t (rowid, content) VALUES (?, ?)", list(enumerate(missing))
            ),
        )

    def _run(self, insert: str, rows: Sequence[tuple[Any, ...]]) -> list[tuple[int, int, int, str]]:
        with self._lock:
            try:
                self._conn.executemany(insert, rows)
                found = self._conn.execute("SELECT doc, col, offset, term FROM v").fetchall()
                return [(doc, _COLUMN[col], offset, term) for doc, col, offset, term in found]
            finally:
                if len(rows) > _BATCH_KEPT:  # its emptied index would slow every later run
                    self._conn.execute("DROP TABLE v")
                    self._conn.execute("DROP TABLE t")
                    self._create()
                else:
                    self._conn.execute("DELETE FROM t")

    def close(self) -> None:
        self._conn.close()


def idf(n: int, hits: int) -> float:
    """FTS5's ``idf`` of a phrase ``hits`` of ``n`` rows hold."""
    value = math.log((n - hits + 0.5) / (hits + 0.5))
    return MIN_IDF if value <= 0.0 else value


@dataclass(frozen=True, slots=True)
class Scored:
    """One phrase's rows (within the filter), occurrences, the rows' lengths and idf."""

    rows: npt.NDArray[np.int64]
    tf: Floats
    length: Floats
    idf: float

    def parts(self, avgdl: float) -> Floats:
        norm = K1 * (1 - B + B * self.length / avgdl)
        part: Floats = self.idf * ((self.tf * (K1 + 1.0)) / (self.tf + norm))
        return part


def phrase_occurrences(positions: Sequence[Sequence[int]]) -> list[int]:
    """Where tokens at ``positions[0]``, ``positions[1]``… follow each other: the
    positions of the first (:func:`weighted_tf` counts them)."""
    rest = [set(p) for p in positions[1:]]
    return [start for start in positions[0] if all(start + k + 1 in s for k, s in enumerate(rest))]


def top(scores: dict[int, float], ids: dict[int, str], limit: int) -> list[tuple[str, float]]:
    """The ``limit`` best ``(id, score)``: best first, equal scores by id."""
    return best_first((ids[r], s) for r, s in scores.items())[:limit]
