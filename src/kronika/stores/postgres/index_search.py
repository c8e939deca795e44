"""Search in :class:`~kronika.stores.postgres.index.PostgresIndex`
(:class:`~kronika.ports.IndexSearch`): BM25 over the keyword postings as the SQLite
index scores it (or ``ts_rank``, or trigrams), cosine similarity over the item rows'
vectors, walked through an HNSW index from ``ann_threshold`` items on (built in the
background meanwhile), both at once for recall (:class:`~kronika.ports.HybridSearch`,
:mod:`.hybrid`); and what recall reads of its candidates, at once where it can
(:class:`~kronika.ports.CandidateReader`). Each is a read that may lag: on the read
replica when it has replayed what this worker must see (:meth:`.PostgresState.lagging`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from kronika.core.hubness import family
from kronika.core.model import RecallFilter
from kronika.errors import IndexError_
from kronika.ports import (
    CandidateRows,
    FeatureRow,
    Found,
    ScoreFeatures,
    Vector,
)
from kronika.stores.postgres import search
from kronika.stores.postgres.arrays import text_array
from kronika.stores.postgres.candidates import FEATURES, ItemRows, neighbours_sql
from kronika.stores.postgres.connect import connect
from kronika.stores.postgres.hybrid import GRAPH_BUILDING, GRAPH_CHECK, GRAPH_VALID, VectorAlong
from kronika.stores.postgres.index_base import (
    GRAPH_RECHECK_S,
    ITEMS_AHEAD,
    PostgresState,
    as_vector,
)
from kronika.stores.postgres.index_rows import (
    SELECT_ITEM,
)
from kronika.stores.postgres.lexical import Phrase
from kronika.stores.postgres.trips import SNAPSHOT, pipeline, sent_together
from kronika.stores.sql.rows import feature_row
from kronika.stores.sql.terms import query_terms

log = logging.getLogger("kronika")


class PostgresSearch:
    """Keyword and vector search, the score features, neighbours, vectors and families
    of candidates, and the HNSW index vector search walks."""

    def __init__(self, state: PostgresState) -> None:
        self.state = state

    def search_lexical(
        self, query: str, flt: RecallFilter, limit: int, *, whole_phrase: bool = True
    ) -> list[tuple[str, float]]:
        """BM25 as the SQLite index scores it (:mod:`.lexical`), best first."""
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        if self.state.lexical != "bm25":
            other = (
                search.lexical_simple if self.state.lexical == "simple" else search.lexical_trigram
            )
            return self.state.lagging(lambda conn: other(conn, terms, flt, limit))
        return self._bm25(terms, flt, limit, whole_phrase=whole_phrase)

    def _bm25(
        self,
        terms: list[str],
        flt: RecallFilter,
        limit: int,
        *,
        whole_phrase: bool,
        along: search.Along | None = None,
    ) -> list[tuple[str, float]]:
        """:meth:`search_lexical` by BM25 (``along``: see :func:`.search.lexical`)."""
        texts = [" ".join(terms), *terms] if len(terms) > 1 and whole_phrase else terms
        phrases = [
            Phrase(text, tokens)
            for text, tokens in zip(texts, self.state.tokenizer.words(texts), strict=True)
        ]

        def work(conn: Any) -> list[tuple[str, float]]:
            try:
                postings, tokens = self.state.postings, self.state.tokenizer.words
                found = search.lexical(conn, phrases, flt, limit, postings, along, tokens)
            except BaseException:
                if not conn.broken and conn.info.transaction_status != search.IDLE:
                    conn.execute("COMMIT")  # read only (see :func:`.search._best_passing`)
                raise
            if conn.info.transaction_status == search.IDLE:
                return found
            if along is None or not along.waiting:
                conn.execute("COMMIT")
                return found
            # no filter round trip went (no row held the words): the other search is
            # sent with the end of the snapshot, one round trip for both
            with pipeline(conn):
                along.send(conn)
                conn.execute("COMMIT")
            along.collect()
            return found

        return self.state.lagging(work)

    def search_vector(
        self, query: Vector, flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]]:
        """Cosine similarity against the embedded items passing ``flt`` (exact scores).
        Where whether the HNSW index is there must be asked, the question goes with the
        search (:class:`.hybrid.VectorAlong`, as in :meth:`search_hybrid`): one round trip,
        not two, in a memory below ``ann_threshold`` items at every call."""
        self._check_dimensions(query)
        along = self._vector_along(query, flt, limit)
        if along is not None:

            def work(conn: Any) -> None:
                with sent_together(conn, begin=SNAPSHOT):
                    along.send(conn)
                along.collect()

            self.state.lagging(work)
            found = self._settled(along, query, flt, limit)
            if found is not None:
                return found
        return self._vector_alone(query, flt, limit)

    def _vector_along(self, query: Vector, flt: RecallFilter, limit: int) -> VectorAlong | None:
        """The vector search with the question of whether the HNSW index is valid, when
        that must be asked (no index seen valid lately, on the primary); else None. An
        index seen valid before is walked while it is asked for again (it is rarely
        dropped; an exact scan of that many rows would cost far more)."""
        threshold, seen = self.state.threshold, self.state.graph_seen_until
        if threshold <= 0 or time.monotonic() < seen or self.state.replica is not None:
            return None
        return VectorAlong(
            query,
            flt,
            limit,
            walk=self.state.dim if seen > 0.0 else None,
            margin=self.state.hnsw.search_margin,
            graph=self.state.hnsw_name,
        )

    def _settled(
        self, along: VectorAlong, query: Vector, flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]] | None:
        """The rows of a vector search sent with its question (:meth:`_vector_along`),
        None when they do not stand and it is to be made alone: a walk stands when the
        HNSW index was valid for it, the exact scan when there is still none to walk
        (the check may start a build); a walk that found too few rows is followed by
        the exact scan."""
        if along.checked is not None:
            valid = bool(along.checked[0])
            ready = self.graph_seen(*along.checked, start=True)  # may start a build
            if not ready:
                self.state.graph_seen_until = 0.0  # gone: not walked again until seen
            if not (valid if along.walks else not ready):
                return None
        if along.found is None:  # the walk found too few rows: the exact scan, as vectors()
            return self.state.lagging(
                lambda conn: search.vectors(conn, query, flt, limit, approximate=None)
            )
        return along.found

    def _vector_alone(
        self, query: Vector, flt: RecallFilter, limit: int
    ) -> list[tuple[str, float]]:
        """:meth:`search_vector`, the HNSW index asked for first where it must be."""
        graph = self.graph_ready(start=True)

        def work(conn: Any) -> list[tuple[str, float]]:
            if graph and limit > 0:  # on this connection, for every later walk
                self.state.prepare(
                    conn, search.graph_settings(limit, self.state.hnsw.search_margin)
                )
            return search.vectors(
                conn, query, flt, limit, approximate=self.state.dim if graph else None
            )

        return self.state.lagging(work)

    def search_hybrid(
        self, words: str, vector: Vector, flt: RecallFilter, limit: int, *, whole_phrase: bool
    ) -> tuple[Found, Found]:
        """:meth:`search_lexical` and :meth:`search_vector` (:class:`~kronika.ports.HybridSearch`),
        the vector search riding in the keyword search's filter round trip (:mod:`.hybrid`):
        one round trip for both while the words' postings are held. Each search is made
        apart, as before, where that cannot be: keywords scored by ``ts_rank`` or trigrams,
        a query without keywords, no keyword match (no filter round trip goes), a walk
        that found too few rows (the exact scan follows), an HNSW index that turned valid
        since it was last looked for (the walk follows) or was dropped (the exact scan)."""
        self._check_dimensions(vector)
        terms = query_terms(words)
        if self.state.lexical != "bm25" or not terms or limit <= 0:
            lexical = self.search_lexical(words, flt, limit, whole_phrase=whole_phrase)
            return lexical, self.search_vector(vector, flt, limit)
        # the HNSW index asked for along the way where it must be, else known (seen
        # valid lately, or asked of the primary by a worker reading from a replica)
        along = self._vector_along(vector, flt, limit) or VectorAlong(
            vector,
            flt,
            limit,
            walk=self.state.dim if self.graph_ready(start=True) else None,
            margin=self.state.hnsw.search_margin,
            graph=None,
        )
        lexical = self._bm25(terms, flt, limit, whole_phrase=whole_phrase, along=along)
        if along.waiting:  # no snapshot was opened: nothing was sent with it
            return lexical, self.search_vector(vector, flt, limit)
        found = self._settled(along, vector, flt, limit)
        return lexical, self._vector_alone(vector, flt, limit) if found is None else found

    def _check_dimensions(self, query: Vector) -> None:
        if np.asarray(query).size != self.state.dim:
            raise IndexError_(
                f"query vector has {np.asarray(query).size} dimensions;"
                f" model {self.state.model} has {self.state.dim}"
            )

    def score_features(self, ids: Sequence[str]) -> ScoreFeatures:
        wanted = list(dict.fromkeys(ids))
        given = (text_array(wanted),)
        found = self.state.lagging(
            lambda conn: {
                r[0]: feature_row(r[1:]) for r in conn.execute(FEATURES, given).fetchall()
            }
        )
        return ScoreFeatures.from_rows({i: found[i] for i in wanted if i in found})

    def neighbours(
        self, ids: Sequence[str], flt: RecallFilter, window: int
    ) -> dict[str, list[tuple[str, int]]]:
        """The other party's messages at most ``window`` places from each message in
        ``ids``, in the same source and session, passing ``flt``."""
        wanted = list(dict.fromkeys(ids))
        if window < 1 or not wanted:
            return {}
        sql, params = neighbours_sql(wanted, flt, window, features=False)

        def work(conn: Any) -> dict[str, list[tuple[str, int]]]:
            found: dict[str, list[tuple[str, int]]] = {}
            for item_id, other, offset in conn.execute(sql, params).fetchall():
                found.setdefault(item_id, []).append((other, int(offset)))
            return found

        return self.state.lagging(work)

    def read_candidates(
        self, ids: Sequence[str], seeds: Sequence[str], flt: RecallFilter, window: int
    ) -> CandidateRows:
        """:meth:`neighbours` of ``seeds`` with their score features, the score features of
        ``ids``, and the items of ``seeds`` and of the best :data:`ITEMS_AHEAD` seeds'
        neighbours (which their answers often lift to the top): three statements in one
        round trip."""
        wanted = list(dict.fromkeys(seeds))
        return self.state.lagging(lambda conn: _candidates(conn, ids, wanted, flt, window))

    def vectors_of(self, ids: Sequence[str]) -> dict[str, Vector]:
        """The stored unit vector of each of ``ids`` that has one, in one round trip
        (:class:`~kronika.ports.CandidateVectors`)."""
        if not ids:
            return {}
        rows = self.state.lagging(
            lambda conn: conn.execute(
                "SELECT id, vec FROM idx_items WHERE vec IS NOT NULL AND id = ANY(%s::text[])",
                (text_array(ids),),
            ).fetchall()
        )
        return {str(item_id): as_vector(vec) for item_id, vec in rows}

    def families_of(self, ids: Sequence[str]) -> dict[str, str]:
        """The family of each of ``ids`` that has one (its fact's key, else its session;
        :class:`~kronika.ports.CandidateVectors`), in one round trip."""
        if not ids:
            return {}
        rows = self.state.lagging(
            lambda conn: conn.execute(
                "SELECT id, agent, session_id, coalesce(key_norm, key) FROM idx_items"
                " WHERE id = ANY(%s::text[]) AND (session_id IS NOT NULL OR key IS NOT NULL)",
                (text_array(ids),),
            ).fetchall()
        )
        found = {str(i): family(agent, session, key) for i, agent, session, key in rows}
        return {i: f for i, f in found.items() if f is not None}

    def graph_ready(self, *, start: bool) -> bool:
        """Whether the HNSW index is there and valid; ``start`` builds it (in the
        background unless told otherwise) once the index holds ``ann_threshold`` items."""
        if self.state.threshold <= 0:
            return False
        if time.monotonic() < self.state.graph_seen_until:
            return True
        with self.state.reading() as conn:
            valid, items = conn.execute(GRAPH_CHECK, (self.state.hnsw_name,)).fetchone()
        return self.graph_seen(valid, int(items), start=start)

    def graph_seen(self, valid: bool | None, items: int, *, start: bool) -> bool:
        """Whether the HNSW index is ready, from what :data:`.hybrid.GRAPH_CHECK` said of it
        (``valid`` None: there is none; ``items`` in the index); ``start`` as in
        :meth:`graph_ready`. An index there but not valid is being built (by this worker or
        another) or was left so by a build cut short (the server restarted, the build
        was cancelled): a build is tried again at most every :data:`GRAPH_RECHECK_S`,
        and it repairs such an index unless another worker is building it."""
        if valid:
            self.state.graph_seen_until = time.monotonic() + GRAPH_RECHECK_S
            return True
        building = self.state.building
        if building is not None and not building.is_alive():
            building = self.state.building = None
        if not start or building is not None or items < self.state.threshold:
            return False
        now = time.monotonic()
        if valid is False and now < self.state.graph_tried_until:
            return False
        self.state.graph_tried_until = now + GRAPH_RECHECK_S
        if self.state.background:
            self.state.building = threading.Thread(target=self._build_graph, daemon=True)
            self.state.building.start()
            return False
        return self._build_graph()

    def _build_graph(self) -> bool:
        """CREATE INDEX CONCURRENTLY on a connection of its own (writers carry on), under
        a session lock that tells other workers it is being built. An index left not
        valid by a build cut short is dropped first. True when this call built it."""
        began = time.perf_counter()
        name = self.state.hnsw_name
        try:
            with connect(self.state.url, autocommit=True) as conn:
                mine = conn.execute(GRAPH_BUILDING, (name,)).fetchone()
                if not (mine and mine[0]):
                    log.info("HNSW index %s is being built by another worker", name)
                    return False
                found = conn.execute(GRAPH_VALID, (name, name)).fetchone()
                valid, under_way = found if found is not None else (None, False)
                if valid is False and under_way:
                    log.info("HNSW index %s is being built by another session", name)
                    return False
                if valid is False:
                    log.warning("HNSW index %s was left unfinished; built again", name)
                    conn.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"')
                conn.execute("SET maintenance_work_mem = '512MB'")
                conn.execute(
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON idx_graph"
                    f" USING hnsw ((vec::vector({self.state.dim})) vector_ip_ops)"
                    f" WITH ({self.state.hnsw.with_clause})"
                )
            log.info("HNSW index built in %.1f s", time.perf_counter() - began)
            return True
        except Exception as exc:  # noqa: BLE001 - searches stay exact; said in the log
            log.warning("could not build the HNSW index: %s", exc)
            return False

    def wait_for_vector_graph(self, timeout: float | None = None) -> bool:
        """Build the HNSW index now if the index is large enough; True once it is ready."""
        if self.graph_ready(start=True):
            return True
        building = self.state.building
        if building is not None:
            building.join(timeout)
            if building.is_alive():
                return False
            self.state.building = None
        return self.graph_ready(start=False)


def _candidates(
    conn: Any, ids: Sequence[str], wanted: list[str], flt: RecallFilter, window: int
) -> CandidateRows:
    """What :meth:`PostgresSearch.read_candidates` reads, on ``conn``."""
    links: dict[str, list[tuple[str, int]]] = {}
    features: dict[str, FeatureRow] = {}
    items_sql = f"{SELECT_ITEM} WHERE i.id = ANY(%s::text[]"
    items_params: list[object] = [text_array(wanted)]
    with pipeline(conn):
        near = None
        if window >= 1 and wanted:
            near = conn.execute(*neighbours_sql(wanted, flt, window, features=True))
            ahead, ahead_params = neighbours_sql(wanted[:ITEMS_AHEAD], flt, window, features=False)
            # one array of ids, so the ids' index finds the rows (an OR would scan)
            items_sql += f" || ARRAY(SELECT x.other FROM ({ahead}) AS x (seed, other, step))"
            items_params += ahead_params
        scored = conn.execute(FEATURES, (text_array(dict.fromkeys(ids)),))
        read = conn.execute(items_sql + ")", items_params)
    # each result whole (fetchall), not row by row: a third less time a row
    for item_id, other, offset, *row in near.fetchall() if near is not None else ():
        links.setdefault(item_id, []).append((other, int(offset)))
        features[other] = feature_row(row)
    for item_id, *row in scored.fetchall():
        features[item_id] = feature_row(row)
    items = ItemRows({str(row[0]): row for row in read.fetchall()})
    return CandidateRows(links, features, items)
