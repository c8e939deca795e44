"""Conversations: the sessions whose turns the reader may see, one session's turns,
and saving a turn (``save_turn``: applied, proposed at autonomy 1, or refused by a
storage policy). A session's summary is with the pages (:mod:`.pages`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from kronika.server import schemas
from kronika.server.deps import Id, Name, Svc, Who

router = APIRouter(tags=["sessions"])


@router.get("/agents/{agent}/sessions")
def sessions(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.sessions(who, agent)


@router.get("/agents/{agent}/sessions/{session_id}")
def session(agent: Name, session_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.session(who, agent, session_id)


@router.post(
    "/agents/{agent}/sessions/{session_id}/turns",
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
