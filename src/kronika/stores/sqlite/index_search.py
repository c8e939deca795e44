"""Search in :class:`~kronika.stores.sqlite.SqliteIndex` (SPEC R1,
:class:`~kronika.ports.IndexSearch`): BM25 keyword search over the in-memory postings
(or FTS5 itself for a process that searches once) and exact cosine similarity over the
vector snapshot, narrowed by the vector graph from ``ann_threshold`` rows on; and what
recall reads of its candidates: the R3 score's features, usage, a turn's neighbours,
texts, vectors and families.

Where the BM25 snapshot is loaded, score features and neighbours come from its
columns; before that SQLite answers (the ``*_sql`` twins give the same results).
"""

from __future__ import annotations

import functools
import itertools
import json
import sqlite3
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from kronika.core.hubness import family
from kronika.core.model import RecallFilter
from kronika.core.word_forms import absent_words, form_prefixes, with_forms
from kronika.errors import IndexError_
from kronika.ports import FeatureRow, ScoreFeatures, Usage, Vector
from kronika.stores.sql import rows as shared
from kronika.stores.sql.terms import prefix_end, query_terms, searchable_forms
from kronika.stores.sqlite import context
from kronika.stores.sqlite.batch import MAX_SCORES, QueryScores
from kronika.stores.sqlite.index_base import _CHUNK, IndexState, _chunks
from kronika.stores.sqlite.index_snapshots import Snapshots
from kronika.stores.sqlite.lexical import BM25_SQL, Phrase
from kronika.stores.sqlite.query import filter_clause, quote
from kronika.stores.sqlite.vectors import read_transaction

# BM25 with the column weights the in-memory postings use: a key word counts half.
_BM25 = BM25_SQL


