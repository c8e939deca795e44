"""Search in :class:`~kronika.stores.sqlite.SqliteIndex` (SPEC R1): BM25 keyword search
over the in-memory postings (or FTS5 itself for a process that searches once) and
exact cosine similarity over the vector snapshot, narrowed by the vector graph from
``ann_threshold`` rows on.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kronika.core.hubness import family
from kronika.core.model import RecallFilter
from kronika.errors import IndexError_
from kronika.ports import Vector
from kronika.stores.sql.terms import query_terms
from kronika.stores.sqlite.batch import MAX_SCORES, QueryScores
from kronika.stores.sqlite.index_base import IndexState
from kronika.stores.sqlite.index_snapshots import Snapshots
from kronika.stores.sqlite.lexical import BM25_SQL, Phrase
from kronika.stores.sqlite.query import filter_clause, quote
from kronika.stores.sqlite.vectors import read_transaction

# BM25 with the column weights the in-memory postings use: a key word counts half.
_BM25 = BM25_SQL


class SqliteSearch:
    """Keyword and vector search."""

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
            allowed = self.snapshots.allowed_rowids(conn, flt)
            return bm25.search(phrases, parts, flt, limit, allowed)

    def _search_fts5(
        self, conn: sqlite3.Connection, texts: Sequence[str], flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]]:
        """The same search run by FTS5 itself (equal scores ordered by id, as in memory)."""
        expression = " OR ".join(quote(text) for text in texts)
        where, params = filter_clause(flt)
        sql = (
            f"SELECT i.id, {_BM25} AS rank FROM items_fts JOIN items AS i"
            f" ON i.rowid = items_fts.rowid WHERE items_fts MATCH ? AND {where}"
            " ORDER BY rank, i.id LIMIT ?"
        )
        found = conn.execute(sql, [expression, *params, limit]).fetchall()
        # a row holding the words only where they weigh nothing (the speaker) is no match
        return [(item_id, -float(rank)) for item_id, rank in found if rank < 0]

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
