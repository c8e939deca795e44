"""The routes of the memory browser's charts and its policies view.

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
* ``/charts/llm`` — the model-usage ledger (``usage.jsonl``, as ``kronika usage``):
  calls, tokens and estimated cost per day and per purpose;
* ``/policies`` — the storage policies that can apply to the agent (as
  ``kronika policies``); an admin key of the whole tenant may replace them (``PUT``,
  :mod:`kronika.workflows.policy_edit`: ``kronika.toml`` rewritten, the rest of it kept).

The token use at wake against each block's budget comes from ``/wake``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from kronika.core import charts
from kronika.core.policies import TIER_ORDER
from kronika.core.usage import totals
from kronika.memory import Memory
from kronika.server.access import Caller
from kronika.server.deps import Name, Svc, Who
from kronika.server.keys import Role
from kronika.server.openapi import BODY_REQUIRED
from kronika.settings import CONFIG_FILE
from kronika.workflows import charts as figures
from kronika.workflows import policy_edit

Days = Annotated[
    int, Query(ge=1, le=charts.MAX_DAYS, description="days back, today included (UTC)")
]
AnyDays = Annotated[
    int | None, Query(ge=1, le=charts.MAX_DAYS, description="days back, today included (UTC)")
]
_TOP = 5
_SNIPPET = 160

router = APIRouter()
"""The chart, recall-log and policy routes, included under ``/v1``."""


def _window(memory: Memory, days: int) -> list[date]:
    return charts.axis(charts.utc_day(memory.clock.now()), days)


def _labels(days: list[date]) -> list[str]:
    return [d.isoformat() for d in days]


@router.get("/agents/{agent}/charts/growth", tags=["charts"], summary="Items kept, by day created")
def chart_growth(agent: Name, who: Who, svc: Svc, days: Days = 30) -> dict[str, Any]:
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


@router.get("/agents/{agent}/charts/recalls", tags=["charts"], summary="Recall use per day")
def chart_recalls(agent: Name, who: Who, svc: Svc, days: Days = 30) -> dict[str, Any]:
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


@router.get("/agents/{agent}/recall-log", tags=["charts"], summary="The recall log, as JSON")
def recall_log(agent: Name, who: Who, svc: Svc, days: AnyDays = None) -> dict[str, Any]:
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


@router.get("/agents/{agent}/charts/llm", tags=["charts"], summary="Model usage per day, purpose")
def chart_llm(agent: Name, who: Who, svc: Svc, days: Days = 30) -> dict[str, Any]:
    """The agent's model calls from the usage ledger (those a daily budget held back
    are not counted, as in ``kronika usage``); ``cost`` uses ``llm_price_input`` and
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


@router.get("/agents/{agent}/policies", tags=["policies"], summary="Storage policies in force")
def policies(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    """Retention per tier, what a direct message is, and the ``[[policy]]`` rules whose
    ``tenants`` and ``agents`` can match this agent (another tenant's or agent's rules
    are not shown). A rule is shown from the caller's side
    (:meth:`~kronika.core.policies.StorageRule.seen_from`): its ``tenants`` and ``agents``,
    and its ``applies_to`` words, name this tenant and this agent only, never the others
    it lists. ``editable``: whether this key may change them (``PUT``); then ``toml`` is
    their tables as ``kronika.toml`` has them, otherwise ``not_editable`` says why."""
    with svc.reading(who, agent) as memory:
        found = memory.settings.storage_policies
        refused = _why_not_editable(memory, who)
        toml = policy_edit.section_text(memory) if refused is None else None
    return {
        "agent": agent,
        "edited_in": CONFIG_FILE,
        "dm_channels": list(found.dm_channels),
        "retention_days": {tier.value: found.retention.get(tier) for tier in TIER_ORDER},
        "policies": who.context.policies(memory, agent),
        "editable": refused is None,
        "not_editable": refused,
        "toml": toml,
    }


def _why_not_editable(memory: Memory, who: Caller) -> str | None:
    if who.key.role is not Role.ADMIN or not who.unrestricted:
        return "changing the storage policies needs an admin key of the whole tenant"
    return policy_edit.why_not_editable(memory, who.tenant)


class PoliciesBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    toml: str = Field(
        max_length=100_000,
        description="the [retention] and [[policy]] tables, as kronika.toml holds them",
    )


@router.put(
    "/agents/{agent}/policies",
    tags=["policies"],
    summary="Change the storage policies",
    openapi_extra={BODY_REQUIRED: True},
)
def edit_policies(
    agent: Name, who: Who, svc: Svc, body: PoliciesBody | None = None
) -> dict[str, Any]:
    """Replace the ``[retention]`` and ``[[policy]]`` tables of ``kronika.toml`` with
    ``toml`` (an admin key of the whole tenant; 403 otherwise, or when the file serves
    other tenants too): checked as loading the file checks them (422 naming the line),
    written at once with the rest of the file unchanged, applied to every write from
    then on, audited. Answers as ``GET``. Access is decided before the body is read, as
    on every write: a reader key is told it may only read, an agent out of reach is a
    404 whatever was sent."""
    svc.edit_policies(who, agent, body.toml if body is not None else None)
    return policies(agent, who, svc)