class SqliteSearch:
    """Keyword and vector search, and what recall reads of its candidates: score
    features, usage, neighbours, texts, vectors and families
    (:class:`~kronika.ports.IndexSearch` and its optional ways in)."""

    def __init__(self, state: IndexState, snapshots: Snapshots) -> None:
        self.state = state
        self.snapshots = snapshots

    def search_lexical(
        self, query: str, flt: RecallFilter, limit: int, *, whole_phrase: bool = True
    ) -> list[tuple[str, float]]:
        """FTS5's BM25 over accent-folded text, best first; higher score is better.

        The query is the MATCH expression of :func:`query.match_expression` (every
        word OR-ed, plus the whole phrase unless ``whole_phrase`` is false); the scores
        are those of FTS5's ``bm25()``, computed over an in-memory copy of the index
        (:mod:`.lexical`).
        """
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        texts = [" ".join(terms), *terms] if len(terms) > 1 and whole_phrase else terms
        with self.state.reading() as conn, read_transaction(conn):
            if self.state.bm25 is None and not self.state.bm25_wanted:
                # Loading the copy costs seconds at 100k items: a process that recalls
                # once (a CLI call) lets SQLite answer; the second search loads it.
                # SQLite's statistics count every row, so only when every row is the
                # agent's own (the in-memory copy counts the agent's rows only).
                self.state.bm25_wanted = True
                if self._holds_only(conn, flt):
                    return self._search_fts5(conn, texts, flt, limit)
            bm25 = self.snapshots.current_bm25(conn)
            phrases = [
                Phrase(text, tokens)
                for text, tokens in zip(texts, self.state.tokenizer.words(conn, texts), strict=True)
            ]
            allowed = self.snapshots.allowed_rowids(conn, flt)
            corpus = bm25.corpus(flt)
            # the rows the search may return, worked out once for the forms and the search
            returnable = functools.cache(lambda: bm25.returnable(flt, allowed))
            if corpus is not None:  # a word no memory the search may return holds: its forms
                phrases = self._with_forms(
                    conn,
                    phrases,
                    lambda t: bm25.holds(t, corpus, returnable()),
                    lambda t: bm25.holds(t, corpus),
                    bm25.vocabulary,
                )
            # FTS5 scores a phrase of several tokens itself (the snapshot has no positions).
            parts: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}
            for phrase in phrases:
                if len(phrase.tokens) > 1 and all(t in bm25.postings for t in phrase.tokens):
                    found = conn.execute(
                        f"SELECT rowid, {_BM25} FROM items_fts WHERE items_fts MATCH ?",
                        (quote(phrase.text),),
                    ).fetchall()
                    parts[phrase.text] = (
                        np.asarray([r for r, _ in found], dtype=np.int64),
                        -np.asarray([v for _, v in found], dtype=np.float64),
                    )
            return bm25.search(phrases, parts, flt, limit, allowed, returnable=returnable)

    def _search_fts5(
        self, conn: sqlite3.Connection, texts: Sequence[str], flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]]:
        """The same search run by FTS5 itself (equal scores ordered by id, as in memory),
        over a corpus of the agents' rows alone (:meth:`_holds_only`)."""
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kronika_fts_terms"
            " USING fts5vocab (main, items_fts, 'row')"
        )

        def holds(token: str) -> bool:
            sql = "SELECT 1 FROM temp.kronika_fts_terms WHERE term = ?"
            return conn.execute(sql, (token,)).fetchone() is not None

        where, params = filter_clause(flt)

        def returns(token: str) -> bool:  # held by a row the search may return
            sql = (
                "SELECT 1 FROM items_fts JOIN items AS i ON i.rowid = items_fts.rowid"
                f" WHERE items_fts MATCH ? AND {where} LIMIT 1"
            )
            return conn.execute(sql, [quote(token), *params]).fetchone() is not None

        def vocabulary(prefixes: Sequence[str]) -> set[str]:
            sql = "SELECT term FROM temp.kronika_fts_terms WHERE term >= ? AND term < ?"
            return {t for p in prefixes for (t,) in conn.execute(sql, (p, prefix_end(p)))}

        phrases = [
            Phrase(text, tokens)
            for text, tokens in zip(texts, self.state.tokenizer.words(conn, texts), strict=True)
        ]
        texts = [p.text for p in self._with_forms(conn, phrases, returns, holds, vocabulary)]
        expression = " OR ".join(quote(text) for text in texts)
        sql = (
            f"SELECT i.id, {_BM25} AS rank FROM items_fts JOIN items AS i"
            f" ON i.rowid = items_fts.rowid WHERE items_fts MATCH ? AND {where}"
            " ORDER BY rank, i.id LIMIT ?"
        )
        found = conn.execute(sql, [expression, *params, limit]).fetchall()
        # a row holding the words only where they weigh nothing (the speaker) is no match
        return [(item_id, -float(rank)) for item_id, rank in found if rank < 0]

    def _with_forms(
        self,
        conn: sqlite3.Connection,
        phrases: list[Phrase],
        returns: Callable[[str], bool],
        holds: Callable[[str], bool],
        vocabulary: Callable[[Sequence[str]], set[str]],
    ) -> list[Phrase]:
        """``phrases`` with the forms the corpus holds (``holds``) of each word no row
        the search may return holds (``returns``: a word only memories the reader may
        not see hold is as good as absent, so what they hold never shows through which
        words are searched; :mod:`kronika.core.word_forms`). A form FTS5's tokenizer
        would not give back as itself is left out (FTS5 reads the query's words
        through it)."""
        forms: dict[str, list[str]] = {}
        for token in absent_words(phrases, returns):
            named = searchable_forms(
                token,
                vocabulary(form_prefixes(token)),
                lambda words: self.state.tokenizer.words(conn, words),
            )
            forms[token] = [f for f in named if holds(f)]
        return with_forms(phrases, forms, lambda form: Phrase(form, (form,)))

    @staticmethod
    def _holds_only(conn: sqlite3.Connection, flt: RecallFilter) -> bool:
        """Whether every item belongs to the agents and tenant ``flt`` names.

        Asked as ranges outside the names (both columns are NOT NULL), one EXISTS
        each, so the agent and tenant indexes answer at once whatever the size.
        """
        outside: list[tuple[str, tuple[str, ...]]] = []
        if flt.agents:
            names = sorted(set(flt.agents))
            outside.append(("agent < ?", (names[0],)))
            outside.extend(("agent > ? AND agent < ?", pair) for pair in itertools.pairwise(names))
            outside.append(("agent > ?", (names[-1],)))
        if flt.tenant is not None:
            outside += [("tenant < ?", (flt.tenant,)), ("tenant > ?", (flt.tenant,))]
        if not outside:
            return True
        sql = " OR ".join(f"EXISTS (SELECT 1 FROM items WHERE {cond})" for cond, _ in outside)
        params = [value for _, values in outside for value in values]
        (other,) = conn.execute(f"SELECT {sql}", params).fetchone()
        return not other

    def search_vector(
        self, query: Vector, flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]]:
        """Cosine similarity against the embedded items passing ``flt`` (exact scores).

        From ``ann_threshold`` items on, the rows scored are the candidates of the
        vector graph (:mod:`.ann`), or every row the filter keeps when it is narrow.
        """
        if np.asarray(query).size != self.state.dim:
            raise IndexError_(
                f"query vector has {np.asarray(query).size} dimensions;"
                f" model {self.state.model} has {self.state.dim}"
            )
        with self.state.reading() as conn:
            snapshot = self.snapshots.current_snapshot(conn)
            allowed = self.snapshots.allowed_rowids(conn, flt)
            graph = self.snapshots.current_graph(conn, snapshot)
            if graph is not None:  # the graph changes under the lock only
                return snapshot.search(query, flt, limit, allowed, graph)
            together = self.state.together
            scores = None if together is None else together.take(snapshot, query)
            if together is not None and not together:
                self.state.together = None
        return snapshot.search(query, flt, limit, allowed, scores=scores)

    def vectors_of(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored unit vector of each of ``ids`` that has one, from the snapshot
        searches read (:class:`~kronika.ports.CandidateVectors`): the ids' rowids looked
        up by the id index, their rows found by rowid (no map of every id is built)."""
        if not ids:
            return {}
        with self.state.reading() as conn:
            snapshot = self.snapshots.current_snapshot(conn)
            rows = conn.execute(
                "SELECT rowid, id FROM items WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(ids)),),
            ).fetchall()
        return snapshot.vectors_at([(int(rowid), str(item_id)) for rowid, item_id in rows])

    def families_of(self, ids: Sequence[str]) -> dict[str, str]:
        """The family of each of ``ids`` that has one (its fact's key, else its session;
        :class:`~kronika.ports.CandidateVectors`), in one query."""
        if not ids:
            return {}
        with self.state.reading() as conn:
            rows = conn.execute(
                "SELECT id, agent, session_id, coalesce(key_norm, key) FROM items"
                " WHERE id IN (SELECT value FROM json_each(?))"
                " AND (session_id IS NOT NULL OR key IS NOT NULL)",
                (json.dumps(list(ids)),),
            ).fetchall()
        found = {str(i): family(agent, session, key) for i, agent, session, key in rows}
        return {i: f for i, f in found.items() if f is not None}

    def score_together(self, queries: Sequence[Vector], *, max_scores: int = MAX_SCORES) -> None:
        """The next searches for these query vectors score them in one matrix product
        (:mod:`.batch`; in groups when rows × queries pass ``max_scores``); a later
        batch takes the place of one not searched in full."""
        with self.state.lock:
            self.state.together = (
                QueryScores(queries, max_scores=max_scores) if len(queries) > 1 else None
            )

    def wait_for_vector_graph(self, timeout: float | None = None) -> bool:
        """Build the vector graph now if the index is large enough; True once it is ready.

        Searches never wait for it (they stay exact meanwhile); benchmarks and tools
        that want the steady state call this first.
        """
        with self.state.reading() as conn:
            if (
                self.snapshots.current_graph(conn, self.snapshots.current_snapshot(conn))
                is not None
            ):
                return True
        if not self.state.ann.wait(timeout):
            return False
        with self.state.reading() as conn:
            return (
                self.snapshots.current_graph(conn, self.snapshots.current_snapshot(conn))
                is not None
            )

    def item_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """``{id: content}`` of the items of ``ids`` (unknown ids absent), no item built."""
        found: dict[str, str] = {}
        with self.state.reading() as conn:
            for chunk in _chunks(list(dict.fromkeys(ids))):
                marks = ", ".join("?" * len(chunk))
                found.update(
                    conn.execute(f"SELECT id, content FROM items WHERE id IN ({marks})", chunk)
                )
        return found

    def score_features(self, ids: Sequence[str]) -> ScoreFeatures:
        """What the R3 score needs of each item, without building whole items.

        Read from the BM25 snapshot's columns once it is loaded (only usage comes
        from SQLite), else from SQLite (:meth:`_score_features_sql`).
        """
        return self._score_features(ids, with_usage=True)

    def score_columns(self, ids: Sequence[str]) -> ScoreFeatures:
        """:meth:`score_features` without the usage columns once the BM25 snapshot is
        loaded (they are a lookup per item; the rest comes from memory): recall reads
        them with :meth:`usage` for the candidates that can still reach the top
        (:class:`~kronika.ports.UsageApart`)."""
        return self._score_features(ids, with_usage=False)

    def usage(self, ids: Sequence[str]) -> Usage:
        """``last_accessed_at`` and ``access_count`` of the items of ``ids`` that have them."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        with self.state.reading() as conn:
            return self._usage(conn, wanted)

    def _score_features(self, ids: Sequence[str], *, with_usage: bool) -> ScoreFeatures:
        wanted = list(dict.fromkeys(ids))
        with self.state.reading() as conn:
            if self.state.bm25 is None or not wanted:
                return self._score_features_sql(conn, wanted)
            with read_transaction(conn):
                bm25 = self.snapshots.current_bm25(conn)
                rows = bm25.rows_of(wanted)
                usage = None
                if with_usage:
                    known = [i for i, r in zip(wanted, rows.tolist(), strict=True) if r >= 0]
                    usage = self._usage(conn, known)
            return context.score_features(bm25.cols, bm25.context, wanted, rows, usage)

    @staticmethod
    def _usage(conn: sqlite3.Connection, ids: Sequence[str]) -> Usage:
        found: dict[str, tuple[float | None, int]] = {}
        for chunk in _chunks(ids):
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT item_id, last_accessed_at, access_count FROM usage"
                f" WHERE item_id IN ({marks})",
                chunk,
            )
            for item_id, accessed, count in rows:
                found[item_id] = (None if accessed is None else float(accessed), int(count))
        return found

    @staticmethod
    def _score_features_sql(conn: sqlite3.Connection, wanted: Sequence[str]) -> ScoreFeatures:
        """:meth:`score_features` read from SQLite (before the BM25 snapshot is loaded)."""
        found: dict[str, FeatureRow] = {}
        for chunk in _chunks(wanted):
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT i.id, i.importance, i.created_at, u.last_accessed_at,"
                " coalesce(u.access_count, 0), i.speaker, i.session_id FROM items AS i"
                f" LEFT JOIN usage AS u ON u.item_id = i.id WHERE i.id IN ({marks})",
                chunk,
            )
            for item_id, *features in rows:
                found[item_id] = shared.feature_row(features)
        return ScoreFeatures.from_rows({i: found[i] for i in wanted if i in found})

    def neighbours(
        self, ids: Sequence[str], flt: RecallFilter, window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """The other party's messages at most ``window`` turns from each message in ``ids``.

        A turn's context is the exchange it belongs to: the question it answers, the
        answer it got. Consecutive messages of the same speaker are separate statements
        (and where the other side was not kept, as when only user turns are imported,
        they were not even adjacent), so they are not each other's context.

        Every row records its place in its file (``pos``, in file order), so a turn's
        neighbours are the rows of the same file whose places are within ``window`` of
        its own: range lookups in the ``(source_agent, source_path, pos)`` index, no
        scan, wherever appends from other files put their rowids. Neighbours come from
        the same session and must pass ``flt``; the offset is the difference of places.
        """
        wanted = list(dict.fromkeys(ids))
        if window < 1 or not wanted:
            return {}
        with self.state.reading() as conn:
            if self.state.bm25 is None:
                return self._neighbours_sql(conn, wanted, flt, window)
            with read_transaction(conn):
                bm25 = self.snapshots.current_bm25(conn)
                allowed = self.snapshots.allowed_rowids(conn, flt)
            keep = bm25.cols.mask(flt, bm25.live if bm25.dead else None)
            if allowed is not None:
                allowed_rows = np.isin(bm25.cols.rowids, allowed)
                keep = allowed_rows if keep is None else keep & allowed_rows
            rows = bm25.rows_of(wanted)
            found: dict[str, list[tuple[str, int]]] = {}
            for start in range(0, len(wanted), _CHUNK):  # ordered per chunk, as in SQL
                part = slice(start, start + _CHUNK)
                near = context.neighbours(
                    bm25.cols, bm25.context, wanted[part], rows[part], keep, window
                )
                if near is None:  # more files or places than the columns can key
                    return self._neighbours_sql(conn, wanted, flt, window)
                found.update(near)
            return found

    @staticmethod
    def _neighbours_sql(
        conn: sqlite3.Connection, wanted: Sequence[str], flt: RecallFilter, window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """:meth:`neighbours` answered by SQLite (before the BM25 snapshot is loaded)."""
        found: dict[str, list[tuple[str, int]]] = {}
        where, params = filter_clause(flt, alias="n")
        for chunk in _chunks(wanted):
            marks = ", ".join("?" * len(chunk))
            rows = conn.execute(
                # CROSS JOIN and the unary + keep SQLite on this plan: each c by its
                # id, then n by a range of places in c's file. Left to itself it scans
                # every message as c (150 ms instead of 10 at 100k items).
                "SELECT c.id, n.id, n.pos - c.pos FROM items AS c CROSS JOIN items AS n"
                " ON n.source_agent = c.source_agent AND n.source_path = c.source_path"
                " AND n.pos BETWEEN c.pos - ? AND c.pos + ? AND n.pos != c.pos"
                " AND n.session_id = c.session_id AND +n.type = 'message'"
                " AND coalesce(n.speaker_norm, '') != coalesce(c.speaker_norm, '')"
                f" WHERE c.id IN ({marks}) AND +c.type = 'message' AND {where}"
                " ORDER BY c.id, n.pos",
                [window, window, *chunk, *params],
            )
            for item_id, other, offset in rows:
                found.setdefault(item_id, []).append((other, int(offset)))
        return found
