"""Changes waiting for approval (an agent at autonomy 1 wrote them), and approving or
rejecting one (admin keys)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from kronika.server.deps import Id, Name, Svc, Who

router = APIRouter(tags=["proposals"])


@router.get("/agents/{agent}/proposals")
def proposals(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.proposals(who, agent)


@router.post("/agents/{agent}/proposals/{proposal_id}/approve")
def approve(agent: Name, proposal_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.settle(who, agent, proposal_id, "approve")


@router.post("/agents/{agent}/proposals/{proposal_id}/reject")
def reject(agent: Name, proposal_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return svc.settle(who, agent, proposal_id, "reject")
