from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kronika.core.scoring import ScoreWeights, combined_score, recency, rrf_fuse

NOW = datetime(2025, 11, 27, 12, 0, tzinfo=UTC)
seconds = st.floats(min_value=0, max_value=1e9, allow_nan=False)
counts = st.integers(min_value=0, max_value=10_000)
bases = st.floats(min_value=1e-9, max_value=1.0, allow_nan=False)
unit = st.floats(min_value=0, max_value=1, allow_nan=False)


def test_recency_matches_the_spec_formula():
    created = NOW - timedelta(seconds=1000)
    assert recency(NOW, created, None, 0, 0.001) == pytest.approx(2.718281828**-1)
    # with three accesses the decay is damped by ln(4) + 1
    expected = 2.718281828 ** (-0.001 / (1.3862943611 + 1) * 1000)
    assert recency(NOW, created, None, 3, 0.001) == pytest.approx(expected)


def test_recency_counts_from_last_access_not_creation():
    created = NOW - timedelta(days=365)
    fresh = recency(NOW, created, NOW - timedelta(seconds=10), 1, 0.001)
    stale = recency(NOW, created, None, 1, 0.001)
    assert fresh > 0.99 > stale


def test_future_items_count_as_brand_new():
    assert recency(NOW, NOW + timedelta(hours=5), None, 0, 0.001) == 1.0


@given(seconds, counts, bases)
def test_recency_is_in_unit_interval(dt, count, base):
    value = recency(NOW, NOW - timedelta(seconds=dt), None, count, base)
    assert 0 < value <= 1


@given(seconds, seconds, counts, bases)
def test_recency_decreases_with_elapsed_time(a, b, count, base):
    short, long_ = sorted((a, b))
    r_short = recency(NOW, NOW - timedelta(seconds=short), None, count, base)
    r_long = recency(NOW, NOW - timedelta(seconds=long_), None, count, base)
    assert r_short >= r_long


@given(seconds, counts, counts, bases)
def test_recency_increases_with_access_count(dt, a, b, base):
    few, many = sorted((a, b))
    created = NOW - timedelta(seconds=dt)
    assert recency(NOW, created, None, many, base) >= recency(NOW, created, None, few, base)


def test_combined_score_uses_the_default_weights():
    assert combined_score(1.0, 0.0, 0.0, ScoreWeights()) == pytest.approx(0.5)
    assert combined_score(0.2, 0.5, 1.0, ScoreWeights()) == pytest.approx(0.1 + 0.15 + 0.2)


@given(unit, unit, unit, unit, st.integers(min_value=0, max_value=2))
def test_combined_score_is_monotone_in_each_part(a, b, c, bump, which):
    w = ScoreWeights()
    parts = [a, b, c]
    higher = list(parts)
    higher[which] = min(1.0, parts[which] + bump)
    assert combined_score(*higher, w) >= combined_score(*parts, w)


ids = st.lists(st.sampled_from("abcdefgh"), unique=True, min_size=1, max_size=8)


@given(st.lists(ids, min_size=1, max_size=4))
def test_rrf_scores_lie_in_unit_interval(rankings):
    fused = rrf_fuse(rankings)
    assert set(fused) == {i for r in rankings for i in r}
    assert all(0 < v <= 1 for v in fused.values())


@given(st.lists(ids, min_size=1, max_size=4), st.randoms())
def test_rrf_ignores_the_order_of_the_rankings(rankings, rnd):
    shuffled = list(rankings)
    rnd.shuffle(shuffled)
    a, b = rrf_fuse(rankings), rrf_fuse(shuffled)
    assert a.keys() == b.keys()
    assert all(a[k] == pytest.approx(b[k]) for k in a)


@given(st.lists(ids, min_size=1, max_size=4))
def test_an_id_first_everywhere_scores_one(rankings):
    rankings = [["winner", *r] for r in rankings]
    fused = rrf_fuse(rankings, k=10)
    assert fused["winner"] == 1.0
    assert all(v < 1.0 for k, v in fused.items() if k != "winner")


def test_rrf_prefers_ids_found_by_both_retrievers():
    lexical = ["a", "b", "c"]
    vector = ["c", "d", "a"]
    fused = rrf_fuse([lexical, vector])
    assert max(fused, key=fused.__getitem__) in {"a", "c"}
    assert fused["a"] > fused["b"] and fused["c"] > fused["d"]


def test_rrf_weights_tilt_the_result():
    fused = rrf_fuse([["lex"], ["vec"]], weights=[1.0, 3.0])
    assert fused["vec"] == pytest.approx(0.75)
    assert fused["lex"] == pytest.approx(0.25)


def test_rrf_rejects_mismatched_weights():
    with pytest.raises(ValueError, match="one weight per ranking"):
        rrf_fuse([["a"], ["b"]], weights=[1.0])
