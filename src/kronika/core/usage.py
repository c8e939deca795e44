"""What the language model cost: ledger entries, totals per day, and the daily budget.

Every model call leaves one :class:`UsageEntry` (SPEC O1): when, for what (extraction,
a summary, chat…), for which agent, the model, tokens in and out, how long it took and
how it ended. Never the prompt or the reply: the ledger holds no memory, so forgetting
never has to look in it.

Cost estimate: ``tokens_in × price_input / 10⁶ + tokens_out × price_output / 10⁶``
(prices per million tokens, from the settings; 0 when not set).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime


@dataclass(frozen=True, slots=True)
class UsageEntry:
    at: datetime
    purpose: str  # extraction | summary | rolling | chat | other …
    agent: str
    model: str
    tokens_in: int
    tokens_out: int
    seconds: float
    outcome: str  # ok | error | over budget
    estimated: bool = False
    """True when the server did not report tokens and they were counted here."""


@dataclass(frozen=True, slots=True)
class UsageRow:
    """The totals of one day, agent, purpose and model."""

    day: date
    agent: str
    purpose: str
    model: str
    calls: int
    failed: int
    tokens_in: int
    tokens_out: int
    seconds: float
    cost: float


@dataclass(frozen=True, slots=True)
class Budget:
    """Daily limits per agent; 0 means no limit."""

    calls: int = 0
    tokens: int = 0

    def refusal(self, spent_calls: int, spent_tokens: int) -> str | None:
        """Why one more call must wait, or ``None`` when it may go."""
        if self.calls and spent_calls >= self.calls:
            return f"the daily budget of {self.calls} model calls is spent"
        if self.tokens and spent_tokens >= self.tokens:
            return f"the daily budget of {self.tokens} model tokens is spent"
        return None


def cost(tokens_in: int, tokens_out: int, price_input: float, price_output: float) -> float:
    """The estimated price of a call (see the module docstring)."""
    return tokens_in * price_input / 1e6 + tokens_out * price_output / 1e6


def spent(entries: Iterable[UsageEntry], agent: str, day: date) -> tuple[int, int]:
    """Calls that reached the model and their tokens, for ``agent`` on ``day`` (UTC)."""
    calls = tokens = 0
    for e in entries:
        if e.agent == agent and e.at.date() == day and e.outcome != "over budget":
            calls += 1
            tokens += e.tokens_in + e.tokens_out
    return calls, tokens


def totals(
    entries: Iterable[UsageEntry], *, price_input: float = 0.0, price_output: float = 0.0
) -> list[UsageRow]:
    """One row per (day, agent, purpose, model), newest day first."""
    groups: dict[tuple[date, str, str, str], list[UsageEntry]] = {}
    for e in entries:
        if e.outcome == "over budget":
            continue
        groups.setdefault((e.at.date(), e.agent, e.purpose, e.model), []).append(e)
    rows = [
        UsageRow(
            day=day,
            agent=agent,
            purpose=purpose,
            model=model,
            calls=len(group),
            failed=sum(1 for e in group if e.outcome != "ok"),
            tokens_in=sum(e.tokens_in for e in group),
            tokens_out=sum(e.tokens_out for e in group),
            seconds=sum(e.seconds for e in group),
            cost=sum(cost(e.tokens_in, e.tokens_out, price_input, price_output) for e in group),
        )
        for (day, agent, purpose, model), group in groups.items()
    ]
    rows.sort(key=lambda r: (-r.day.toordinal(), r.agent, r.purpose, r.model))
    return rows
