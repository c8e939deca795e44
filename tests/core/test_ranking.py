"""Best first, ties by id: the two-sort order equals the ``(−score, id)`` key's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kronika.core.ranking import best_first, best_ids, joined

IDS = st.text(alphabet="abcdeé-0", min_size=1, max_size=4)
SCORES = st.one_of(
    st.sampled_from([0.0, -0.0, 0.5, 1.0, -1.0]),
    st.floats(allow_nan=False, allow_infinity=True),
)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.tuples(IDS, SCORES), max_size=40))
def test_pairs_come_best_first_with_ties_by_id(pairs: list[tuple[str, float]]) -> None:
    assert best_first(pairs) == sorted(pairs, key=lambda pair: (-pair[1], pair[0]))


@settings(max_examples=2000, deadline=None)
@given(st.dictionaries(IDS, SCORES, max_size=40), st.one_of(st.none(), st.integers(0, 50)))
def test_ids_come_best_first_with_ties_by_id(scores: dict[str, float], count: int | None) -> None:
    expected = sorted(scores, key=lambda i: (-scores[i], i))
    assert best_ids(scores, count) == (expected if count is None else expected[:count])


def test_a_tie_between_zero_and_minus_zero_goes_by_id() -> None:
    assert best_first([("b", 0.0), ("a", -0.0), ("c", 1.0)]) == [
        ("c", 1.0),
        ("a", -0.0),
        ("b", 0.0),
    ]


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(IDS, SCORES, max_size=20), st.lists(st.tuples(IDS, SCORES), max_size=20))
def test_a_search_joined_by_another_keeps_its_own_scores_and_adds_the_rest(
    found: dict[str, float], extra: list[tuple[str, float]]
) -> None:
    joined_ = joined(best_first(found.items()), extra)
    assert joined_ is not None
    first_extra = {item_id: score for item_id, score in reversed(extra)}
    assert dict(joined_) == first_extra | found  # each id once, the search's own score first
    assert joined_ == best_first(joined_)
    assert joined(None, extra) is None  # a search not run stays not run
