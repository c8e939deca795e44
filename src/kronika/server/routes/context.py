"""What an agent starts from: the Brain, what a session wakes with (identity, the
``<memory>`` block, the Active Context, within their budgets), and the ``<memory>``
block for a prompt."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from kronika.server.deps import Name, Svc, Who

router = APIRouter(tags=["context"])


@router.get("/agents/{agent}/brain", summary="The Brain as the agent sees it")
def brain(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.brain(who, agent)


@router.get("/agents/{agent}/wake", summary="Identity, <memory> block, context")
def wake(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.wake(who, agent)


@router.get("/agents/{agent}/prompt", summary="The <memory> block for a prompt")
def prompt(
    agent: Name,
    who: Who,
    svc: Svc,
    query: Annotated[str | None, Query(max_length=10_000)] = None,
) -> dict[str, Any]:
    return svc.prompt(who, agent, query)
