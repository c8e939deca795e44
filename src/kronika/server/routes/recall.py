"""Finding what is remembered: recall (its query embedded together with the recalls
that arrive with it, :mod:`kronika.server.batching`), the history of a fact key, and
the facts."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from kronika.server import schemas
from kronika.server.deps import Name, Svc, Who

router = APIRouter(tags=["recall"])


@router.post("/agents/{agent}/recall", summary="Find the best matching memories")
async def recall(agent: Name, body: schemas.RecallBody, who: Who, svc: Svc) -> dict[str, Any]:
    options = body.model_dump(exclude={"query"})
    return await svc.recall_batched(who, agent, body.query, **options)


@router.get("/agents/{agent}/history", summary="Every value a fact key has had")
def history(
    agent: Name, key: Annotated[str, Query(min_length=1, max_length=200)], who: Who, svc: Svc
) -> dict[str, Any]:
    return svc.history(who, agent, key)


@router.get("/agents/{agent}/facts")
def facts(agent: Name, who: Who, svc: Svc, include_archived: bool = True) -> dict[str, Any]:
    return svc.facts(who, agent, include_archived=include_archived)
