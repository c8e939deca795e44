"""The two searches of :class:`~kronika.stores.postgres.index.PostgresIndex`, on one connection.

Keyword search is BM25 over ``idx_terms`` (:mod:`.lexical`); vector search is the dot
product of unit vectors (cosine similarity), exact with a sequential scan, or over
pgvector's HNSW index once the index holds enough items (see :func:`vectors`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from kronika.core.model import RecallFilter
from kronika.core.subjects import MAX_ENDING, stems
from kronika.core.word_forms import absent_words, form_prefixes, with_forms
from kronika.ports import Vector
from kronika.stores.postgres.arrays import int_array
from kronika.stores.postgres.index_rows import filter_clause
from kronika.stores.postgres.lexical import (
    Phrase,
    Scored,
    idf,
    phrase_occurrences,
    top,
    weighted_tf,
)
from kronika.stores.postgres.trips import SNAPSHOT, pipeline
from kronika.stores.sql.terms import prefix_end, searchable_forms

Conn = Any  # psycopg.Connection (imported lazily: the postgres extra is optional)
Tokens = Callable[[Sequence[str]], list[tuple[str, ...]]]
"""The tokens of each word (:meth:`.lexical.Tokenizer.words`)."""
IDLE = 0  # psycopg.pq.TransactionStatus.IDLE: no transaction open

DEPTH = 2
"""The filter reads the best ``DEPTH`` rows per row wanted (at least ``DEPTH_SLACK``
more than wanted), and eight times as many again while it keeps too few of them."""
DEPTH_SLACK = 100


class Along(Protocol):
    """Statements of another search that ride in the first filter round trip of a
    keyword search (:func:`lexical`), inside its read-only snapshot: :meth:`send` queues
    them in the pipeline, :meth:`collect` reads their rows once it is through."""

    @property
    def waiting(self) -> bool:
        """Whether the statements are still to be sent."""
        ...

    def send(self, conn: Conn) -> None: ...

    def collect(self) -> None: ...


def _corpus_clause(flt: RecallFilter, alias: str) -> tuple[str, list[object]]:
    """The rows whose statistics score a search: the agents and tenant ``flt`` names."""
    parts: list[str] = []
    params: list[object] = []
    if flt.agents:
        parts.append(f"{alias}.agent = ANY(%s)")
        params.append(sorted(set(flt.agents)))
    if flt.tenant is not None:
        parts.append(f"{alias}.tenant = %s")
        params.append(flt.tenant)
    return (" AND ".join(parts) or "true"), params


@dataclass(frozen=True, slots=True)
class TermRows:
    """One word's postings in one corpus: rows, occurrences and the rows' lengths."""

    rows: npt.NDArray[np.int64]
    tf: npt.NDArray[np.float64]
    length: npt.NDArray[np.float64]


_NONE = TermRows(
    np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.float64)
)
_POSTING = np.dtype([("row", ">i8"), ("tf", ">f8"), ("length", ">i4")])
_PACKED = "string_agg(int8send(t.item_rowid) || float8send(t.tf) || int4send(t.doc_len), ''::bytea)"
"""A word's postings packed by the server into one value (:data:`_POSTING` each)."""


