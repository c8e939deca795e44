"""The routes of learning: outcomes that become lessons, and every memory job.

``POST /v1/agents/{agent}/outcomes`` is :meth:`Memory.record_outcome` over HTTP: the
outcome and the lessons drawn from it are for the caller's audience (the key's
tenant, ``X-Kronika-User``, the body's scope and channel), written as the key's agent.
It runs in a pool thread, since a configured model may be asked to write the lesson.

``POST /v1/agents/{agent}/jobs/{job}`` queues ``decay``, ``reflect``, ``dream``,
``summarize`` or ``distill`` as ``kronika jobs run`` does, and answers at once with the
job, whose status ``GET /v1/jobs/{id}`` reads.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path
from fastapi.concurrency import run_in_threadpool

from kronika.server import schemas
from kronika.server.deps import Name, Svc, Who

router = APIRouter()
JobName = Annotated[Literal["decay", "reflect", "dream", "summarize", "distill"], Path()]


@router.post(
    "/agents/{agent}/outcomes",
    tags=["lessons"],
    status_code=201,
    summary="Record how an action went; failures become lessons",
)
async def outcome(agent: Name, body: schemas.OutcomeBody, who: Who, svc: Svc) -> dict[str, Any]:
    return await run_in_threadpool(svc.outcome, who, agent, **body.model_dump())


@router.post(
    "/agents/{agent}/jobs/{job}",
    tags=["jobs"],
    status_code=202,
    summary="Run a memory job: decay, reflect, dream, summarize, distill",
)
def run_job(
    agent: Name, job: JobName, who: Who, svc: Svc, body: schemas.JobBody | None = None
) -> dict[str, Any]:
    given = body or schemas.JobBody()
    return svc.run_job(who, agent, job, days=given.days, mode=given.mode, clear=given.clear)
