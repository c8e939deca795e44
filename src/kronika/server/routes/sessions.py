"""Conversations: the sessions whose turns the reader may see, one session's turns,
and saving a turn (``save_turn``: applied, proposed at autonomy 1, or refused by a
storage policy) or a batch of turns (``save_turns``: each as ``save_turn`` would, in one
write). A session's summary is with the pages (:mod:`.pages`)."""

from __future__ import annotations

from fastapi import APIRouter

from kronika.server import responses, schemas
from kronika.server.deps import Id, Name, Svc, Who
from kronika.server.views import Json

router = APIRouter(tags=["sessions"])


@router.get("/agents/{agent}/sessions", response_model=responses.Sessions)
def sessions(agent: Name, who: Who, svc: Svc) -> Json:
    return svc.sessions(who, agent)


@router.get("/agents/{agent}/sessions/{session_id}", response_model=responses.Session)
def session(agent: Name, session_id: Id, who: Who, svc: Svc) -> Json:
    return svc.session(who, agent, session_id)


@router.post(
    "/agents/{agent}/sessions/{session_id}/turns",
    status_code=201,
    response_model=responses.TurnReceipt,
)
def save_turn(agent: Name, session_id: Id, body: schemas.TurnBody, who: Who, svc: Svc) -> Json:
    return svc.save_turn(
        who, agent, session_id, speaker=body.speaker, content=body.content, at=body.at,
        turn_id=body.turn_id, scope=body.scope, channel=body.channel,
    )  # fmt: skip


@router.post(
    "/agents/{agent}/sessions/{session_id}/turns/batch",
    status_code=201,
    response_model=responses.TurnReceipts,
)
def save_turns(agent: Name, session_id: Id, body: schemas.TurnsBody, who: Who, svc: Svc) -> Json:
    turns = [turn.model_dump(exclude_none=True) for turn in body.turns]
    return svc.save_turns(
        who, agent, session_id, turns, scope=body.scope, channel=body.channel
    )  # fmt: skip