class PostingsCache:
    """Postings per corpus state: ``{(agents, tenant): (state, {term: TermRows})}``.

    A corpus' state is its statistics rows, generations included (one generation per
    agent and tenant, grown by every write to its rows): it names the corpus exactly,
    so postings read at it stay true until it changes; then that corpus' words are read
    again. At most ``postings`` are held in all.
    """

    def __init__(self, corpora: int = 16, postings: int = 2_000_000) -> None:
        self._corpora = corpora
        self._postings = postings
        self._held = 0
        self._found: dict[tuple[Any, ...], tuple[Any, dict[str, TermRows]]] = {}
        self._forms: dict[tuple[Any, ...], dict[str, tuple[str, ...]]] = {}
        self._returned: dict[tuple[Any, ...], dict[RecallFilter, dict[str, bool]]] = {}

    def get(self, key: tuple[Any, ...], state: Any) -> dict[str, TermRows]:
        held = self._found.get(key)
        if held is None or held[0] != state:
            if held is not None:
                self._held -= sum(len(p.rows) for p in held[1].values())
            if len(self._found) >= self._corpora:
                self.clear()
            held = (state, {})
            self._found[key] = held
            self._forms[key] = {}
            self._returned[key] = {}
        return held[1]

    def returned(self, key: tuple[Any, ...], flt: RecallFilter) -> dict[str, bool]:
        """Whether a row a search under ``flt`` may return holds each word, for the words
        read so far (at the state :meth:`get` saw last for the corpus ``key``)."""
        by_filter = self._returned.setdefault(key, {})
        if flt not in by_filter and len(by_filter) >= self._corpora:
            by_filter.clear()
        return by_filter.setdefault(flt, {})

    def forms(self, key: tuple[Any, ...]) -> dict[str, tuple[str, ...]]:
        """The forms corpus ``key`` holds of words it does not hold (at the state
        :meth:`get` saw last): ``{word: forms}``, for the words read so far."""
        return self._forms.setdefault(key, {})

    def last(self, key: tuple[Any, ...]) -> tuple[Any, dict[str, TermRows]] | None:
        """The state the corpus ``key`` was last read at, and its words held."""
        return self._found.get(key)

    def add(self, key: tuple[Any, ...], found: dict[str, TermRows]) -> None:
        """Keep ``found`` for the corpus ``key`` (at the state :meth:`get` saw last);
        when they would not fit, every word held before is let go first."""
        held = self._found.get(key)
        size = sum(len(p.rows) for p in found.values())
        if held is None or size > self._postings:
            return
        if self._held + size > self._postings:
            for _, terms in self._found.values():
                terms.clear()
            self._held = 0
        held[1].update(found)
        self._held += size

    def clear(self) -> None:
        for _, terms in self._found.values():
            terms.clear()
        self._found.clear()
        self._forms.clear()
        self._returned.clear()
        self._held = 0


def lexical(
    conn: Conn,
    phrases: Sequence[Phrase],
    flt: RecallFilter,
    limit: int,
    cache: PostingsCache | None = None,
    along: Along | None = None,
    tokens: Tokens | None = None,
) -> list[tuple[str, float]]:
    """The ``limit`` best items by BM25 over ``phrases`` (best first, ties by id).

    Every row of the corpus that holds a phrase is scored, in this process, from the
    postings of the corpus (read once per corpus state, see :class:`PostingsCache`);
    the filter then reads only the best rows, more of them while it keeps too few.
    When every word was read at the corpus' last known state, the rows are scored
    first and the state is checked in the filter's round trip: one round trip in all
    while nobody writes to the corpus (the usual path is taken again when it moved).
    ``along``: another search's statements, sent in the first filter round trip (none
    is made when nothing matches: then they are still :attr:`Along.waiting`).
    ``tokens``: the tokenizer of the words; with it, a word the corpus does not hold is
    searched in the forms it holds (:mod:`kronika.core.word_forms`, :func:`_with_forms`).
    """
    corpus, corpus_params = _corpus_clause(flt, "c")
    stats_sql = (
        f"SELECT agent, tenant, n, tokens, generation FROM idx_corpus AS c WHERE {corpus}"
        " ORDER BY agent, tenant"
    )
    cache = cache or PostingsCache()
    key = (tuple(sorted(set(flt.agents))), flt.tenant)
    needed = {t for p in phrases for t in p.tokens}
    # the words that may be searched in their forms: whether a row the search may
    # return holds each is asked of the server with the statistics (at their state)
    formed = [] if tokens is None else sorted(absent_words(phrases, lambda t: False))
    last = cache.last(key)
    if last is not None and needed <= set(last[1]):
        state, known = last
        seen = cache.returned(key, flt)
        held = (
            _with_forms(None, phrases, known, cache.forms(key), seen, flt, tokens)
            if all(t in seen for t in formed)
            else None
        )
        scored = None if held is None else _scored(conn, held, known, state, flt)
        if scored is not None:
            found = _best_passing(
                conn, *scored, flt, limit, check=(stats_sql, corpus_params, state), along=along
            )
            if found is not None:
                return found
    # One snapshot for the statistics and the postings read at them; it starts with the
    # statistics in one round trip, and ends with the filter's first reading
    # (``conn`` is in autocommit: the caller ends whatever is left open, by COMMIT).
    with pipeline(conn):
        conn.execute(SNAPSHOT)
        stats = conn.execute(stats_sql, corpus_params)
        returned = _returned(conn, formed, flt) if formed else None
    state = tuple(tuple(r) for r in stats.fetchall())
    known = cache.get(key, state)
    seen = cache.returned(key, flt)
    if returned is not None:
        held_by = {str(term) for (term,) in returned.fetchall()}
        seen.update((t, t in held_by) for t in formed)
    missing = sorted(needed - set(known))
    fetched = _read_postings(conn, missing, flt) if missing else {}
    cache.add(key, fetched)
    words = known | fetched
    before = set(words)
    expanded = _with_forms(conn, phrases, words, cache.forms(key), seen, flt, tokens)
    assert expanded is not None  # read what was missing
    cache.add(key, {t: words[t] for t in set(words) - before})
    scored = _scored(conn, expanded, words, state, flt)
    if scored is None:
        return []
    found = _best_passing(conn, *scored, flt, limit, along=along)
    assert found is not None  # no state to check
    return found


