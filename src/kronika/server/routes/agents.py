"""``/v1/agents``: the agents the key may use, and making a new one (an admin key of
the whole tenant; a name taken by any tenant of the workspace is a 409)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from kronika.server import schemas
from kronika.server.deps import Svc, Who

router = APIRouter(tags=["agents"])


@router.get("/agents")
def agents(who: Who, svc: Svc) -> dict[str, Any]:
    return svc.agents(who)


@router.post("/agents", status_code=201)
def create_agent(body: schemas.AgentBody, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.create_agent(who, body.name)
