"""An agent's memory items: remembering a fact, retaining a note, listing and reading
items, and forgetting (one item by id, or by key, value or topic, with a receipt)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from kronika.server import responses, schemas
from kronika.server.access import Caller
from kronika.server.deps import Id, Limit, Name, Svc, Who
from kronika.server.service import Service
from kronika.server.views import Json

router = APIRouter(tags=["memories"])


@router.post(
    "/agents/{agent}/memories", summary="Remember a fact", response_model=responses.WriteReceipt
)
def remember(agent: Name, body: schemas.RememberBody, who: Who, svc: Svc) -> Json:
    return svc.remember(who, agent, **body.model_dump())


@router.post(
    "/agents/{agent}/notes",
    summary="Retain a note in today's log",
    response_model=responses.WriteReceipt,
)
def note(agent: Name, body: schemas.NoteBody, who: Who, svc: Svc) -> Json:
    return svc.note(who, agent, **body.model_dump())


@router.get(
    "/agents/{agent}/memories",
    summary="Stored items, newest first",
    response_model=responses.Items,
)
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
) -> Json:
    return svc.items(
        who, agent, types=type or (), include_superseded=include_superseded, limit=limit,
        offset=offset,
    )  # fmt: skip


@router.get("/agents/{agent}/memories/{item_id}", response_model=responses.Item)
def get_item(agent: Name, item_id: Id, who: Who, svc: Svc) -> Json:
    return svc.get(who, agent, item_id)


def forget_as_asked(svc: Service, who: Caller, agent: str, asked: schemas.ForgetBody) -> Json:
    """Forget what ``asked`` names, with the receipt: what every forgetting route does
    (``DELETE …/memories/{id}`` and the MicroDAO ``DELETE /agents/{a}/memory/{id}`` are
    ``POST …/forget {"id": id}``)."""
    return svc.forget(
        who, agent, item_id=asked.id, key=asked.key, value=asked.value, topic=asked.topic,
        dry_run=asked.dry_run,
    )  # fmt: skip


@router.delete(
    "/agents/{agent}/memories/{item_id}",
    summary="Forget one item",
    response_model=responses.ForgetReceipt,
)
def delete_item(agent: Name, item_id: Id, who: Who, svc: Svc) -> Json:
    return forget_as_asked(svc, who, agent, schemas.ForgetBody.model_validate({"id": item_id}))


@router.post(
    "/agents/{agent}/forget",
    summary="Forget, with a receipt",
    response_model=responses.ForgetReceipt,
)
def forget(agent: Name, body: schemas.ForgetBody, who: Who, svc: Svc) -> Json:
    return forget_as_asked(svc, who, agent, body)
