"""The audit trail (of one agent, or of every agent of the tenant) and the item counts
per agent: what the key's reader may see of them."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from kronika.server.deps import Name, Svc, Who

router = APIRouter()
AuditLimit = Annotated[int, Query(ge=1, le=100_000)]


@router.get("/agents/{agent}/audit", tags=["audit"])
def agent_audit(agent: Name, who: Who, svc: Svc, limit: AuditLimit = 100) -> dict[str, Any]:
    return svc.audit(who, agent, limit)


@router.get("/audit", tags=["audit"], summary="The audit trail of every agent")
def audit(who: Who, svc: Svc, limit: AuditLimit = 100) -> dict[str, Any]:
    return svc.audit(who, None, limit)


@router.get("/stats", tags=["stats"])
def stats(who: Who, svc: Svc) -> dict[str, Any]:
    return svc.stats(who)
