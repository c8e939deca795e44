"""What an agent starts from: the Brain, what a session wakes with (identity, the
``<memory>`` block, the Active Context, within their budgets), and the ``<memory>``
block for a prompt."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from kronika.server import responses
from kronika.server.deps import Name, Svc, Who
from kronika.server.views import Json

router = APIRouter(tags=["context"])


@router.get(
    "/agents/{agent}/brain",
    summary="The Brain as the agent sees it",
    response_model=responses.Brain,
)
def brain(agent: Name, who: Who, svc: Svc) -> Json:
    return svc.brain(who, agent)


@router.get(
    "/agents/{agent}/wake",
    summary="Identity, <memory> block, context",
    response_model=responses.Wake,
)
def wake(agent: Name, who: Who, svc: Svc) -> Json:
    return svc.wake(who, agent)


@router.get(
    "/agents/{agent}/prompt",
    summary="The <memory> block for a prompt",
    response_model=responses.Prompt,
)
def prompt(
    agent: Name,
    who: Who,
    svc: Svc,
    query: Annotated[str | None, Query(max_length=10_000)] = None,
) -> Json:
    return svc.prompt(who, agent, query)
