"""Changes waiting for approval (an agent at autonomy 1 wrote them), and approving or
rejecting one (admin keys)."""

from __future__ import annotations

from fastapi import APIRouter

from kronika.server import responses
from kronika.server.deps import Id, Name, Svc, Who
from kronika.server.views import Json

router = APIRouter(tags=["proposals"])


@router.get("/agents/{agent}/proposals", response_model=responses.Proposals)
def proposals(agent: Name, who: Who, svc: Svc) -> Json:
    return svc.proposals(who, agent)


@router.post("/agents/{agent}/proposals/{proposal_id}/approve", response_model=responses.Approved)
def approve(agent: Name, proposal_id: Id, who: Who, svc: Svc) -> Json:
    return svc.settle(who, agent, proposal_id, "approve")


@router.post("/agents/{agent}/proposals/{proposal_id}/reject", response_model=responses.Rejected)
def reject(agent: Name, proposal_id: Id, who: Who, svc: Svc) -> Json:
    return svc.settle(who, agent, proposal_id, "reject")
