"""Recall's relevance steps against plain item-by-item versions of their formulas.

The steps skip work that cannot change a result (links to neighbours without
relevance, sorting lists already short enough); these references do it all, and the
results must be the same to the bit on any input.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.core.fusion import fuse, with_neighbours, with_session_context

IDS = st.sampled_from([f"t{n}" for n in range(12)])
SCORE = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0, -0.0]),
    st.floats(min_value=-1.0, max_value=1.0, allow_nan=False),
)
RELEVANCE = st.dictionaries(IDS, SCORE, max_size=12)
NEIGHBOURS = st.dictionaries(
    IDS,
    st.lists(st.tuples(IDS, st.integers(min_value=-3, max_value=3)), max_size=6),
    max_size=8,
)


def _neighbours_reference(
    relevance: dict[str, float], neighbours: dict[str, list[tuple[str, int]]], weight: float
) -> dict[str, float]:
    w = min(1.0, max(0.0, weight))
    out = dict(relevance)
    if w == 0.0 or not neighbours:
        return out
    links: dict[str, set[tuple[str, int]]] = {}
    for item_id, pairs in neighbours.items():
        for other, offset in pairs:
            if offset and other != item_id:
                links.setdefault(item_id, set()).add((other, offset))
                links.setdefault(other, set()).add((item_id, -offset))
    for item_id, around in links.items():
        keep = 1.0
        for other, offset in sorted(around):
            r = relevance.get(other, 0.0)
            if r > 0.0:
                keep *= 1.0 - (w / abs(offset)) * r
        if keep < 1.0:
            out[item_id] = 1.0 - (1.0 - relevance.get(item_id, 0.0)) * keep
    return out


def _sessions_reference(
    relevance: dict[str, float], session_of: dict[str, str | None], weight: float
) -> dict[str, float]:
    if weight <= 0:
        return dict(relevance)
    best: dict[str, float] = {}
    for item_id, value in relevance.items():
        session = session_of.get(item_id)
        if session is not None and value > best.get(session, 0.0):
            best[session] = value
    out: dict[str, float] = {}
    for item_id, value in relevance.items():
        session = session_of.get(item_id)
        top = value if session is None else best.get(session, value)
        out[item_id] = (value + weight * top) / (1.0 + weight)
    return out


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    """Equal keys, and values equal to the bit (signs of zero included). The order of
    the keys is not compared: recall ranks by value, then id, never by that order."""
    return a.keys() == b.keys() and all(
        math.copysign(1.0, a[k]) == math.copysign(1.0, b[k]) and a[k] == b[k] for k in a
    )


@settings(max_examples=1500, deadline=None)
@given(RELEVANCE, NEIGHBOURS, st.sampled_from([0.0, 0.3, 0.5, 1.0, 1.5]))
def test_reading_turns_with_their_neighbours_is_the_plain_formula(
    relevance: dict[str, float], neighbours: dict[str, list[tuple[str, int]]], weight: float
) -> None:
    got = with_neighbours(relevance, neighbours, weight=weight)
    assert _same(got, _neighbours_reference(relevance, neighbours, weight))


@settings(max_examples=1500, deadline=None)
@given(
    RELEVANCE,
    st.dictionaries(IDS, st.one_of(st.none(), st.sampled_from(["s1", "s2", "s3"]))),
    st.sampled_from([0.0, 0.1, 0.25, 2.0]),
)
def test_session_context_is_the_plain_formula(
    relevance: dict[str, float], session_of: dict[str, str | None], weight: float
) -> None:
    got = with_session_context(relevance, session_of, weight=weight)
    assert _same(got, _sessions_reference(relevance, session_of, weight))


RESULTS = st.lists(
    st.tuples(IDS, st.floats(min_value=0.0, max_value=30.0, allow_nan=False)),
    max_size=12,
    unique_by=lambda pair: pair[0],
)


@settings(max_examples=1500, deadline=None)
@given(RESULTS, RESULTS, st.sampled_from([None, 1, 3, 5, 20]))
def test_fusion_does_not_depend_on_the_order_of_either_list(
    lexical: list[tuple[str, float]], vector: list[tuple[str, float]], depth: int | None
) -> None:
    """Recall hands the lists best first; any other order gives the same relevance."""
    ranked = [sorted(x, key=lambda pair: (-pair[1], pair[0])) for x in (lexical, vector)]
    got = fuse(lexical, vector, depth=depth, method="zscore")
    expected = fuse(ranked[0], ranked[1], depth=depth, method="zscore")
    assert got.keys() == expected.keys()
    assert all(got[k] == expected[k] for k in got)