def _with_forms(
    conn: Conn | None,
    phrases: Sequence[Phrase],
    words: dict[str, TermRows],
    forms: dict[str, tuple[str, ...]],
    seen: dict[str, bool],
    flt: RecallFilter,
    tokens: Tokens | None,
) -> list[Phrase] | None:
    """``phrases`` with the forms the corpus holds of each word no row the search may
    return holds (``seen``: a word only memories the reader may not see hold is as good
    as absent, so what they hold never shows through which words are searched;
    :mod:`kronika.core.word_forms`), as the SQLite index adds them. The forms of each
    such word (``forms``) and their postings (``words``) are read on ``conn`` where
    missing, in one round trip (:func:`_read_forms`), and kept in both; without
    ``conn``, None when something is missing."""
    absent = [] if tokens is None else absent_words(phrases, lambda t: seen[t])
    unread = [t for t in absent if t not in forms]
    if unread:
        if conn is None:
            return None
        assert tokens is not None
        for token, found in _read_forms(conn, unread, flt, tokens).items():
            forms[token] = tuple(found)
            words.update(found)
    missing = sorted({f for t in absent for f in forms[t]} - set(words))
    if missing:  # let go by the cache meanwhile
        if conn is None:
            return None
        words.update(_read_postings(conn, missing, flt))
    return with_forms(phrases, {t: forms[t] for t in absent}, lambda form: Phrase(form, (form,)))


def _returned(conn: Conn, terms: Sequence[str], flt: RecallFilter) -> Any:
    """Queue the question which of ``terms`` a row of the corpus ``flt`` names, that a
    search under ``flt`` may return (the reader's visibility included), holds; returns
    the cursor (one row per such word)."""
    corpus, corpus_params = _corpus_clause(flt, "t")
    where, params = filter_clause(flt)
    return conn.execute(
        "SELECT w.term FROM unnest(%s::text[]) AS w (term) WHERE EXISTS (SELECT 1"
        " FROM idx_terms AS t JOIN idx_items AS i ON i.rowid = t.item_rowid"
        f" WHERE t.term = w.term AND {corpus} AND {where})",
        [list(terms), *corpus_params, *params],
    )


