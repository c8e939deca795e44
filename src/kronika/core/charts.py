"""The figures behind the memory browser's charts: counts and sums per UTC day.

A chart covers a *window* of ``days`` days that ends today, oldest first:
``axis = [today − (days − 1), …, today]``. A moment falls in the slot of its UTC date;
a moment before the first day or after today falls in none (:func:`slot`).

* :func:`per_day` — how many moments fall on each day of the axis;
* :func:`per_day_by` — the same, one series per label (a tier, a type …);
* :func:`usage_per_day` / :func:`usage_per_purpose` — the model-usage ledger's rows
  (:func:`kronika.core.usage.totals`) folded into one figure a day and one a purpose.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from kronika.core.usage import UsageRow

MAX_DAYS = 3660
"""The longest window a chart draws (ten years, as ``kronika logs usage --days``)."""


def axis(today: date, days: int) -> list[date]:
    """``[today − (days − 1), …, today]``."""
    return [today - timedelta(days=days - 1 - n) for n in range(days)]


def utc_day(moment: datetime) -> date:
    """The UTC date of ``moment`` (a naive moment is taken as UTC)."""
    if moment.tzinfo is None:
        return moment.date()
    return moment.astimezone(UTC).date()


def slot(moment: datetime, days: Sequence[date]) -> int | None:
    """Index of ``moment``'s UTC date in ``days`` (consecutive dates), or ``None``."""
    if not days:
        return None
    n = (utc_day(moment) - days[0]).days
    return n if 0 <= n < len(days) else None


def per_day(moments: Iterable[datetime], days: Sequence[date]) -> list[int]:
    """``counts[n] = |{m : utc_day(m) = days[n]}|``."""
    counts = [0] * len(days)
    for moment in moments:
        n = slot(moment, days)
        if n is not None:
            counts[n] += 1
    return counts


def per_day_by(
    labelled: Iterable[tuple[datetime, str]], days: Sequence[date]
) -> dict[str, list[int]]:
    """``series[label][n] = |{(m, label) : utc_day(m) = days[n]}|``, labels sorted; a
    label none of whose moments fall in the window has no series."""
    series: dict[str, list[int]] = {}
    for moment, label in labelled:
        n = slot(moment, days)
        if n is not None:
            series.setdefault(label, [0] * len(days))[n] += 1
    return dict(sorted(series.items()))


@dataclass(frozen=True, slots=True)
class UsageDay:
    """Model calls of one day: ``calls`` reached the model, ``failed`` of them did not
    end well; ``cost`` is the estimate of :func:`kronika.core.usage.cost`."""

    day: date
    calls: int = 0
    failed: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0


@dataclass(frozen=True, slots=True)
class UsagePurpose:
    """Model calls for one purpose over the whole window."""

    purpose: str
    calls: int
    tokens_in: int
    tokens_out: int
    cost: float


def usage_per_day(rows: Iterable[UsageRow], days: Sequence[date]) -> list[UsageDay]:
    """One :class:`UsageDay` per day of ``days``: the sums of the rows of that day."""
    found: dict[date, list[UsageRow]] = {}
    for row in rows:
        found.setdefault(row.day, []).append(row)
    return [
        UsageDay(
            day=day,
            calls=sum(r.calls for r in found.get(day, ())),
            failed=sum(r.failed for r in found.get(day, ())),
            tokens_in=sum(r.tokens_in for r in found.get(day, ())),
            tokens_out=sum(r.tokens_out for r in found.get(day, ())),
            cost=sum(r.cost for r in found.get(day, ())),
        )
        for day in days
    ]


def usage_per_purpose(rows: Iterable[UsageRow]) -> list[UsagePurpose]:
    """The sums per purpose, most tokens first (then by name)."""
    found: dict[str, list[UsageRow]] = {}
    for row in rows:
        found.setdefault(row.purpose, []).append(row)
    purposes = [
        UsagePurpose(
            purpose=purpose,
            calls=sum(r.calls for r in group),
            tokens_in=sum(r.tokens_in for r in group),
            tokens_out=sum(r.tokens_out for r in group),
            cost=sum(r.cost for r in group),
        )
        for purpose, group in found.items()
    ]
    purposes.sort(key=lambda p: (-(p.tokens_in + p.tokens_out), p.purpose))
    return purposes
