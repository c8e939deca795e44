"""The MicroDAO endpoints, kept as that design specified them (SPEC I3):
``GET /agents/{id}/memory?scope=&limit=``, ``DELETE /agents/{id}/memory/{memoryId}``
and ``POST /agents/{id}/memory/distill``.

They mirror the REST interface of the MicroDAO memory design (one of kronika's source
designs: scopes, short/mid/long-term tiers, distillation), so that agents written
against it work with kronika unchanged: the paths have no ``/v1``, ``scope`` takes
MicroDAO's tier names (``short_term``, ``mid_term``, ``long_term``) as well as the
sharing scopes, and the answers wrap kronika's own (``{"success", "receipt"}``,
``{"success", "job"}``). Each route does what its ``/v1`` counterpart does, through
the same function: forgetting is ``DELETE /v1/agents/{a}/memories/{id}``, distilling
is ``POST /v1/agents/{a}/distill``. New clients should use ``/v1``.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter

from kronika.server import responses, schemas
from kronika.server.deps import Id, Limit, Name, Svc, Who
from kronika.server.routes import jobs, memories
from kronika.server.views import Json

router = APIRouter(tags=["agents"])
MemoryScope = Literal[
    "short_term", "mid_term", "long_term", "personal", "channel", "team", "global"
]


@router.get(
    "/agents/{agent}/memory",
    summary="An agent's memory, newest first",
    response_model=responses.MemoryList,
)
def agent_memory(
    agent: Name,
    who: Who,
    svc: Svc,
    scope: MemoryScope | None = None,
    limit: Limit = 50,
) -> Json:
    """``scope``: ``short_term``, ``mid_term``, ``long_term`` (tiers) or ``personal``,
    ``channel``, ``team``, ``global``; none: everything."""
    return svc.agent_memory(who, agent, scope=scope, limit=limit)


@router.delete(
    "/agents/{agent}/memory/{memory_id}",
    summary="Forget one memory item",
    response_model=responses.Forgotten,
)
def agent_memory_delete(agent: Name, memory_id: Id, who: Who, svc: Svc) -> Json:
    receipt = memories.forget_as_asked(
        svc, who, agent, schemas.ForgetBody.model_validate({"id": memory_id})
    )
    return {"success": receipt["outcome"] == "applied", "receipt": receipt}


@router.post(
    "/agents/{agent}/memory/distill",
    summary="Distil sessions",
    status_code=202,
    response_model=responses.DistillStarted,
)
def agent_memory_distill(
    agent: Name, who: Who, svc: Svc, body: schemas.DistillBody | None = None
) -> Json:
    return {"success": True, "job": jobs.queue_distill(svc, who, agent, body)}
