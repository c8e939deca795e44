from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kronika.core.scoring import ScoreWeights, combined_score, recencies, recency

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
    st.sampled_from([1e-9, 1e-6, 0.001, 0.5]),
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
