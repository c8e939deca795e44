"""The two searches of :class:`~kronika.stores.postgres.index.PostgresIndex`, on one connection.

Keyword search is BM25 over ``idx_terms`` (:mod:`.lexical`); vector search is the dot
product of unit vectors (cosine similarity), exact with a sequential scan, or over
pgvector's HNSW index once the index holds enough items (see :func:`vectors`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kronika.core.model import RecallFilter
from kronika.ports import Vector
from kronika.stores.postgres.index_rows import filter_clause
from kronika.stores.postgres.lexical import (
    COMMON_SHARE,
    K1,
    MARGIN,
    B,
    Phrase,
    Scored,
    common_ceiling,
    idf,
    phrase_occurrences,
    top,
)

Conn = Any  # psycopg.Connection (imported lazily: the postgres extra is optional)


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


class FrequencyCache:
    """Document frequencies per corpus state: ``{(agents, tenant): (generations, {term: n})}``.

    A corpus' generations (one per agent and tenant, grown by every write to its rows)
    name its state exactly, so frequencies read at them stay true until one changes.
    """

    def __init__(self, corpora: int = 16, terms: int = 50_000) -> None:
        self._corpora = corpora
        self._terms = terms
        self._found: dict[tuple[Any, ...], tuple[Any, dict[str, int]]] = {}

    def get(self, key: tuple[Any, ...], state: Any) -> dict[str, int]:
        held = self._found.get(key)
        if held is None or held[0] != state or len(held[1]) > self._terms:
            if len(self._found) >= self._corpora:
                self._found.clear()
            held = (state, {})
            self._found[key] = held
        return held[1]


def lexical(
    conn: Conn,
    phrases: Sequence[Phrase],
    flt: RecallFilter,
    limit: int,
    cache: FrequencyCache | None = None,
) -> list[tuple[str, float]]:
    """The ``limit`` best items by BM25 over ``phrases`` (best first, ties by id)."""
    corpus, corpus_params = _corpus_clause(flt, "c")
    rows = conn.execute(
        f"SELECT agent, tenant, n, tokens, generation FROM idx_corpus AS c WHERE {corpus}"
        " ORDER BY agent, tenant",
        corpus_params,
    ).fetchall()
    n = sum(int(r[2]) for r in rows)
    tokens = sum(int(r[3]) for r in rows)
    if n <= 0 or tokens <= 0:
        return []
    known = (cache or FrequencyCache()).get(
        (tuple(sorted(set(flt.agents))), flt.tenant), tuple((r[0], r[1], r[4]) for r in rows)
    )
    avgdl = float(tokens) / float(n)
    singles = sorted({t for p in phrases for t in p.tokens} - set(known))
    in_corpus, params = _corpus_clause(flt, "t")
    if singles:
        found = conn.execute(
            f"SELECT t.term, count(*) FROM idx_terms AS t WHERE t.term = ANY(%s) AND {in_corpus}"
            " GROUP BY t.term",
            [singles, *params],
        )
        known.update({term: 0 for term in singles})
        known.update({term: int(count) for term, count in found})
    df = known
    where, filter_params = filter_clause(flt)
    # each phrase that matches something: ("term", token) or ("rows", {rowid: f})
    plan: list[tuple[Phrase, float, dict[int, float] | None]] = []
    for phrase in phrases:
        if len(phrase.tokens) == 1:
            hits = df.get(phrase.tokens[0], 0)
            if hits:
                plan.append((phrase, idf(n, hits), None))
        elif phrase.tokens:
            occurrences = _phrase_rows(conn, phrase.tokens, df, flt)
            if occurrences:
                plan.append((phrase, idf(n, len(occurrences)), occurrences))
    if not plan:
        return []
    common_size = n // COMMON_SHARE
    singles_in_plan = [p.tokens[0] for p, _, rows in plan if rows is None]
    weights = {p.tokens[0]: w for p, w, rows in plan if rows is None}
    # The common tokens, rarest first: each one that keeps the bound from separating is
    # scored in full instead, until the rest can be left to the rows within reach.
    common = sorted({t for t in singles_in_plan if df[t] > common_size}, key=lambda t: (df[t], t))
    info: dict[int, tuple[str, float]] = {}  # rowid -> (id, length) of rows passing flt
    _fetch_phrase_rows(conn, plan, where, filter_params, info)
    phrase_parts: dict[int, float] = {}
    for _, weight, rows in plan:
        if rows is not None:
            for rowid, part in _parts(rows, info, weight, avgdl):
                phrase_parts[rowid] = phrase_parts.get(rowid, 0.0) + part
    while True:
        ceiling = common_ceiling([weights[t] for t in common])
        scored = [t for t in singles_in_plan if t not in common]
        candidates, floor = _within_reach(
            conn, scored, weights, phrase_parts, (where, filter_params), avgdl, limit, ceiling
        )
        if not common or (floor is not None and ceiling < floor):
            break
        common.pop(0)
    # Exact scores of the candidates, summed in phrase order as FTS5 does.
    tf: dict[str, dict[int, float]] = {t: {} for t in singles_in_plan}
    info = {}
    if candidates:
        for term, rowid, count in conn.execute(
            "SELECT term, item_rowid, tf FROM idx_terms WHERE term = ANY(%s)"
            " AND item_rowid = ANY(%s)",
            [sorted(set(singles_in_plan)), candidates],
        ):
            tf[term][rowid] = float(count)
        for rowid, item_id, length in conn.execute(
            "SELECT rowid, id, doc_len FROM idx_items WHERE rowid = ANY(%s)", [candidates]
        ):
            info[rowid] = (item_id, float(length))
    scores: dict[int, float] = {}
    for phrase, weight, rows in plan:  # summed in phrase order, as FTS5 does
        got = tf.get(phrase.tokens[0], {}) if rows is None else rows
        for rowid, part in _parts(got, info, weight, avgdl):
            scores[rowid] = scores.get(rowid, 0.0) + part
    return top(scores, {r: info[r][0] for r in scores}, limit)


def _within_reach(
    conn: Conn,
    scored: Sequence[str],
    weights: dict[str, float],
    phrase_parts: dict[int, float],
    where: tuple[str, Sequence[object]],
    avgdl: float,
    limit: int,
    ceiling: float,
) -> tuple[list[int], float | None]:
    """The rows that can be among the ``limit`` best, and the bound that says so.

    The server sums each row's partial score (the ``scored`` words and the phrases);
    the ``limit``-th best, less the margin, is the floor. Rows whose partial score
    plus ``ceiling`` (the most the other words can add) reaches it get the other
    words' parts too, and the rows whose total reaches the ``limit``-th best total
    come back, with the floor (None when fewer rows match: then nothing was pruned).
    """
    condition, params = where
    terms = sorted(set(scored))
    others = sorted(set(weights) - set(scored))
    every = sorted(weights)
    norm = f"(t.tf * {K1 + 1.0!r}) / (t.tf + {K1!r} * (1 - {B!r} + {B!r} * i.doc_len / %s))"
    found = conn.execute(
        "WITH w AS (SELECT * FROM unnest(%s::text[], %s::float8[]) AS w (term, idf)),"
        f" x AS (SELECT t.item_rowid AS r, w.idf * {norm} AS p"
        " FROM idx_terms AS t JOIN w ON w.term = t.term"
        f" JOIN idx_items AS i ON i.rowid = t.item_rowid WHERE t.term = ANY(%s) AND {condition}"
        " UNION ALL SELECT * FROM unnest(%s::bigint[], %s::float8[])),"
        " s AS (SELECT r, sum(p) AS p FROM x GROUP BY r),"
        " f AS (SELECT p * (1 - %s) AS p FROM s ORDER BY p DESC OFFSET %s LIMIT 1),"
        " c AS (SELECT r, p FROM s"
        " WHERE p * (1 + %s) + %s >= coalesce((SELECT p FROM f), '-Infinity')),"
        f" y AS (SELECT c.r, c.p + coalesce((SELECT sum(w.idf * {norm})"
        " FROM idx_terms AS t JOIN w ON w.term = t.term"
        " JOIN idx_items AS i ON i.rowid = t.item_rowid"
        " WHERE t.item_rowid = c.r AND t.term = ANY(%s)), 0) AS total FROM c),"
        " g AS (SELECT total * (1 - %s) AS p FROM y ORDER BY total DESC OFFSET %s LIMIT 1)"
        " SELECT y.r, (SELECT p FROM f) FROM y"
        " WHERE y.total * (1 + %s) >= coalesce((SELECT p FROM g), '-Infinity')",
        [
            every,
            [weights[t] for t in every],
            avgdl,
            terms,
            *params,
            list(phrase_parts),
            list(phrase_parts.values()),
            MARGIN,
            limit - 1,
            MARGIN,
            ceiling,
            avgdl,
            others,
            MARGIN,
            limit - 1,
            MARGIN,
        ],
    ).fetchall()
    floor = None if not found or found[0][1] is None else float(found[0][1])
    return sorted(int(r) for r, _ in found), floor


def _parts(
    got: dict[int, float], info: dict[int, tuple[str, float]], weight: float, avgdl: float
) -> list[tuple[int, float]]:
    rows = [r for r in got if r in info]
    if not rows:
        return []
    scored = Scored(
        rows=np.asarray(rows, dtype=np.int64),
        tf=np.asarray([got[r] for r in rows], dtype=np.float64),
        length=np.asarray([info[r][1] for r in rows], dtype=np.float64),
        idf=weight,
    )
    return list(zip(rows, scored.parts(avgdl).tolist(), strict=True))


def _fetch_phrase_rows(
    conn: Conn,
    plan: Sequence[tuple[Phrase, float, dict[int, float] | None]],
    where: str,
    params: Sequence[object],
    info: dict[int, tuple[str, float]],
) -> None:
    wanted = sorted({r for _, _, rows in plan if rows is not None for r in rows} - set(info))
    if not wanted:
        return
    found = conn.execute(
        f"SELECT i.rowid, i.id, i.doc_len FROM idx_items AS i WHERE i.rowid = ANY(%s) AND {where}",
        [wanted, *params],
    )
    for rowid, item_id, length in found:
        info[rowid] = (item_id, float(length))


def _phrase_rows(
    conn: Conn, tokens: Sequence[str], df: dict[str, int], flt: RecallFilter
) -> dict[int, float]:
    """``{rowid: occurrences}`` of the rows of the corpus holding the tokens side by side:
    the positions of every token in the rows of the rarest one."""
    if any(df.get(t, 0) == 0 for t in tokens):
        return {}
    rarest = min(set(tokens), key=lambda t: (df[t], t))
    in_corpus, params = _corpus_clause(flt, "r")
    found = conn.execute(
        "SELECT t.item_rowid, t.term, t.pos FROM idx_terms AS t WHERE t.term = ANY(%s)"
        " AND t.item_rowid IN (SELECT r.item_rowid FROM idx_terms AS r WHERE r.term = %s"
        f" AND {in_corpus})",
        [sorted(set(tokens)), rarest, *params],
    )
    held: dict[int, dict[str, list[int]]] = {}
    for rowid, term, positions in found:
        held.setdefault(int(rowid), {})[term] = positions
    out: dict[int, float] = {}
    for rowid, terms in held.items():
        if all(t in terms for t in tokens):
            count = phrase_occurrences([terms[t] for t in tokens])
            if count:
                out[rowid] = float(count)
    return out


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
    dimension of the HNSW index to walk: pgvector's iterative scan keeps walking the
    graph until ``limit`` rows pass the filter, and the candidates are then ordered by
    their exact score. Too few found (a narrow filter the walk gave up on) falls back
    to the exact scan.
    """
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(q))
    if limit <= 0 or norm == 0.0:
        return []
    q = q / norm
    where, params = filter_clause(flt)
    if approximate is not None:
        dim = int(approximate)
        with conn.transaction():
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(100, 2 * limit)}")
            found = conn.execute(
                "SELECT id, score FROM (SELECT i.id, -(i.vec <#> %s) AS score,"
                f" i.vec::vector({dim}) <#> %s::vector({dim}) AS d FROM idx_items AS i"
                f" WHERE i.vec IS NOT NULL AND {where} ORDER BY d LIMIT %s) AS c"
                " ORDER BY score DESC, id",
                [q, q, *params, limit],
            ).fetchall()
        if len(found) >= limit:
            return [(str(i), float(s)) for i, s in found]
    found = conn.execute(
        "SELECT i.id, -(i.vec <#> %s) AS score FROM idx_items AS i"
        f" WHERE i.vec IS NOT NULL AND {where} ORDER BY score DESC, i.id LIMIT %s",
        [q, *params, limit],
    ).fetchall()
    return [(str(i), float(s)) for i, s in found]


_DOCUMENT = (
    "unaccent(lower(i.content || ' ' || coalesce(i.key, '') || ' '"
    " || array_to_string(i.entities, ' ') || ' ' || coalesce(i.speaker, '')))"
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
