"""Finding what is remembered: recall (its query embedded together with the recalls
that arrive with it, :mod:`kronika.server.batching`), the history of a fact key, and
the facts."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from kronika.server import responses, schemas
from kronika.server.deps import Name, Svc, Who
from kronika.server.views import Json

router = APIRouter(tags=["recall"])


@router.post(
    "/agents/{agent}/recall",
    summary="Find the best matching memories",
    response_model=responses.Recall,
    response_model_exclude_unset=True,
)
async def recall(agent: Name, body: schemas.RecallBody, who: Who, svc: Svc) -> Json:
    return await svc.recall_batched(who, body.recall_query(agent), explain=body.explain)


@router.get(
    "/agents/{agent}/history",
    summary="Every value a fact key has had",
    response_model=responses.History,
)
def history(
    agent: Name, key: Annotated[str, Query(min_length=1, max_length=200)], who: Who, svc: Svc
) -> Json:
    return svc.history(who, agent, key)


@router.get("/agents/{agent}/facts", response_model=responses.Facts)
def facts(agent: Name, who: Who, svc: Svc, include_archived: bool = True) -> Json:
    return svc.facts(who, agent, include_archived=include_archived)
