"""The REST routes: the MicroDAO endpoints (``/agents/{id}/memory…``) and ``/v1``.

Each route is one line of :class:`~kronika.server.service.Service`; the caller comes
from the request's key (:func:`~kronika.server.deps.caller`).

The routes call the memory in the server's pool of threads (plain ``def`` routes, or
``run_in_threadpool``), never on the event loop's thread: a call that takes long (a
big export, a recall over large items, a write waiting for the workspace lock) must
not stop ``/healthz`` or any other request from being answered meanwhile. Calls to one
memory still run one at a time (:class:`~kronika.server.service.Service` holds its
lock). Only a recall's query embedding stays on the loop, where it is batched with
the queries of the recalls that arrived with it (:mod:`kronika.server.batching`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool

from kronika.server import schemas
from kronika.server.deps import Id, Name, Svc, Who

Limit = Annotated[int, Query(ge=1, le=1000)]
MemoryScope = Literal[
    "short_term", "mid_term", "long_term", "personal", "channel", "team", "global"
]
microdao = APIRouter(tags=["agents"])
v1 = APIRouter(prefix="/v1")


# --------------------------------------------------------------------- MicroDAO
@microdao.get("/agents/{agent}/memory", summary="An agent's memory, newest first")
def agent_memory(
    agent: Name,
    who: Who,
    svc: Svc,
    scope: MemoryScope | None = None,
    limit: Limit = 50,
) -> dict[str, Any]:
    """``scope``: ``short_term``, ``mid_term``, ``long_term`` (tiers) or ``personal``,
    ``channel``, ``team``, ``global``; none: everything."""
    return svc.agent_memory(who, agent, scope=scope, limit=limit)


@microdao.delete("/agents/{agent}/memory/{memory_id}", summary="Forget one memory item")
def agent_memory_delete(agent: Name, memory_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    receipt = svc.forget(who, agent, item_id=memory_id)
    return {"success": receipt["outcome"] == "applied", "receipt": receipt}


@microdao.post("/agents/{agent}/memory/distill", summary="Distil sessions", status_code=202)
def agent_memory_distill(
    agent: Name, who: Who, svc: Svc, body: schemas.DistillBody | None = None
) -> dict[str, Any]:
    job = svc.distill(who, agent, body.days if body else schemas.DEFAULT_DAYS)
    return {"success": True, "job": job}


# --------------------------------------------------------------------------- v1
@v1.get("/me", tags=["keys"], summary="What this API key is")
def me(who: Who) -> dict[str, Any]:
    key = who.key
    bound = {"user": key.user, "channels": list(key.channels), "teams": key.teams}
    return {
        "id": key.id,
        "tenant": key.tenant,
        "role": key.role.value,
        "agent": key.agent,
        "bound": key.bound,
        **(bound if key.bound else {}),
    }


@v1.get("/agents", tags=["agents"])
def agents(who: Who, svc: Svc) -> dict[str, Any]:
    return svc.agents(who)


@v1.post("/agents", tags=["agents"], status_code=201)
def create_agent(body: schemas.AgentBody, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.create_agent(who, body.name)


@v1.post("/agents/{agent}/memories", tags=["memories"], summary="Remember a fact")
def remember(agent: Name, body: schemas.RememberBody, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.remember(who, agent, **body.model_dump())


@v1.post("/agents/{agent}/notes", tags=["memories"], summary="Retain a note in today's log")
def note(agent: Name, body: schemas.NoteBody, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.note(who, agent, **body.model_dump())


@v1.get("/agents/{agent}/memories", tags=["memories"], summary="Stored items, newest first")
def items(
    agent: Name,
    who: Who,
    svc: Svc,
    type: Annotated[
        list[schemas.ItemTypeName] | None,
        Query(max_length=10),
    ] = None,
    include_superseded: bool = False,
    limit: Limit = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> dict[str, Any]:
    return svc.items(
        who, agent, types=type or (), include_superseded=include_superseded, limit=limit,
        offset=offset,
    )  # fmt: skip


@v1.get("/agents/{agent}/memories/{item_id}", tags=["memories"])
def get_item(agent: Name, item_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.get(who, agent, item_id)


@v1.delete("/agents/{agent}/memories/{item_id}", tags=["memories"], summary="Forget one item")
def delete_item(agent: Name, item_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.forget(who, agent, item_id=item_id)


@v1.post("/agents/{agent}/forget", tags=["memories"], summary="Forget, with a receipt")
def forget(agent: Name, body: schemas.ForgetBody, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.forget(
        who, agent, item_id=body.id, key=body.key, value=body.value, topic=body.topic,
        dry_run=body.dry_run,
    )  # fmt: skip


@v1.post("/agents/{agent}/recall", tags=["recall"], summary="Find the best matching memories")
async def recall(agent: Name, body: schemas.RecallBody, who: Who, svc: Svc) -> dict[str, Any]:
    options = body.model_dump(exclude={"query"})
    return await svc.recall_batched(who, agent, body.query, **options)


@v1.get("/agents/{agent}/history", tags=["recall"], summary="Every value a fact key has had")
def history(
    agent: Name, key: Annotated[str, Query(min_length=1, max_length=200)], who: Who, svc: Svc
) -> dict[str, Any]:
    return svc.history(who, agent, key)


@v1.get("/agents/{agent}/facts", tags=["recall"])
def facts(agent: Name, who: Who, svc: Svc, include_archived: bool = True) -> dict[str, Any]:
    return svc.facts(who, agent, include_archived=include_archived)


@v1.get("/agents/{agent}/brain", tags=["context"], summary="The Brain as the agent sees it")
def brain(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.brain(who, agent)


@v1.get("/agents/{agent}/wake", tags=["context"], summary="Identity, <memory> block, context")
def wake(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.wake(who, agent)


@v1.get("/agents/{agent}/prompt", tags=["context"], summary="The <memory> block for a prompt")
def prompt(
    agent: Name,
    who: Who,
    svc: Svc,
    query: Annotated[str | None, Query(max_length=10_000)] = None,
) -> dict[str, Any]:
    return svc.prompt(who, agent, query)


@v1.get("/agents/{agent}/sessions", tags=["sessions"])
def sessions(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.sessions(who, agent)


@v1.get("/agents/{agent}/sessions/{session_id}", tags=["sessions"])
def session(agent: Name, session_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.session(who, agent, session_id)


@v1.post(
    "/agents/{agent}/sessions/{session_id}/turns",
    tags=["sessions"],
    status_code=201,
    response_model=schemas.TurnReceipt,
)
def save_turn(
    agent: Name, session_id: Id, body: schemas.TurnBody, who: Who, svc: Svc
) -> dict[str, Any]:
    return svc.save_turn(
        who, agent, session_id, speaker=body.speaker, content=body.content, at=body.at,
        turn_id=body.turn_id, scope=body.scope, channel=body.channel,
    )  # fmt: skip


@v1.get("/agents/{agent}/proposals", tags=["proposals"])
def proposals(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.proposals(who, agent)


@v1.post("/agents/{agent}/proposals/{proposal_id}/approve", tags=["proposals"])
def approve(agent: Name, proposal_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.settle(who, agent, proposal_id, "approve")


@v1.post("/agents/{agent}/proposals/{proposal_id}/reject", tags=["proposals"])
def reject(agent: Name, proposal_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.settle(who, agent, proposal_id, "reject")


@v1.get("/agents/{agent}/audit", tags=["audit"])
def agent_audit(
    agent: Name, who: Who, svc: Svc, limit: Annotated[int, Query(ge=1, le=100_000)] = 100
) -> dict[str, Any]:
    return svc.audit(who, agent, limit)


@v1.get("/audit", tags=["audit"], summary="The audit trail of every agent")
def audit(
    who: Who, svc: Svc, limit: Annotated[int, Query(ge=1, le=100_000)] = 100
) -> dict[str, Any]:
    return svc.audit(who, None, limit)


@v1.post("/agents/{agent}/distill", tags=["jobs"], status_code=202)
def distill(
    agent: Name, who: Who, svc: Svc, body: schemas.DistillBody | None = None
) -> dict[str, Any]:
    return svc.distill(who, agent, body.days if body else schemas.DEFAULT_DAYS)


@v1.get("/jobs", tags=["jobs"])
def jobs(who: Who, svc: Svc) -> dict[str, Any]:
    return svc.job_list(who)


@v1.get("/jobs/{job_id}", tags=["jobs"])
def job(job_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.job(who, job_id)


@v1.post(
    "/jobs/{job_id}/resume",
    tags=["jobs"],
    status_code=202,
    summary="Start an interrupted job again, as a new job",
)
def resume_job(job_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.resume(who, job_id)


@v1.get("/export", tags=["export"], summary="Everything kept, as one JSON document")
async def export(
    who: Who, svc: Svc, agent: Annotated[str | None, Query(min_length=1, max_length=100)] = None
) -> dict[str, Any]:
    return await run_in_threadpool(svc.export, who, agent)


@v1.post("/import", tags=["export"], summary="Restore an export document")
async def import_(body: schemas.ImportBody, who: Who, svc: Svc) -> dict[str, Any]:
    return await run_in_threadpool(svc.import_export, who, body.document, replace=body.replace)


@v1.get("/stats", tags=["stats"])
def stats(who: Who, svc: Svc) -> dict[str, Any]:
    return svc.stats(who)


@v1.get("/agents/{agent}/lessons", tags=["lessons"], summary="What the agent learned")
def lessons(agent: Name, who: Who, svc: Svc, include_retired: bool = False) -> dict[str, Any]:
    return svc.lessons(who, agent, include_retired=include_retired)
