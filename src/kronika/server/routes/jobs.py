"""Memory jobs, run in the background: distillation and every job ``kronika jobs run``
runs (``decay``, ``reflect``, ``dream``, ``summarize``, ``distill``), queued (202) and
read back with ``GET /v1/jobs/{id}``; an interrupted job can be started again."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path

from kronika.server import schemas
from kronika.server.deps import Id, Name, Svc, Who

router = APIRouter(tags=["jobs"])
JobName = Annotated[Literal["decay", "reflect", "dream", "summarize", "distill"], Path()]


@router.post("/agents/{agent}/distill", status_code=202)
def distill(
    agent: Name, who: Who, svc: Svc, body: schemas.DistillBody | None = None
) -> dict[str, Any]:
    return svc.distill(who, agent, body.days if body else schemas.DEFAULT_DAYS)


@router.post(
    "/agents/{agent}/jobs/{job}",
    status_code=202,
    summary="Run a memory job: decay, reflect, dream, summarize, distill",
)
def run_job(
    agent: Name, job: JobName, who: Who, svc: Svc, body: schemas.JobBody | None = None
) -> dict[str, Any]:
    given = body or schemas.JobBody()
    return svc.run_job(who, agent, job, days=given.days, mode=given.mode, clear=given.clear)


@router.get("/jobs")
def jobs(who: Who, svc: Svc) -> dict[str, Any]:
    return svc.job_list(who)


@router.get("/jobs/{job_id}")
def job(job_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.job(who, job_id)


@router.post(
    "/jobs/{job_id}/resume",
    status_code=202,
    summary="Start an interrupted job again, as a new job",
)
def resume_job(job_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.resume(who, job_id)
