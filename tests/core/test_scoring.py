import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kronika.core.scoring import (
    ACCESS_CAP,
    DAY,
    ScoreWeights,
    combined_score,
    overtaking_bound,
    recencies,
    recency,
)

NOW = datetime(2025, 11, 27, 12, 0, tzinfo=UTC)
seconds = st.floats(min_value=0, max_value=1e9, allow_nan=False)
counts = st.integers(min_value=0, max_value=10_000)
half_lives = st.floats(min_value=1.0, max_value=1e9, allow_nan=False)
unit = st.floats(min_value=0, max_value=1, allow_nan=False)
weights = st.builds(
    ScoreWeights,
    alpha=st.floats(min_value=0.01, max_value=10, allow_nan=False),
    beta=st.floats(min_value=0, max_value=10, allow_nan=False),
    gamma=st.floats(min_value=0, max_value=10, allow_nan=False),
)
MONTH = 30 * DAY


def test_recency_halves_every_half_life():
    created = NOW - timedelta(days=30)
    assert recency(NOW, created, None, 0, MONTH) == pytest.approx(0.5)
    assert recency(NOW, NOW - timedelta(days=90), None, 0, MONTH) == pytest.approx(0.125)
    assert recency(NOW, NOW - timedelta(days=1), None, 0, MONTH) > 0.97


def test_accesses_lengthen_the_half_life_by_a_bounded_factor_that_fades():
    created = NOW - timedelta(days=30)
    # three accesses, the last one 30 days ago: they count as 1.5 (faded by half)
    expected = 0.5 ** (1 / (math.log1p(1.5) + 1))
    assert recency(NOW, created, created, 3, MONTH) == pytest.approx(expected)
    # however often it was recalled, the half-life grows at most 1 + ln(1 + ACCESS_CAP) times
    most = 0.5 ** (1 / (math.log1p(ACCESS_CAP) + 1))
    assert recency(NOW, created, created, 10**9, MONTH) == pytest.approx(most)
    # a year-old burst of recalls no longer counts
    old = NOW - timedelta(days=365)
    assert recency(NOW, old, old, 1000, MONTH) < 0.01


def test_recency_counts_from_last_access_not_creation():
    created = NOW - timedelta(days=365)
    fresh = recency(NOW, created, NOW - timedelta(seconds=10), 1, MONTH)
    stale = recency(NOW, created, None, 1, MONTH)
    assert fresh > 0.99 > stale


def test_future_items_count_as_brand_new():
    assert recency(NOW, NOW + timedelta(hours=5), None, 0, MONTH) == 1.0


def test_the_deprecated_decay_base_stands_for_its_half_life():
    w = ScoreWeights.from_settings(0.8, 0.1, 0.1, 30.0, 0.001)
    assert w.half_life == pytest.approx(math.log(2) / 0.001)
    created = NOW - timedelta(seconds=1000)
    assert recency(NOW, created, None, 0, w.half_life) == pytest.approx(math.exp(-1))
    assert ScoreWeights.from_settings(0.8, 0.1, 0.1, 30.0, 0.0).half_life == MONTH


@given(seconds, counts, half_lives)
def test_recency_is_in_unit_interval(dt, count, half_life):
    value = recency(NOW, NOW - timedelta(seconds=dt), None, count, half_life)
    assert 0 < value <= 1


@given(seconds, seconds, counts, half_lives)
def test_recency_decreases_with_elapsed_time(a, b, count, half_life):
    short, long_ = sorted((a, b))
    r_short = recency(NOW, NOW - timedelta(seconds=short), None, count, half_life)
    r_long = recency(NOW, NOW - timedelta(seconds=long_), None, count, half_life)
    assert r_short >= r_long


@given(seconds, counts, counts, half_lives)
def test_recency_increases_with_access_count(dt, a, b, half_life):
    few, many = sorted((a, b))
    created = NOW - timedelta(seconds=dt)
    assert recency(NOW, created, None, many, half_life) >= recency(
        NOW, created, None, few, half_life
    )