def _read_forms(
    conn: Conn, absent: Sequence[str], flt: RecallFilter, tokens: Tokens
) -> dict[str, dict[str, TermRows]]:
    """The forms the corpus ``flt`` names holds of each of ``absent``, with their
    postings: one statement reads the words that start as a form of each would
    (:func:`~kronika.core.word_forms.form_prefixes`, at most as long as a form can be),
    and :func:`~kronika.core.word_forms.forms_of` keeps its forms; a form the tokenizer
    (``tokens``) would not give back as itself is left out, as on SQLite.

    A range of the terms' index finds the words; ``starts_with`` keeps those that do
    start so under any collation of the database (a collation that does not keep the
    words of one prefix together may leave a form out, never adds another word)."""
    corpus, params = _corpus_clause(flt, "t")
    asks = [(n, p) for n, token in enumerate(absent) for p in form_prefixes(token)]
    longest = [max(len(x) for x in (token, *stems(token))) + MAX_ENDING for token in absent]
    candidates: list[dict[str, TermRows]] = [{} for _ in absent]
    for n, term, packed in conn.execute(
        "SELECT p.n, w.term, w.packed FROM unnest(%s::int[], %s::text[], %s::text[], %s::int[])"
        f" AS p (n, lo, hi, longest) CROSS JOIN LATERAL (SELECT t.term, {_PACKED} AS packed"
        " FROM idx_terms AS t"
        " WHERE t.term >= p.lo AND t.term < p.hi AND starts_with(t.term, p.lo)"
        f" AND length(t.term) <= p.longest AND {corpus} GROUP BY t.term) AS w",
        [
            [n for n, _ in asks],
            [p for _, p in asks],
            [prefix_end(p) for _, p in asks],
            [longest[n] for n, _ in asks],
            *params,
        ],
    ):
        candidates[int(n)][str(term)] = _unpacked(packed)
    return {
        token: {f: held[f] for f in searchable_forms(token, held, tokens)}
        for token, held in zip(absent, candidates, strict=True)
    }


