"""Read-only routes for the memory browser's charts and its policies view.

Each answers for one agent the caller may read (:meth:`~kronika.server.access.Caller.readable`:
another tenant's agent, or another agent than the key's own, is a 404) and counts only
what the caller's reading context may see (:func:`~kronika.server.access.reading`), so
a chart never reveals an item its reader could not list:

* ``/charts/growth`` — the items kept, by the UTC day they were created, per tier and
  per type, and how many were created before the window;
* ``/charts/recalls`` — prompts built in conversations per day (``lesson_uses.jsonl``,
  one line per prompt, each carrying a recall) and items by the day of their last
  recall (the index's usage statistics), with the most recalled items;
* ``/charts/llm`` — the model-usage ledger (``usage.jsonl``, as ``kronika usage``):
  calls, tokens and estimated cost per day and per purpose;
* ``/policies`` — the storage policies that can apply to the agent (as
  ``kronika policies``). They are edited in ``kronika.toml`` only: no route writes them.

The token use at wake against each block's budget comes from ``/wake``.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import Query

from kronika.app import USAGE_FILE
from kronika.core import charts
from kronika.core.model import MemoryItem
from kronika.core.policies import TIER_ORDER, may_apply
from kronika.core.usage import totals
from kronika.memory import Memory
from kronika.server.routes import Name, Svc, Who, v1
from kronika.settings import CONFIG_FILE
from kronika.stores.usage import LESSON_USES_FILE, JsonlLessonUses, JsonlUsageLedger

Days = Annotated[
    int, Query(ge=1, le=charts.MAX_DAYS, description="days back, today included (UTC)")
]
_PAGE = 1000
_TOP = 5
_SNIPPET = 160


def _window(memory: Memory, days: int) -> list[date]:
    return charts.axis(charts.utc_day(memory.clock.now()), days)


def _pages(memory: Memory, agent: str) -> Iterator[list[MemoryItem]]:
    """The items the memory's reader may see, newest first, a page at a time."""
    offset = 0
    while True:
        page = memory.items(agent=agent, limit=_PAGE, offset=offset)
        if page:
            yield page
        if len(page) < _PAGE:
            return
        offset += _PAGE


def _labels(days: list[date]) -> list[str]:
    return [d.isoformat() for d in days]


@v1.get("/agents/{agent}/charts/growth", tags=["charts"], summary="Items kept, by day created")
async def chart_growth(agent: Name, who: Who, svc: Svc, days: Days = 30) -> dict[str, Any]:
    """The items the caller may see, by the UTC day they were created: ``by_tier`` and
    ``by_type`` give one count per day of ``days``; ``before`` counts the older ones,
    so ``before`` plus the running sum is the memory's size on each day."""
    with svc.reading(who, agent) as memory:
        window = _window(memory, days)
        first = window[0]
        recent: list[MemoryItem] = []
        for page in _pages(memory, agent):
            recent += [i for i in page if charts.utc_day(i.created_at) >= first]
            if charts.utc_day(page[-1].created_at) < first:
                break  # newest first: the rest is older still
        total = memory.count(agent=agent)
    return {
        "agent": agent,
        "days": _labels(window),
        "total": total,
        "before": total - len(recent),
        "by_tier": charts.per_day_by(((i.created_at, i.tier.value) for i in recent), window),
        "by_type": charts.per_day_by(((i.created_at, i.type.value) for i in recent), window),
        "tiers": [t.value for t in TIER_ORDER],
    }


@v1.get("/agents/{agent}/charts/recalls", tags=["charts"], summary="Recall use per day")
async def chart_recalls(agent: Name, who: Who, svc: Svc, days: Days = 30) -> dict[str, Any]:
    """``prompts``: prompts built in the agent's conversations per day (each recalls for
    the turn); ``last_recalled``: the items the caller may see by the day they were last
    recalled; ``recalls``: how often those items were recalled in all; ``top``: the most
    recalled of them."""
    with svc.reading(who, agent) as memory:
        window = _window(memory, days)
        used: list[MemoryItem] = []
        for page in _pages(memory, agent):
            used += [i for i in page if i.access_count]
        prompts = _prompt_moments(memory.settings.home / LESSON_USES_FILE, agent)
    top = heapq.nlargest(
        _TOP, used, key=lambda i: (i.access_count, i.last_accessed_at or i.created_at)
    )
    return {
        "agent": agent,
        "days": _labels(window),
        "prompts": charts.per_day(prompts, window),
        "last_recalled": charts.per_day(
            (i.last_accessed_at for i in used if i.last_accessed_at is not None), window
        ),
        "recalled_items": len(used),
        "recalls": sum(i.access_count for i in used),
        "top": [
            {
                "id": i.id,
                "type": i.type.value,
                "content": i.content[:_SNIPPET],
                "recalls": i.access_count,
                "last_recalled_at": i.last_accessed_at.isoformat() if i.last_accessed_at else None,
            }
            for i in top
        ],
    }


def _prompt_moments(path: Path, agent: str) -> list[datetime]:
    moments = []
    for row in JsonlLessonUses(path).read():
        if row.get("agent") != agent or not isinstance(row.get("at"), str):
            continue
        try:
            moments.append(datetime.fromisoformat(str(row["at"])))
        except ValueError:
            continue  # a torn or foreign line: the log is a statistic, skip it
    return moments


@v1.get("/agents/{agent}/charts/llm", tags=["charts"], summary="Model usage per day, purpose")
async def chart_llm(agent: Name, who: Who, svc: Svc, days: Days = 30) -> dict[str, Any]:
    """The agent's model calls from the usage ledger (those a daily budget held back
    are not counted, as in ``kronika usage``); ``cost`` uses ``llm_price_input`` and
    ``llm_price_output`` (0 when they are not set: ``priced`` is false then)."""
    with svc.reading(who, agent) as memory:
        s = memory.settings
        window = _window(memory, days)
        since = datetime.combine(window[0], datetime.min.time(), tzinfo=UTC)
        entries = [e for e in JsonlUsageLedger(s.home / USAGE_FILE).read(since) if e.agent == agent]
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


@v1.get("/agents/{agent}/policies", tags=["policies"], summary="Storage policies in force")
async def policies(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    """Retention per tier, what a direct message is, and the ``[[policy]]`` rules whose
    ``tenants`` and ``agents`` can match this agent (another tenant's or agent's rules
    are not shown). A rule is shown from the caller's side
    (:meth:`~kronika.core.policies.StorageRule.seen_from`): its ``tenants`` and ``agents``,
    and its ``applies_to`` words, name this tenant and this agent only, never the others
    it lists. Read-only: they are edited in ``kronika.toml``."""
    with svc.reading(who, agent) as memory:
        found = memory.settings.storage_policies
    return {
        "agent": agent,
        "edited_in": CONFIG_FILE,
        "dm_channels": list(found.dm_channels),
        "retention_days": {tier.value: found.retention.get(tier) for tier in TIER_ORDER},
        "policies": [
            rule.seen_from(who.tenant, [agent]).as_dict()
            for rule in found.rules
            if may_apply(rule, who.tenant, agent)
        ],
    }
