"""Memory jobs, run in the background: distillation and every job ``kronika jobs run``
runs (``decay``, ``reflect``, ``dream``, ``summarize``, ``distill``), queued (202) and
read back with ``GET /v1/jobs/{id}``; an interrupted job can be started again."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path

from kronika.server import responses, schemas
from kronika.server.access import Caller
from kronika.server.deps import Id, Name, Svc, Who
from kronika.server.service import Service
from kronika.server.views import Json

router = APIRouter(tags=["jobs"])
JobName = Annotated[Literal["decay", "reflect", "dream", "summarize", "distill"], Path()]


def queue(svc: Service, who: Caller, agent: str, job: str, asked: schemas.JobBody | None) -> Json:
    """Queue ``job`` for ``agent`` as asked: what every route that starts a job does."""
    given = asked or schemas.JobBody()
    return svc.run_job(who, agent, job, days=given.days, mode=given.mode, clear=given.clear)


def queue_distill(svc: Service, who: Caller, agent: str, asked: schemas.DistillBody | None) -> Json:
    """Distil ``agent``'s sessions of the last ``days`` days: ``POST /v1/agents/{a}/distill``
    and the MicroDAO ``POST /agents/{a}/memory/distill``, as
    ``POST /v1/agents/{a}/jobs/distill`` with that ``days``."""
    return queue(svc, who, agent, "distill", schemas.JobBody(days=asked.days) if asked else None)


@router.post("/agents/{agent}/distill", status_code=202, response_model=responses.Job)
def distill(agent: Name, who: Who, svc: Svc, body: schemas.DistillBody | None = None) -> Json:
    return queue_distill(svc, who, agent, body)


@router.post(
    "/agents/{agent}/jobs/{job}",
    status_code=202,
    summary="Run a memory job: decay, reflect, dream, summarize, distill",
    response_model=responses.Job,
)
def run_job(
    agent: Name, job: JobName, who: Who, svc: Svc, body: schemas.JobBody | None = None
) -> Json:
    return queue(svc, who, agent, job, body)


@router.get("/jobs", response_model=responses.Jobs)
def jobs(who: Who, svc: Svc) -> Json:
    return svc.job_list(who)


@router.get("/jobs/{job_id}", response_model=responses.Job)
def job(job_id: Id, who: Who, svc: Svc) -> Json:
    return svc.job(who, job_id)


@router.post(
    "/jobs/{job_id}/resume",
    status_code=202,
    summary="Start an interrupted job again, as a new job",
    response_model=responses.Job,
)
def resume_job(job_id: Id, who: Who, svc: Svc) -> Json:
    return svc.resume(who, job_id)