def _scored(
    conn: Conn,
    phrases: Sequence[Phrase],
    words: dict[str, TermRows],
    state: Sequence[Sequence[Any]],
    flt: RecallFilter,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
    """The rows holding a phrase and their BM25 scores, from the statistics rows
    ``state`` and the postings ``words`` (None: nothing matches)."""
    n = sum(int(r[2]) for r in state)
    tokens = sum(int(r[3]) for r in state)
    if n <= 0 or tokens <= 0:
        return None
    avgdl = float(tokens) / float(n)
    # each phrase that matches something, with its rows: a word's postings, or the
    # occurrences of words side by side
    plan: list[tuple[float, TermRows]] = []
    for phrase in phrases:
        if len(phrase.tokens) == 1:
            found = words[phrase.tokens[0]]
        elif phrase.tokens:
            found = _phrase_rows(conn, phrase.tokens, words, flt)
        else:
            continue
        if len(found.rows):
            plan.append((idf(n, len(found.rows)), found))
    if not plan:
        return None
    every = np.sort(np.concatenate([p.rows for _, p in plan]))
    matching = every[np.concatenate(([True], every[1:] != every[:-1]))]
    scores = np.zeros(len(matching), dtype=np.float64)
    for weight, found in plan:  # summed in phrase order, as FTS5 does
        where = np.searchsorted(matching, found.rows)
        scores[where] += Scored(found.rows, found.tf, found.length, weight).parts(avgdl)
    scored = scores > 0.0  # the words only where they weigh nothing (the speaker): no match
    if not scored.any():
        return None
    return matching[scored], scores[scored]


def _best_passing(
    conn: Conn,
    rows: npt.NDArray[np.int64],
    scores: npt.NDArray[np.float64],
    flt: RecallFilter,
    limit: int,
    *,
    check: tuple[str, list[object], Any] | None = None,
    along: Along | None = None,
) -> list[tuple[str, float]] | None:
    """The ``limit`` best of the scored ``rows`` that pass ``flt`` (ties by id).

    The filter reads the ``depth`` best rows; when the ``limit``-th best of those that
    pass scores above every row not read, no other row can reach the top (nor tie).
    ``check`` (statistics statement, parameters, state): the first reading opens a
    snapshot with the statistics, and None is returned when they are not ``state``.
    ``along`` rides in the first reading, when it is still waiting.
    """
    where, params = filter_clause(flt)
    depth = max(DEPTH * limit, limit + DEPTH_SLACK)
    while True:
        if depth < len(rows):
            chosen = np.argpartition(-scores, depth)
            read, outside = chosen[:depth], float(scores[chosen[depth]])
        else:
            read, outside = np.arange(len(rows)), None
        score_of = dict(zip(rows[read].tolist(), scores[read].tolist(), strict=True))
        with pipeline(conn):
            if check is not None:
                conn.execute(SNAPSHOT)
                stats = conn.execute(check[0], check[1])
            found = conn.execute(
                "SELECT i.rowid, i.id FROM idx_items AS i WHERE i.rowid = ANY(%s::bigint[])"
                f" AND {where}",
                [int_array(score_of), *params],
            )
            riding = along if along is not None and along.waiting else None
            if riding is not None:
                riding.send(conn)
            if conn.info.transaction_status != IDLE or check is not None:
                # read only: COMMIT ends it as ROLLBACK would, and psycopg keeps its
                # prepared statements (its rollback drops them all)
                conn.execute("COMMIT")
        if riding is not None:
            riding.collect()
        if check is not None:
            if tuple(tuple(r) for r in stats.fetchall()) != check[2]:
                return None
            check = None
        passing = found.fetchall()
        ids = {int(r): str(i) for r, i in passing}
        best = top({r: score_of[r] for r in ids}, ids, limit)
        if outside is None or (len(best) >= limit and best[-1][1] > outside):
            return best
        depth *= DEPTH * 2


def _read_postings(conn: Conn, terms: Sequence[str], flt: RecallFilter) -> dict[str, TermRows]:
    """The postings of ``terms`` in the corpus ``flt`` names (packed by the server: one
    value per word, not one row per posting)."""
    corpus, params = _corpus_clause(flt, "t")
    found = {term: _NONE for term in terms}
    for term, packed in conn.execute(
        f"SELECT t.term, {_PACKED} FROM idx_terms AS t"
        f" WHERE t.term = ANY(%s) AND {corpus} GROUP BY t.term",
        [list(terms), *params],
    ):
        found[term] = _unpacked(packed)
    return found


def _unpacked(packed: bytes) -> TermRows:
    """One word's postings as the server packed them (rows ascending)."""
    held = np.frombuffer(packed, dtype=_POSTING)
    order = np.argsort(held["row"], kind="stable")
    return TermRows(
        held["row"][order].astype(np.int64),
        held["tf"][order].astype(np.float64),
        held["length"][order].astype(np.float64),
    )


def _phrase_rows(
    conn: Conn, tokens: Sequence[str], words: dict[str, TermRows], flt: RecallFilter
) -> TermRows:
    """The rows of the corpus holding the tokens side by side, with how often: the
    positions of the tokens in the rows that hold every one of them (by their postings;
    none: no round trip)."""
    if any(len(words[t].rows) == 0 for t in tokens):
        return _NONE
    rarest = min(set(tokens), key=lambda t: (len(words[t].rows), t))
    holding = words[rarest].rows
    for token in set(tokens) - {rarest}:
        holding = holding[np.isin(holding, words[token].rows, assume_unique=True)]
    if not len(holding):
        return _NONE
    found = conn.execute(
        "SELECT t.item_rowid, t.term, t.pos, t.doc_len FROM idx_terms AS t"
        " WHERE t.term = ANY(%s) AND t.item_rowid = ANY(%s)",
        [sorted(set(tokens)), holding.tolist()],
    )
    held: dict[int, dict[str, list[int]]] = {}
    lengths: dict[int, int] = {}
    for rowid, term, positions, length in found:
        held.setdefault(int(rowid), {})[term] = positions
        lengths[int(rowid)] = int(length)
    out: dict[int, float] = {}
    for rowid, terms in held.items():
        if all(t in terms for t in tokens):
            # a row holding the phrase where it weighs nothing counts for its rarity
            starts = phrase_occurrences([terms[t] for t in tokens])
            if starts:
                out[rowid] = weighted_tf(starts)
    rows = sorted(out)
    return TermRows(
        np.asarray(rows, dtype=np.int64),
        np.asarray([out[r] for r in rows], dtype=np.float64),
        np.asarray([lengths[r] for r in rows], dtype=np.float64),
    )


GRAPH_MARGIN = 40
"""Candidates an HNSW walk keeps beyond the rows asked for: pgvector's default
``ef_search``, what its authors keep for a first page of results."""


@dataclass(frozen=True, slots=True)
class HnswOptions:
    """How the HNSW index is built (``m``, ``ef_construction``: pgvector's defaults) and
    walked (``search_margin``: candidates kept beyond the rows asked for)."""

    m: int = 16
    ef_construction: int = 64
    search_margin: int = GRAPH_MARGIN

    def __post_init__(self) -> None:
        if not 2 <= self.m <= 100:
            raise ValueError(f"HNSW m must be from 2 to 100; got {self.m}")
        if not 2 * self.m <= self.ef_construction <= 1000:
            raise ValueError(
                f"HNSW ef_construction must be from 2 * m ({2 * self.m}) to 1000;"
                f" got {self.ef_construction}"
            )
        if not 0 <= self.search_margin <= 1000:
            raise ValueError(f"HNSW search margin must be from 0 to 1000; got {self.search_margin}")

    @property
    def with_clause(self) -> str:
        """The ``WITH`` options of ``CREATE INDEX ... USING hnsw``."""
        return f"m = {self.m}, ef_construction = {self.ef_construction}"

    def built_alike(self, reloptions: Sequence[str] | None) -> bool:
        """Whether an index whose ``pg_class.reloptions`` are ``reloptions`` was built with
        these ``m`` and ``ef_construction`` (an option not given there: pgvector's default)."""
        given = dict(o.split("=", 1) for o in reloptions or ())
        return (int(given.get("m", 16)), int(given.get("ef_construction", 64))) == (
            self.m,
            self.ef_construction,
        )


def graph_settings(limit: int, margin: int = GRAPH_MARGIN) -> str:
    """The settings of an HNSW walk for ``limit`` rows: candidates kept while walking
    (``ef_search``: ``limit`` + ``margin``), and an iterative scan that walks on until
    ``limit`` rows pass the filter (pgvector 0.8)."""
    ef = ef_search(limit, margin)
    return f"SET hnsw.ef_search = {ef}; SET hnsw.iterative_scan = relaxed_order"


def ef_search(limit: int, margin: int = GRAPH_MARGIN) -> int:
    """pgvector's ``hnsw.ef_search`` for a walk to ``limit`` rows: ``limit`` + ``margin``,
    within pgvector's bounds (1 to 1,000)."""
    return max(1, min(limit + margin, 1000))


def unit_query(query: Vector) -> npt.NDArray[np.float32] | None:
    """``query`` scaled to unit length (None: a zero vector, which finds nothing)."""
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    return None if norm == 0.0 else q / norm


def walk_sql(
    q: npt.NDArray[np.float32], flt: RecallFilter, limit: int, dim: int
) -> tuple[str, list[object]]:
    """The HNSW walk of :func:`vectors` (with :func:`graph_settings` in force)."""
    where, params = filter_clause(flt)
    return (
        "SELECT id, -d AS score FROM (SELECT i.id,"
        f" g.vec::vector({dim}) <#> %s::vector({dim}) AS d FROM idx_graph AS g"
        f" JOIN idx_items AS i ON i.id = g.item_id WHERE {where} ORDER BY d LIMIT %s) AS c"
        " ORDER BY score DESC, id",
        [q, *params, limit],
    )


def exact_sql(
    q: npt.NDArray[np.float32], flt: RecallFilter, limit: int
) -> tuple[str, list[object]]:
    """The exact scan of :func:`vectors`: every row ``flt`` keeps is scored."""
    where, params = filter_clause(flt)
    return (
        "SELECT i.id, -(i.vec <#> %s) AS score FROM idx_items AS i"
        f" WHERE i.vec IS NOT NULL AND {where} ORDER BY score DESC, i.id LIMIT %s",
        [q, *params, limit],
    )


def vectors(
    conn: Conn,
    query: Vector,
    flt: RecallFilter,
    limit: int,
    *,
    approximate: int | None,
) -> list[tuple[str, float]]:
    """Items by the dot product of their unit vector with the unit ``query``, best first.

    ``approximate`` None: exact (every row the filter keeps is scored). Otherwise the
    dimension of the HNSW index to walk, with :func:`graph_settings` in force on
    ``conn``: pgvector's iterative scan keeps walking the graph until ``limit`` rows
    pass the filter, and the candidates are then ordered by their exact score (the
    distance the walk computed from the row's own vector). Too few found (a narrow
    filter the walk gave up on) falls back to the exact scan.
    """
    q = unit_query(query)
    if limit <= 0 or q is None:
        return []
    if approximate is not None:
        # hnsw.ef_search and hnsw.iterative_scan are set on the connection (see
        # PostgresIndex.search_vector): no transaction, one round trip
        found = conn.execute(*walk_sql(q, flt, limit, int(approximate))).fetchall()
        if len(found) >= limit:
            return [(str(i), float(s)) for i, s in found]
    found = conn.execute(*exact_sql(q, flt, limit)).fetchall()
    return [(str(i), float(s)) for i, s in found]


# The speaker is a field, not a word of the turn (as in BM25, where it weighs nothing).
_DOCUMENT = (
    "unaccent(lower(i.content || ' ' || coalesce(i.key, '') || ' '"
    " || array_to_string(i.entities, ' ')))"
)


def lexical_simple(
    conn: Conn, terms: Sequence[str], flt: RecallFilter, limit: int
) -> list[tuple[str, float]]:
    """PostgreSQL's own full text: ``simple`` configuration over unaccented text, the
    words OR-ed, ranked by ``ts_rank`` (measured against BM25; not the default)."""
    where, params = filter_clause(flt)
    found = conn.execute(
        "WITH q AS (SELECT to_tsquery('simple', string_agg(quote_literal(unaccent(w)), ' | '))"
        " AS q FROM unnest(%s::text[]) AS w)"
        f" SELECT i.id, ts_rank(to_tsvector('simple', {_DOCUMENT}), q.q) AS score"
        f" FROM idx_items AS i, q WHERE to_tsvector('simple', {_DOCUMENT}) @@ q.q AND {where}"
        ' ORDER BY score DESC, i.id COLLATE "C" LIMIT %s',
        [list(terms), *params, limit],
    ).fetchall()
    return [(str(i), float(s)) for i, s in found]


def lexical_trigram(
    conn: Conn, terms: Sequence[str], flt: RecallFilter, limit: int
) -> list[tuple[str, float]]:
    """pg_trgm: each query word's ``word_similarity`` to the unaccented text, summed over
    the words (measured against BM25; not the default)."""
    where, params = filter_clause(flt)
    found = conn.execute(
        "SELECT id, score FROM (SELECT i.id, (SELECT sum(word_similarity(unaccent(w), d.d))"
        " FROM unnest(%s::text[]) AS w) AS score"
        f" FROM idx_items AS i, LATERAL (SELECT {_DOCUMENT} AS d) AS d WHERE {where}) AS s"
        ' WHERE score > 0 ORDER BY score DESC, id COLLATE "C" LIMIT %s',
        [list(terms), *params, limit],
    ).fetchall()
    return [(str(i), float(s)) for i, s in found]
