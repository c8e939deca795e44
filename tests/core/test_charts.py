"""The figures behind the charts: per-day counts over a window, and the usage ledger
folded per day and per purpose."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from kronika.core.charts import axis, per_day, per_day_by, slot, usage_per_day, usage_per_purpose
from kronika.core.policies import StorageRule, may_apply
from kronika.core.usage import UsageEntry, totals

TODAY = date(2026, 11, 25)
moments = st.datetimes(
    min_value=datetime(2026, 9, 1), max_value=datetime(2026, 12, 31), timezones=st.just(UTC)
)


def test_the_axis_ends_today_oldest_first() -> None:
    assert axis(TODAY, 3) == [date(2026, 11, 23), date(2026, 11, 24), TODAY]
    assert axis(TODAY, 1) == [TODAY]


def test_a_moment_falls_on_its_utc_date() -> None:
    days = axis(TODAY, 2)
    warsaw = timezone(timedelta(hours=1))
    assert slot(datetime(2026, 11, 25, 0, 30, tzinfo=warsaw), days) == 0  # 23:30 UTC the day before
    assert slot(datetime(2026, 11, 25, 23, 59, tzinfo=UTC), days) == 1
    assert slot(datetime(2026, 11, 26, 0, 0, tzinfo=UTC), days) is None  # tomorrow
    assert slot(datetime(2026, 11, 23, 23, 59, tzinfo=UTC), days) is None  # before the window


@given(st.lists(moments, max_size=50), st.integers(1, 60))
def test_per_day_counts_every_moment_of_the_window_once(found: list[datetime], n: int) -> None:
    days = axis(TODAY, n)
    counts = per_day(found, days)
    assert len(counts) == n
    assert sum(counts) == sum(1 for m in found if days[0] <= m.date() <= TODAY)


@given(st.lists(st.tuples(moments, st.sampled_from(["short", "mid", "long"])), max_size=50))
def test_the_series_per_label_add_up_to_the_count_per_day(
    found: list[tuple[datetime, str]],
) -> None:
    days = axis(TODAY, 30)
    series = per_day_by(found, days)
    together = [sum(values) for values in zip(*series.values(), strict=True)] or [0] * 30
    assert together == per_day((m for m, _ in found), days)
    assert list(series) == sorted(series)
    assert all(any(values) for values in series.values())


def test_usage_is_folded_per_day_and_per_purpose() -> None:
    at = datetime(2026, 11, 25, 12, tzinfo=UTC)
    entries = [
        UsageEntry(at - timedelta(days=1), "extraction", "a", "m", 100, 10, 1.0, "ok"),
        UsageEntry(at, "extraction", "a", "m", 50, 5, 1.0, "ok"),
        UsageEntry(at, "extraction", "a", "other", 50, 5, 1.0, "ok"),
        UsageEntry(at, "summary", "a", "m", 300, 30, 1.0, "error"),
        UsageEntry(at, "summary", "a", "m", 999, 999, 1.0, "over budget"),
    ]
    rows = totals(entries, price_input=1.0, price_output=2.0)
    days = usage_per_day(rows, axis(TODAY, 3))
    assert [(d.calls, d.failed, d.tokens_in, d.tokens_out) for d in days] == [
        (0, 0, 0, 0),
        (1, 0, 100, 10),
        (3, 1, 400, 40),
    ]
    assert round(days[2].cost, 6) == round((400 * 1.0 + 40 * 2.0) / 1e6, 6)
    assert [(p.purpose, p.calls, p.tokens_in + p.tokens_out) for p in usage_per_purpose(rows)] == [
        ("summary", 1, 330),
        ("extraction", 3, 220),
    ]


def test_a_rule_may_apply_to_an_agent_when_its_tenant_and_agent_patterns_match() -> None:
    assert may_apply(StorageRule("any", store=False), "acme", "alice")
    assert may_apply(StorageRule("a*", agents=("a*",), store=False), "acme", "alice")
    assert not may_apply(StorageRule("bob", agents=("bob",), store=False), "acme", "alice")
    assert not may_apply(StorageRule("globex", tenants=("globex",), store=False), "acme", "alice")
    rule = StorageRule("both", tenants=("acme",), agents=("alice", "bob"), store=False)
    assert may_apply(rule, "acme", "bob") and not may_apply(rule, "globex", "bob")