def test_combined_score_uses_the_default_weights():
    assert ScoreWeights() == ScoreWeights(alpha=0.8, beta=0.1, gamma=0.1, half_life=MONTH)
    assert combined_score(1.0, 0.0, 0.0, ScoreWeights()) == pytest.approx(0.8)
    assert combined_score(1.0, 1.0, 1.0, ScoreWeights()) == pytest.approx(1.0)
    assert combined_score(0.5, 0.5, 1.0, ScoreWeights()) == pytest.approx(0.5 * 0.95)
    assert combined_score(0.0, 1.0, 1.0, ScoreWeights()) == 0.0


def test_nine_important_fresh_facts_stay_below_a_relevant_old_turn():
    """The memory browser's case: facts of relevance 0.02-0.05, importance 0.8 and
    recency 0.96 against a turn of relevance 0.77, importance 0.3, recency 0."""
    w = ScoreWeights()
    turn = combined_score(0.77, 0.3, 0.0, w)
    for relevance in (0.02, 0.03, 0.05):
        assert combined_score(relevance, 0.8, 0.96, w) < turn / 10


@given(unit, unit, unit, unit, st.integers(min_value=0, max_value=2), weights)
def test_combined_score_is_monotone_in_each_part(a, b, c, bump, which, w):
    parts = [a, b, c]
    higher = list(parts)
    higher[which] = min(1.0, parts[which] + bump)
    assert combined_score(*higher, w) >= combined_score(*parts, w)


@given(unit, unit, unit, unit, unit, unit, weights)
def test_importance_and_recency_never_lift_a_much_less_relevant_item_over_another(
    rel_a, imp_a, rec_a, rel_b, imp_b, rec_b, w
):
    """The bound: A outranks B only when A's relevance is above α / (α + β + γ) of B's,
    whatever the importance and recency of either."""
    a = combined_score(rel_a, imp_a, rec_a, w)
    b = combined_score(rel_b, imp_b, rec_b, w)
    if a > b:
        assert rel_a > overtaking_bound(w) * rel_b * (1 - 1e-12)
    assert a <= rel_a * (1 + 1e-12)
    assert a >= rel_a * overtaking_bound(w) * (1 - 1e-12)


@given(unit, unit, unit, unit, weights)
def test_an_item_without_relevance_never_outranks_one_with_some(imp_a, rec_a, imp_b, rec_b, w):
    rel_b = 1e-9
    assume(combined_score(rel_b, imp_b, rec_b, w) > 0)
    assert combined_score(0.0, imp_a, rec_a, w) < combined_score(rel_b, imp_b, rec_b, w)


def test_the_default_bound_is_four_fifths():
    assert overtaking_bound(ScoreWeights()) == pytest.approx(0.8)
    assert overtaking_bound(ScoreWeights(alpha=1.0, beta=0.0, gamma=0.0)) == 1.0
    assert overtaking_bound(ScoreWeights(alpha=0.0, beta=0.0, gamma=0.0)) == 1.0


epochs = st.one_of(
    st.floats(min_value=-3e10, max_value=3e10, allow_nan=False),
    # on or next to a half microsecond, where datetime rounds half to even
    st.integers(min_value=-(10**16), max_value=10**16).map(lambda n: n / 2e6),
    st.integers(min_value=-(10**8), max_value=10**8).map(lambda n: NOW.timestamp() + n / 2e6),
)


@given(
    st.lists(
        st.tuples(epochs, st.none() | epochs, st.integers(min_value=-5, max_value=10**12)),
        max_size=40,
    ),
    st.sampled_from([1.0, 600.0, MONTH, 1e9, math.inf]),
    st.integers(min_value=0, max_value=999_999),
)
def test_recencies_equal_recency_bit_for_bit(
    rows: list[tuple[float, float | None, int]], base: float, micro: int
) -> None:
    now = NOW.replace(microsecond=micro)
    got = recencies(
        now,
        np.asarray([c for c, _, _ in rows], dtype=np.float64),
        np.asarray([np.nan if a is None else a for _, a, _ in rows], dtype=np.float64),
        np.asarray([n for _, _, n in rows], dtype=np.int64),
        base,
    )
    expected = [
        recency(
            now,
            datetime.fromtimestamp(c, UTC),
            None if a is None else datetime.fromtimestamp(a, UTC),
            n,
            base,
        )
        for c, a, n in rows
    ]
    assert got.tolist() == expected
