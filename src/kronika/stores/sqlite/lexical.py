"""FTS5's own BM25, computed over an in-memory copy of the full-text index (SPEC R1).

SQLite's ``bm25()`` scores every row a query matches, one row at a time: a question
made of common words ("what", "did", "the") matches most of the corpus, and that
cost grows with it. :class:`Bm25Snapshot` keeps the postings of the FTS5 index
(which rows hold each token, how often, and each row's length in tokens) as numpy
arrays and computes the same formula for all matching rows at once.

The scores are FTS5's, not an approximation. FTS5's ``bm25()`` is a sum over the
phrases of the MATCH expression, in their order::

    idf(p)  = ln((N − n(p) + 0.5) / (n(p) + 0.5)), at least 1e-6
    part(p) = idf(p) · f·(k1 + 1) / (f + k1·(1 − b + b·D / avgdl)),  k1 = 1.2, b = 0.75

with ``N`` rows, ``n(p)`` rows holding phrase ``p``, ``f`` its occurrences in the row,
each weighted by its column (:data:`COLUMN_WEIGHTS`: a word of a fact's key counts
:data:`KEY_WEIGHT`, a word of the content or an entity 1, the speaker's name nothing),
``D`` the row's length in tokens (every column) and ``avgdl`` the mean length. A row
that holds the query's words only where they score nothing (who said it) is no match.
Each
part is computed with the same floating-point operations in the same order, so the
sums come out bit for bit equal. Tokens come from FTS5's tokenizer itself (through a
temporary FTS5 table with the same ``tokenize`` option), never from a copy of it.
A phrase of several tokens needs positions, which the snapshot does not keep: FTS5
scores that phrase alone (a one-phrase ``bm25()`` is exactly its part), and its
occurrences in each row are read back from that part, which is exact (they are
whole numbers).

The statistics are those of the agent's own memories. ``N``, ``n(p)`` and ``avgdl``
count the rows of the agents (and tenant) a search names, never another agent's:
its scores are bit for bit those FTS5 gives over a database holding that agent's
memories only, and what other agents keep neither moves its ranking nor shows
through it. A search naming no agent counts every row.

Common tokens are pruned exactly (MaxScore). A question's common words ("the",
"with") match most rows but each adds at most ``idf·(k1 + 1)``, a small number
because their ``idf`` is small. The rarer phrases are scored over all their rows
first; the ``limit``-th best of those partial scores bounds the final cut from below,
and a row whose partial score plus every common token's bound stays under it cannot
reach the top. Only the remaining rows get the common tokens' parts, looked up in
their postings, and every candidate's score is then summed again in phrase order so
it is bit for bit the unpruned one. When the bound does not separate (a query of
common words only, a filter keeping fewer rows than ``limit``), everything is scored.

The snapshot is loaded once and then refreshed from what changed: rows past the
highest item rowid it has seen are tokenized, and rows named in ``item_deletions``
are marked dead (the same logs the vector snapshot reads).
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from kronika.core.model import RecallFilter
from kronika.core.ranking import best_first
from kronika.core.word_forms import FORM_PREFIX
from kronika.stores.sql.terms import COLUMN_WEIGHTS, COLUMNS, WordTokens
from kronika.stores.sqlite.columns import (
    COLUMNS_SQL,
    CONTEXT_SQL,
    ContextColumns,
    Floats,
    ItemColumns,
    Mask,
    Rowids,
)
from kronika.stores.sqlite.saved import (
    Arrays,
    Kind,
    Saved,
    context_columns_from_arrays,
    context_columns_to_arrays,
    item_columns_from_arrays,
    item_columns_to_arrays,
    last_item,
    offsets,
    strings_from_arrays,
    strings_to_arrays,
)

K1 = 1.2
B = 0.75
MIN_IDF = 1e-6
BM25_SQL = f"bm25(items_fts, {', '.join(str(COLUMN_WEIGHTS[c]) for c in COLUMNS)})"
"""FTS5's ``bm25()`` with the column weights: what :class:`Bm25Snapshot` computes."""
_GRID = 0.25  # every weighted count of occurrences is a multiple of it

