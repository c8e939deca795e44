"""What an agent learns: outcomes that become lessons, and the lessons.

``POST /v1/agents/{agent}/outcomes`` is :meth:`Memory.record_outcome` over HTTP: the
outcome and the lessons drawn from it are for the caller's audience (the key's
tenant, ``X-Kronika-User``, the body's scope and channel), written as the key's agent.
It runs in a pool thread, since a configured model may be asked to write the lesson.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool

from kronika.server import responses, schemas
from kronika.server.deps import Name, Svc, Who
from kronika.server.views import Json

router = APIRouter(tags=["lessons"])


@router.get(
    "/agents/{agent}/lessons", summary="What the agent learned", response_model=responses.Lessons
)
def lessons(agent: Name, who: Who, svc: Svc, include_retired: bool = False) -> Json:
    return svc.lessons(who, agent, include_retired=include_retired)


@router.post(
    "/agents/{agent}/outcomes",
    status_code=201,
    summary="Record how an action went; failures become lessons",
    response_model=responses.OutcomeReport,
)
async def outcome(agent: Name, body: schemas.OutcomeBody, who: Who, svc: Svc) -> Json:
    return await run_in_threadpool(svc.outcome, who, agent, **body.model_dump())
