"""The memory browser's charts and the recall log.

Each answers for one agent the caller may read (:meth:`~kronika.server.access.Caller.readable`:
another tenant's agent, or another agent than the key's own, is a 404) and counts only
what the caller's reading context may see (:class:`~kronika.workflows.context.ReadingContext`:
the view of the memory, the usage ledger and the policies all come from it), so a chart
never reveals an item its reader could not list:

* ``/charts/growth`` — the items kept, by the UTC day they were created, per tier and
  per type, and how many were created before the window;
* ``/charts/recalls`` — recalls per day and the items they used, from the recall log
  (:mod:`kronika.core.recall_log` says what counts for whom), with the most used items;
* ``/recall-log`` — that log as JSON, as the caller may have it (an export);
* ``/charts/llm`` — the model-usage ledger (``usage.jsonl``, as ``kronika logs usage``):
  calls, tokens and estimated cost per day and per purpose.

The token use at wake against each block's budget comes from ``/wake``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import Field

from kronika.core import charts
from kronika.core.model import ItemType
from kronika.core.policies import TIER_ORDER
from kronika.core.usage import totals
from kronika.memory import Memory
from kronika.server.deps import Name, Svc, Who
from kronika.server.responses import Answer, Number, Time
from kronika.server.views import Json
from kronika.workflows import charts as figures

Days = Annotated[
    int, Query(ge=1, le=charts.MAX_DAYS, description="days back, today included (UTC)")
]
AnyDays = Annotated[
    int | None, Query(ge=1, le=charts.MAX_DAYS, description="days back, today included (UTC)")
]
_TOP = 5
_SNIPPET = 160

router = APIRouter(tags=["charts"])


class Growth(Answer):
    agent: str
    days: list[str] = Field(description="the UTC days of the window, oldest first")
    total: int = Field(description="items kept")
    before: int = Field(description="items created before the window")
    by_tier: dict[str, list[int]] = Field(description="tier -> items created each day")
    by_type: dict[str, list[int]] = Field(description="type -> items created each day")
    tiers: list[str]


class TopItem(Answer):
    id: str
    type: ItemType
    content: str = Field(description=f"its first {_SNIPPET} characters")
    uses: int
    last_used_at: Time


class RecallUse(Answer):
    agent: str
    days: list[str]
    recalls: list[int]
    uses: list[int]
    items: list[int]
    top: list[TopItem]


class RecallEntry(Answer):
    """One recall (:class:`kronika.core.recall_log.RecallEntry`); another reader's has no
    user, channel or query."""

    at: Time
    tenant: str
    agent: str
    user: str | None
    channel: str | None
    hits: int
    item_ids: list[str]
    query: str | None


class RecallLog(Answer):
    agent: str
    recalls: list[RecallEntry]


class PurposeUse(Answer):
    purpose: str
    calls: int
    tokens_in: int
    tokens_out: int
    cost: Number


class ModelUse(Answer):
    agent: str
    days: list[str]
    calls: list[int]
    failed: list[int]
    tokens_in: list[int]
    tokens_out: list[int]
    cost: list[Number]
    priced: bool = Field(description="whether llm_price_input or llm_price_output is set")
    by_purpose: list[PurposeUse]


def _window(memory: Memory, days: int) -> list[date]:
    return charts.axis(charts.utc_day(memory.clock.now()), days)


def _labels(days: list[date]) -> list[str]:
    return [d.isoformat() for d in days]


@router.get(
    "/agents/{agent}/charts/growth", summary="Items kept, by day created", response_model=Growth
)
def chart_growth(agent: Name, who: Who, svc: Svc, days: Days = 30) -> Json:
    """The items the caller may see, by the UTC day they were created: ``by_tier`` and
    ``by_type`` give one count per day of ``days``; ``before`` counts the older ones,
    so ``before`` plus the running sum is the memory's size on each day."""
    with svc.reading(who, agent) as memory:
        window = _window(memory, days)
        found = figures.growth(memory, agent, window)
    return {
        "agent": agent,
        "days": _labels(window),
        "total": found.total,
        "before": found.before,
        "by_tier": found.by_tier,
        "by_type": found.by_type,
        "tiers": [t.value for t in TIER_ORDER],
    }


@router.get(
    "/agents/{agent}/charts/recalls", summary="Recall use per day", response_model=RecallUse
)
def chart_recalls(agent: Name, who: Who, svc: Svc, days: Days = 30) -> Json:
    """From the recall log, per day: ``recalls`` that count for the caller (its own, and
    any that used an item it may see), ``uses`` of items it may see and distinct
    ``items`` used; ``top``: the items it may see that were used most in the window."""
    with svc.reading(who, agent) as memory:
        window = _window(memory, days)
        found = figures.recall_use(memory, agent, window, top=_TOP)
    return {
        "agent": agent,
        "days": _labels(window),
        "recalls": found.recalls,
        "uses": found.uses,
        "items": found.items,
        "top": [
            {
                "id": t.item.id,
                "type": t.item.type.value,
                "content": t.item.content[:_SNIPPET],
                "uses": t.uses,
                "last_used_at": t.last_used_at.isoformat(),
            }
            for t in found.top
        ],
    }


@router.get(
    "/agents/{agent}/recall-log", summary="The recall log, as JSON", response_model=RecallLog
)
def recall_log(agent: Name, who: Who, svc: Svc, days: AnyDays = None) -> Json:
    """Every recall of the agent that counts for the caller (the whole log when ``days``
    is not given: it keeps ``recall_log_days``), oldest first: the caller's own recalls
    whole (their query only when ``recall_log_queries`` kept it), another reader's with
    no user, channel or query and only the item ids the caller may see."""
    with svc.reading(who, agent) as memory:
        since = None
        if days is not None:
            since = datetime.combine(_window(memory, days)[0], datetime.min.time(), tzinfo=UTC)
        entries = figures.recall_entries(memory, agent, since)
    return {"agent": agent, "recalls": [e.as_dict() for e in entries]}


@router.get(
    "/agents/{agent}/charts/llm", summary="Model usage per day, purpose", response_model=ModelUse
)
def chart_llm(agent: Name, who: Who, svc: Svc, days: Days = 30) -> Json:
    """The agent's model calls from the usage ledger (those a daily budget held back
    are not counted, as in ``kronika logs usage``); ``cost`` uses ``llm_price_input`` and
    ``llm_price_output`` (0 when they are not set: ``priced`` is false then)."""
    with svc.reading(who, agent) as memory:
        s = memory.settings
        window = _window(memory, days)
        since = datetime.combine(window[0], datetime.min.time(), tzinfo=UTC)
        entries = who.context.usage(memory, agent, since)
    rows = totals(entries, price_input=s.llm_price_input, price_output=s.llm_price_output)
    per_day = charts.usage_per_day(rows, window)
    return {
        "agent": agent,
        "days": _labels(window),
        "calls": [d.calls for d in per_day],
        "failed": [d.failed for d in per_day],
        "tokens_in": [d.tokens_in for d in per_day],
        "tokens_out": [d.tokens_out for d in per_day],
        "cost": [round(d.cost, 6) for d in per_day],
        "priced": bool(s.llm_price_input or s.llm_price_output),
        "by_purpose": [
            {
                "purpose": p.purpose,
                "calls": p.calls,
                "tokens_in": p.tokens_in,
                "tokens_out": p.tokens_out,
                "cost": round(p.cost, 6),
            }
            for p in charts.usage_per_purpose(rows)
        ],
    }