_TOKENS = "kronika_tokens"  # temporary FTS5 table: the tokenizer of items_fts, nothing stored
_TOKEN_VOCAB = "kronika_token_vocab"
_COMPACT_SHARE = 4  # reload once more than 1/4 of the rows are dead
_COMMON_SHARE = 10  # a token in more than 1/10 of the rows is scored only where it can matter
_MARGIN = 1e-9  # relative slack of the pruning bounds, far above float64 rounding
_CORPORA = 16  # agents whose statistics are kept at once
_DENSE_LOOKUP = 8  # rows looked up in a token's postings through a scratch array from 1/8 on

Postings = tuple[npt.NDArray[np.int64], Floats]
"""Row indexes (ascending) and weighted occurrences of one token in each of those rows."""
_DIGIT_WEIGHTS = np.asarray([COLUMN_WEIGHTS[c] for c in COLUMNS], dtype=np.float64)


@dataclass(frozen=True, slots=True)
class Phrase:
    """One phrase of a MATCH expression: its text and the tokens FTS5 makes of it."""

    text: str
    tokens: tuple[str, ...]


class QueryTokenizer:
    """FTS5's tokenizer of ``items_fts``, applied to query words and new rows.

    A temporary FTS5 table with the same ``tokenize`` option is filled, read back
    through an ``fts5vocab`` table and emptied; nothing reaches the database file.
    Tokens of single words are cached (the tokenizer is a pure function).
    """

    def __init__(self) -> None:
        self._ready = False
        self._words = WordTokens()

    def _setup(self, conn: sqlite3.Connection) -> None:
        if self._ready:
            return
        (sql,) = conn.execute(
            "SELECT sql FROM main.sqlite_master WHERE name = 'items_fts'"
        ).fetchone()
        found = re.search(r"tokenize\s*=\s*('(?:[^']|'')*')", sql)
        tokenize = f", tokenize = {found.group(1)}" if found else ""
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_TOKENS}"
            f" USING fts5 ({', '.join(COLUMNS)}{tokenize})"
        )
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_TOKEN_VOCAB}"
            f" USING fts5vocab (temp, {_TOKENS}, 'instance')"
        )
        self._ready = True

    def words(self, conn: sqlite3.Connection, words: Sequence[str]) -> list[tuple[str, ...]]:
        """The tokens FTS5 makes of each word (a word can give none, one or several)."""

        def tokenize(missing: list[str]) -> list[tuple[int, str, int, str]]:
            self._setup(conn)
            return self._tokenize(
                conn,
                f"INSERT INTO temp.{_TOKENS} (rowid, content) VALUES (?, ?)",
                list(enumerate(missing)),
            )

        return self._words.of(words, tokenize)

    def rows_after(self, conn: sqlite3.Connection, rowid: int) -> list[tuple[int, str, int, str]]:
        """``(rowid, column, offset, token)`` of every token of the FTS rows past ``rowid``."""
        self._setup(conn)
        columns = ", ".join(COLUMNS)
        return self._tokenize(
            conn,
            f"INSERT INTO temp.{_TOKENS} (rowid, {columns})"
            f" SELECT rowid, {columns} FROM main.items_fts WHERE rowid > ?",
            [(rowid,)],
        )

    @staticmethod
    def _tokenize(
        conn: sqlite3.Connection, insert: str, params: list[tuple[object, ...]]
    ) -> list[tuple[int, str, int, str]]:
        try:
            conn.executemany(insert, params)
            return conn.execute(
                f"SELECT doc, col, offset, term FROM temp.{_TOKEN_VOCAB}"
            ).fetchall()
        finally:
            conn.execute(f"DELETE FROM temp.{_TOKENS}")


_MARKS_SQL = (
    "SELECT (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'items'),"
    " (SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'item_deletions'),"
    " (SELECT min(seq) FROM item_deletions)"
)


