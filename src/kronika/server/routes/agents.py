"""``/v1/agents``: the agents the key may use, and making a new one (an admin key of
the whole tenant; a name taken by any tenant of the workspace is a 409)."""

from __future__ import annotations

from fastapi import APIRouter

from kronika.server import responses, schemas
from kronika.server.deps import Svc, Who
from kronika.server.views import Json

router = APIRouter(tags=["agents"])


@router.get("/agents", response_model=responses.Agents)
def agents(who: Who, svc: Svc) -> Json:
    return svc.agents(who)


@router.post(
    "/agents",
    status_code=201,
    response_model=responses.AgentCreated,
)
def create_agent(body: schemas.AgentBody, who: Who, svc: Svc) -> Json:
    return svc.create_agent(who, body.name)