class Bm25Snapshot:
    """The postings of ``items_fts`` and the columns of every item, in memory.

    Besides BM25 the columns answer recall's per-candidate reads (:mod:`.context`):
    ``context`` holds what the filter columns ``cols`` do not, and :meth:`rows_of`
    finds an id's row.

    Rows are kept in rowid order (new items always get higher rowids), so a rowid
    finds its row by binary search. Owned by one :class:`SqliteIndex` and used under
    its lock: :meth:`refresh` updates it in place.
    """

    def __init__(self, tokenizer: QueryTokenizer) -> None:
        self._tokenizer = tokenizer
        self.cols = ItemColumns.from_rows([])
        self.context = ContextColumns.from_rows([])
        self.live: Mask = np.ones(0, dtype=np.bool_)
        self.dead = 0
        self.length: Floats = np.zeros(0, dtype=np.float64)
        self.total_tokens = 0
        self.postings: dict[str, Postings] = {}
        self.marks = (0, 0)  # highest item rowid, highest deletion seq seen
        self.loaded = False
        self._row_of: dict[str, int] | None = None  # live row of each id, built on first use
        self._scratch = np.zeros(0, dtype=np.int64)  # see _lookup
        self._version = 0  # changes whenever rows are added or die
        self._corpora: dict[tuple[frozenset[str], str | None], tuple[int, _Corpus | None]] = {}
        self._by_prefix: dict[str, list[str]] | None = None  # see vocabulary(), built on use

    # -- loading ----------------------------------------------------------------------

    @staticmethod
    def newest_marks(conn: sqlite3.Connection) -> tuple[int, int]:
        """The index's marks now: highest item rowid and deletion seq."""
        items, deletions, _ = conn.execute(_MARKS_SQL).fetchone()
        return (int(items), int(deletions))

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Bring the snapshot up to date (``conn`` must be inside a read transaction)."""
        items_mark, deletions_mark = self.marks
        new_items, new_deletions, oldest = conn.execute(_MARKS_SQL).fetchone()
        pruned = new_deletions > deletions_mark and (oldest is None or oldest > deletions_mark + 1)
        if not self.loaded or pruned or new_deletions < deletions_mark:
            self._load(conn, (int(new_items), int(new_deletions)))
            return
        if new_deletions > deletions_mark:
            gone = conn.execute(
                "SELECT item_rowid FROM item_deletions WHERE seq > ?", (deletions_mark,)
            ).fetchall()
            self._kill(np.asarray([r for (r,) in gone], dtype=np.int64))
            if self.dead * _COMPACT_SHARE > len(self.cols):
                self._load(conn, (int(new_items), int(new_deletions)))
                return
        if new_items > items_mark:
            self._append(conn, items_mark)
        self.marks = (int(new_items), int(new_deletions))

    def _load(self, conn: sqlite3.Connection, marks: tuple[int, int]) -> None:
        rows = conn.execute(
            COLUMNS_SQL + CONTEXT_SQL + " FROM items AS i ORDER BY i.rowid"
        ).fetchall()
        self.cols = ItemColumns.from_rows(rows)
        self.context = ContextColumns.from_rows(rows)
        del rows  # the postings below are the larger part: not both at once
        self.live = np.ones(len(self.cols), dtype=np.bool_)
        self.dead = 0
        self._row_of = None
        self._by_prefix = None
        self.postings = {}
        self.length = np.zeros(len(self.cols), dtype=np.float64)
        self._version += 1  # lengths changed: a state with the same totals is not the same
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kronika_fts_vocab"
            " USING fts5vocab (main, items_fts, 'instance')"
        )
        # One row per token with every instance's rowid (ascending): far fewer Python
        # objects than one row per instance.
        # Each instance's column as one digit (its place in COLUMNS), in the same order.
        column_digit = " ".join(f"WHEN '{c}' THEN '{n}'" for n, c in enumerate(COLUMNS))
        grouped = conn.execute(
            "SELECT term, count(*), group_concat(doc, ' '),"
            f" group_concat(CASE col {column_digit} ELSE '0' END, '')"
            " FROM temp.kronika_fts_vocab GROUP BY term"
        ).fetchall()
        if grouped:
            terms = [t for t, _, _, _ in grouped]
            counts = np.fromiter((c for _, c, _, _ in grouped), dtype=np.int64, count=len(grouped))
            docs = np.array(" ".join(d for _, _, d, _ in grouped).split(), dtype=np.int64)
            digits = np.frombuffer("".join(c for _, _, _, c in grouped).encode("ascii"), np.uint8)
            self._add_instances(terms, counts, docs, _DIGIT_WEIGHTS[digits - ord("0")])
        self.total_tokens = int(self.length.sum())
        self.marks = marks
        self.loaded = True

    # -- the copy saved beside the index (:mod:`.saved`) -------------------------------

    def to_saved(self) -> tuple[Arrays, dict[str, Any]]:
        """The live rows, their columns, lengths and postings, as arrays.

        Dead rows are left out, and so are the terms only they held: a copy on disk
        keeps nothing of a deleted item.
        """
        keep = self.live if self.dead else None
        cols = self.cols if keep is None else self.cols.take(keep)
        context = self.context if keep is None else self.context.take(keep)
        length = self.length if keep is None else self.length[keep]
        terms, sizes, rows, tf = self._live_postings(keep)
        arrays, values = item_columns_to_arrays(cols)
        context_arrays, context_values = context_columns_to_arrays(context)
        arrays |= context_arrays | strings_to_arrays("terms", terms)
        arrays |= {
            "live": np.ones(len(cols), dtype=np.bool_),
            "length": length,
            "post_offsets": offsets(sizes),
            "post_rows": rows,
            "post_tf": tf,
        }
        meta = {
            "rows": len(cols),
            "terms": len(terms),
            "dead": 0,
            "total_tokens": self.total_tokens,
            "values": values | context_values,
            "last_item": last_item(cols),
        }
        return arrays, meta

    def _live_postings(
        self, keep: Mask | None
    ) -> tuple[list[str], list[int], npt.NDArray[np.int64], Floats]:
        """Every term with postings in a kept row, their sizes, rows (renumbered over
        the kept rows) and occurrences, concatenated in term order."""
        terms = list(self.postings)
        sizes = [self.postings[t][0].size for t in terms]
        rows = np.concatenate([self.postings[t][0] for t in terms] or [np.zeros(0, np.int64)])
        tf = np.concatenate([self.postings[t][1] for t in terms] or [np.zeros(0, np.float64)])
        if keep is None:
            return terms, sizes, rows, tf
        alive = keep[rows]
        term_of = np.repeat(np.arange(len(terms)), sizes)
        counts = np.bincount(term_of[alive], minlength=len(terms))
        renumbered = np.cumsum(keep) - 1
        present = np.flatnonzero(counts)
        return (
            [terms[n] for n in present.tolist()],
            counts[present].tolist(),
            renumbered[rows[alive]].astype(np.int64),
            tf[alive],
        )

    @classmethod
    def saved_kind(cls, tokenizer: QueryTokenizer) -> Kind[Bm25Snapshot]:
        """The saved copy of the keyword postings, read with ``tokenizer``."""
        return Kind("bm25", cls.newest_marks, {}, lambda copy: cls.from_saved(copy, tokenizer))

    @classmethod
    def from_saved(cls, copy: Saved, tokenizer: QueryTokenizer) -> Bm25Snapshot:
        """The snapshot a saved copy holds: its rows, columns and postings (bring it up
        to date with :meth:`refresh`).

        Raises ``ValueError``, ``KeyError`` or ``TypeError`` if its parts do not fit
        together.
        """
        meta, arrays = copy.meta, copy.arrays
        n, count = int(meta["rows"]), int(meta["terms"])
        values = meta["values"]
        cols = item_columns_from_arrays(arrays, values, n)
        context = context_columns_from_arrays(arrays, values, n)
        live, length = arrays["live"], arrays["length"]
        starts, rows, tf = arrays["post_offsets"], arrays["post_rows"], arrays["post_tf"]
        terms = strings_from_arrays("terms", arrays, count)
        if (
            live.shape != (n,)
            or live.dtype != np.bool_
            or length.shape != (n,)
            or n - int(np.count_nonzero(live)) != int(meta["dead"])
            or starts.shape != (count + 1,)
            or rows.shape != tf.shape
            or int(starts[-1]) != rows.size
            or bool(np.any(np.diff(starts) < 0))
            or (rows.size and (int(rows.min()) < 0 or int(rows.max()) >= n))
            or len(copy.marks) != 2
            or bool(np.any(cols.rowids[1:] <= cols.rowids[:-1]))  # rows are kept in rowid order
        ):
            raise ValueError("rows, lengths and postings do not fit together")
        bounds = starts.tolist()
        snapshot = cls(tokenizer)
        snapshot.cols, snapshot.context = cols, context
        snapshot.live, snapshot.dead, snapshot.length = live, int(meta["dead"]), length
        snapshot.total_tokens = int(meta["total_tokens"])
        snapshot.postings = {
            term: (rows[a:b], tf[a:b])
            for term, a, b in zip(terms, bounds, bounds[1:], strict=False)
        }
        snapshot.marks = (copy.marks[0], copy.marks[1])
        snapshot.loaded = True
        return snapshot

    def _append(self, conn: sqlite3.Connection, after: int) -> None:
        rows = conn.execute(
            COLUMNS_SQL + CONTEXT_SQL + " FROM items AS i WHERE i.rowid > ? ORDER BY i.rowid",
            (after,),
        ).fetchall()
        if not rows:
            return
        start = len(self.cols)
        new = ItemColumns.from_rows(rows)
        self.cols = self.cols.concat(new)
        self.context = self.context.concat(ContextColumns.from_rows(rows))
        if self._row_of is not None:
            self._row_of.update(zip(new.ids.tolist(), range(start, len(self.cols)), strict=True))
        self.live = np.concatenate([self.live, np.ones(len(rows), dtype=np.bool_)])
        self.length = np.concatenate([self.length, np.zeros(len(rows), dtype=np.float64)])
        self._version += 1
        instances = sorted(
            (term, doc, COLUMN_WEIGHTS[col])
            for doc, col, _, term in self._tokenizer.rows_after(conn, after)
        )
        if instances:
            terms: list[str] = []
            counts: list[int] = []
            for term, group in groupby(instances, key=itemgetter(0)):
                terms.append(term)
                counts.append(sum(1 for _ in group))
            docs = np.fromiter((d for _, d, _ in instances), dtype=np.int64, count=len(instances))
            weights = np.fromiter((w for _, _, w in instances), np.float64, len(instances))
            self._add_instances(terms, np.asarray(counts, dtype=np.int64), docs, weights)
        self.total_tokens += int(self.length[start:].sum())

    def _add_instances(
        self,
        terms: Sequence[str],
        counts: npt.NDArray[np.int64],
        docs: npt.NDArray[np.int64],
        weights: Floats,
    ) -> None:
        """Merge instances (grouped by term in ``terms`` order, rowids ascending per term),
        each weighted by its column (``weights``)."""
        rows = np.searchsorted(self.cols.rowids, docs)
        rows = np.minimum(rows, max(len(self.cols) - 1, 0))
        known = self.cols.rowids[rows] == docs if len(self.cols) else np.zeros(0, np.bool_)
        term_of = np.repeat(np.arange(len(terms)), counts)
        # A run of one term in one row is one posting; its length is the occurrences,
        # its tf their weights summed (whole multiples of _GRID: exact in any order).
        new_run = np.ones(len(docs), dtype=np.bool_)
        new_run[1:] = (docs[1:] != docs[:-1]) | (term_of[1:] != term_of[:-1])
        run_starts = np.flatnonzero(new_run)
        run_count = np.diff(np.append(run_starts, len(docs))).astype(np.float64)
        run_tf = np.add.reduceat(weights, run_starts) if len(docs) else weights
        run_rows = rows[run_starts]
        run_known = known[run_starts]
        run_term = term_of[run_starts]
        np.add.at(self.length, run_rows[run_known], run_count[run_known])
        bounds = np.searchsorted(run_term, np.arange(len(terms) + 1))
        for n, term in enumerate(terms):
            lo, hi = bounds[n], bounds[n + 1]
            keep = run_known[lo:hi]
            idx, tf = run_rows[lo:hi][keep], run_tf[lo:hi][keep]
            if idx.size == 0:
                continue
            old = self.postings.get(term)
            if old is not None:
                idx, tf = np.concatenate([old[0], idx]), np.concatenate([old[1], tf])
            elif self._by_prefix is not None:
                _file_by_prefix(self._by_prefix, term)
            self.postings[term] = (idx, tf)

    def without(self, rowids: Rowids) -> int:
        """Mark the rows of ``rowids`` dead (rowids it lacks are ignored); how many were."""
        dead = self.dead
        self._kill(rowids)
        return self.dead - dead

    def _kill(self, rowids: Rowids) -> None:
        if rowids.size == 0 or len(self.cols) == 0:
            return
        rows = np.searchsorted(self.cols.rowids, rowids)
        inside = rows < len(self.cols)
        rows, rowids = rows[inside], rowids[inside]
        hit = np.unique(rows[self.cols.rowids[rows] == rowids])
        hit = hit[self.live[hit]]
        if hit.size == 0:
            return
        self.live = self.live.copy()
        self.live[hit] = False
        if self._row_of is not None:
            for row in hit.tolist():
                self._row_of.pop(self.cols.ids[row], None)
        self.dead += int(hit.size)
        self.total_tokens -= int(self.length[hit].sum())
        self._version += 1

    def rows_of(self, ids: Sequence[str]) -> npt.NDArray[np.int64]:
        """The live row of each of ``ids`` (−1 for an id no live row has)."""
        if self._row_of is None:
            alive = np.flatnonzero(self.live)
            self._row_of = dict(zip(self.cols.ids[alive].tolist(), alive.tolist(), strict=True))
        row_of = self._row_of
        return np.fromiter((row_of.get(i, -1) for i in ids), dtype=np.int64, count=len(ids))

    # -- search -----------------------------------------------------------------------

    @property
    def rows(self) -> int:
        """Live rows: FTS5's ``N``."""
        return len(self.cols) - self.dead

    def search(
        self,
        phrases: Iterable[Phrase],
        phrase_scores: dict[str, tuple[Rowids, Floats]],
        flt: RecallFilter,
        limit: int,
        allowed_rowids: Rowids | None = None,
        *,
        prune: bool = True,
        returnable: Callable[[], Mask | None] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``limit`` best rows by BM25 over ``phrases`` (best first, ties by id).

        ``phrase_scores`` holds FTS5's own parts for the phrases of several tokens,
        keyed by phrase text, as rowids and scores. ``prune`` False scores every
        matching row (the result is the same; the tests compare both). ``returnable``
        gives :meth:`returnable` of ``flt`` when the caller worked it out already.
        """
        if limit <= 0 or self.rows <= 0:
            return []
        corpus = self.corpus(flt)
        if corpus is None:
            return []
        norm = corpus.norm
        terms = self._terms(phrases, phrase_scores, corpus)
        keep = returnable() if returnable is not None else self.returnable(flt, allowed_rowids)
        if prune:
            found = self._search_pruned(terms, norm, keep, limit, corpus.n)
            if found is not None:
                return found
        scores = np.zeros(len(self.cols), dtype=np.float64)
        matched = np.zeros(len(self.cols), dtype=np.bool_)
        for term in terms:
            idx = term.idx
            scores[idx] += term.parts(norm)
            matched[idx] = True
        if keep is not None:
            matched &= keep
        rows = np.flatnonzero(matched)
        return _top(rows, scores[rows], self.cols.ids, limit)

    def _terms(
        self,
        phrases: Iterable[Phrase],
        phrase_scores: dict[str, tuple[Rowids, Floats]],
        corpus: _Corpus,
    ) -> list[_Term]:
        """The phrases that match something in ``corpus``, in order, as rows and tf."""
        terms: list[_Term] = []
        # the rows the statistics count; None when that is every row of the postings
        inside = corpus.rows_in if corpus.rows_in is not None else self.live if self.dead else None
        for phrase in phrases:
            if len(phrase.tokens) == 1:
                found = self.postings.get(phrase.tokens[0])
            elif phrase.text in phrase_scores:
                found = self._phrase_postings(*phrase_scores[phrase.text])
            else:
                continue
            if found is None:
                continue
            idx, tf = found
            if inside is not None:
                keep = inside[idx]
                idx, tf = idx[keep], tf[keep]
            hits = int(idx.size)
            if hits == 0:
                continue
            terms.append(_Term(idx, tf, _idf(corpus.n, hits)))
        return terms

    def returnable(self, flt: RecallFilter, allowed_rowids: Rowids | None) -> Mask | None:
        """The live rows a search under ``flt`` may return (``allowed_rowids``: those
        passing its filters that need a join); None: every row."""
        keep = self.cols.mask(flt, self.live if self.dead else None)
        if allowed_rowids is not None:
            allowed = np.isin(self.cols.rowids, allowed_rowids)
            keep = allowed if keep is None else keep & allowed
        return keep

    def holds(self, token: str, corpus: _Corpus, returnable: Mask | None = None) -> bool:
        """Whether a row of ``corpus`` holds ``token`` (in any column); with
        ``returnable``, a row of those too (:meth:`returnable`)."""
        found = self.postings.get(token)
        if found is None or not found[0].size:
            return False
        idx = found[0]
        inside = corpus.rows_in if corpus.rows_in is not None else self.live if self.dead else None
        if inside is not None:
            idx = idx[inside[idx]]
        if returnable is not None:
            idx = idx[returnable[idx]]
        return bool(idx.size)

    def vocabulary(self, prefixes: Iterable[str]) -> set[str]:
        """The tokens of the postings that start with one of ``prefixes`` (each
        :data:`FORM_PREFIX` letters), some perhaps held by dead rows only; the tokens
        are filed by their first letters on first use."""
        if self._by_prefix is None:
            filed: dict[str, list[str]] = {}
            for term in self.postings:
                _file_by_prefix(filed, term)
            self._by_prefix = filed
        return {t for p in prefixes for t in self._by_prefix.get(p, ())}

    def _phrase_postings(self, rowids: Rowids, parts: Floats) -> Postings | None:
        """The rows holding a phrase and its occurrences, from FTS5's one-phrase ``bm25()``.

        FTS5 scored ``part = idf·f·(k1 + 1) / (f + norm)`` over every row, so
        ``f = r·norm / (k1 + 1 − r)`` with ``r = part / idf``; ``f`` is a sum of column
        weights, a multiple of ``_GRID``, and rounding to it takes away the last bits of
        floating-point error. None when no row of the snapshot holds it.
        """
        everything = self._corpus(frozenset(), None)
        idx = self.cols.positions(rowids)
        known = idx >= 0
        if everything is None or not known.any():
            return None
        idx, parts = idx[known], parts[known]
        order = np.argsort(idx, kind="stable")
        idx, parts = idx[order], parts[order]
        ratio = parts / _idf(everything.n, int(rowids.size))
        norm = everything.norm[idx]
        tf = np.rint(ratio * norm / (K1 + 1.0 - ratio) / _GRID) * _GRID
        return idx, tf

    def corpus(self, flt: RecallFilter) -> _Corpus | None:
        """The rows whose statistics score a search under ``flt``; None if they hold no token.

        The rows of the agents and tenant ``flt`` names (every live row when it names
        none), their count and each row's ``k1·(1 − b + b·D/avgdl)`` over their mean
        length.
        """
        return self._corpus(frozenset(flt.agents), flt.tenant)

    def _corpus(self, agents: frozenset[str], tenant: str | None) -> _Corpus | None:
        """:meth:`corpus`, kept per agents and tenant until rows are added or die."""
        key = (agents, tenant)
        cached = self._corpora.get(key)
        if cached is not None and cached[0] == self._version:
            return cached[1]
        rows_in: Mask | None = None
        n, total = self.rows, self.total_tokens
        if agents or tenant is not None:
            rows_in = self.live.copy()
            if agents:
                rows_in &= self.cols.agent.mask(agents)
            if tenant is not None:
                rows_in &= self.cols.tenant.mask([tenant])
            n = int(np.count_nonzero(rows_in))
            total = int(self.length[rows_in].sum())
            if n == self.rows:
                rows_in = None  # every live row: nothing to take out
        corpus = None
        if n > 0 and total > 0:
            avgdl = float(total) / float(n)
            corpus = _Corpus(n, K1 * (1 - B + B * self.length / avgdl), rows_in)
        if len(self._corpora) >= _CORPORA:
            self._corpora.clear()
        self._corpora[key] = (self._version, corpus)
        return corpus

    def _search_pruned(
        self, terms: list[_Term], norm: Floats, keep: Mask | None, limit: int, n: int
    ) -> list[tuple[str, float]] | None:
        """The top ``limit`` with common tokens scored only where they can matter (MaxScore).

        ``n`` is the number of rows the statistics count. ``None`` when the bound does
        not separate; the caller then scores everything.
        """
        common_size = n // _COMMON_SHARE
        common = [t for t in terms if t.idx.size > common_size]
        if not common or len(common) == len(terms):
            return None
        # Rows of the rarer phrases with their partial score (any order: it is a bound).
        partial = np.zeros(len(self.cols), dtype=np.float64)
        matched = np.zeros(len(self.cols), dtype=np.bool_)
        for term in terms:
            if term.idx.size <= common_size:
                partial[term.idx] += term.parts(norm)
                matched[term.idx] = True
        if keep is not None:
            matched &= keep
        rows = np.flatnonzero(matched)
        if rows.size < limit:
            return None
        bound = partial[rows]  # a lower bound of each candidate's score
        floor = _kth(bound, limit)
        # Each part is idf·tf·(k1+1)/(tf + norm) < idf·(k1+1). The common tokens are
        # added to the bounds one at a time, most valuable first: each one added
        # lowers the ceiling and raises the floor, so the candidates shrink quickly.
        common.sort(key=lambda t: t.idf, reverse=True)
        for done in range(len(common) + 1):
            ceiling = sum(t.idf * (K1 + 1.0) for t in common[done:]) * (1.0 + _MARGIN)
            if done == 0 and ceiling >= floor:
                return None
            close = bound + ceiling >= floor
            rows, bound = rows[close], bound[close]
            if done == len(common):
                break
            at, present = self._lookup(common[done].idx, rows)
            bound[present] += common[done].parts(norm, at[present])
            floor = max(floor, _kth(bound, limit))
        # Exact scores of the candidates, summed in phrase order as the full computation does.
        scores = np.zeros(rows.size, dtype=np.float64)
        for term in terms:
            at, present = self._lookup(term.idx, rows)
            scores[present] += term.parts(norm, at[present])
        return _top(rows, scores, self.cols.ids, limit)

    def _lookup(
        self, idx: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.int64], Mask]:
        """For each of ``rows`` (ascending): its position in ``idx`` and whether it is there.

        Positions of absent rows are meaningless. Few rows are looked up by binary
        search; many (a common token's first pass) through a row-indexed scratch
        array holding each posting's position: O(postings) instead of
        O(rows · log postings). The scratch is never cleared: a stale entry points
        at a posting of another row, which the final comparison rejects.
        """
        if rows.size * _DENSE_LOOKUP < idx.size:
            at = np.minimum(np.searchsorted(idx, rows), idx.size - 1)
        else:
            if self._scratch.size != len(self.cols):
                self._scratch = np.zeros(len(self.cols), dtype=np.int64)
            self._scratch[idx] = np.arange(idx.size, dtype=np.int64)
            at = np.minimum(self._scratch[rows], idx.size - 1)
        return at, idx[at] == rows


@dataclass(frozen=True, slots=True)
class _Corpus:
    """The rows whose statistics score a search: their count and length norms."""

    n: int
    norm: Floats  # k1·(1 − b + b·D/avgdl) of every row, avgdl over these rows
    rows_in: Mask | None  # which rows (live ones only); None: every live row


@dataclass(frozen=True, slots=True)
class _Term:
    """One matching phrase: its rows (ascending), occurrences in each and idf."""

    idx: npt.NDArray[np.int64]
    tf: Floats
    idf: float

    def parts(self, norm: Floats, at: npt.NDArray[np.int64] | None = None) -> Floats:
        """Its part of the score of each row (of the rows at positions ``at`` only)."""
        tf = self.tf if at is None else self.tf[at]
        idx = self.idx if at is None else self.idx[at]
        part: Floats = self.idf * ((tf * (K1 + 1.0)) / (tf + norm[idx]))
        return part


def _file_by_prefix(filed: dict[str, list[str]], term: str) -> None:
    """File ``term`` under its first :data:`FORM_PREFIX` letters (a shorter one is no form)."""
    if len(term) >= FORM_PREFIX:
        filed.setdefault(term[:FORM_PREFIX], []).append(term)


def _idf(n: int, hits: int) -> float:
    """FTS5's ``idf`` of a phrase ``hits`` of ``n`` rows hold."""
    idf = math.log((n - hits + 0.5) / (hits + 0.5))
    return MIN_IDF if idf <= 0.0 else idf


def _kth(bounds: Floats, limit: int) -> float:
    """The ``limit``-th largest of ``bounds`` (at least ``limit`` of them), less the margin."""
    rest = bounds.size - limit
    return float(np.partition(bounds, rest)[rest]) * (1.0 - _MARGIN)


def _top(
    rows: npt.NDArray[np.int64], scores: Floats, ids: npt.NDArray[np.object_], limit: int
) -> list[tuple[str, float]]:
    """The ``limit`` best ``(id, score)``, best first, equal scores by id; rows scoring
    nothing (the query's words only where they weigh nothing) are no match."""
    scored = scores > 0.0
    if not scored.all():
        rows, scores = rows[scored], scores[scored]
    if rows.size > limit:
        kth = np.partition(-scores, limit - 1)[limit - 1]
        sure = -scores < kth
        tied = np.flatnonzero(-scores == kth)
        room = limit - int(np.count_nonzero(sure))
        tied = tied[np.argsort(ids[rows[tied]].astype(str), kind="stable")[:room]]
        keep = np.flatnonzero(sure)
        keep = np.concatenate([keep, tied])
        rows, scores = rows[keep], scores[keep]
    return best_first(zip(ids[rows].tolist(), scores.tolist(), strict=True))
