"""The audit trail (of one agent, or of every agent of the tenant) and the item counts
per agent: what the key's reader may see of them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from kronika.server import responses
from kronika.server.deps import Name, Svc, Who
from kronika.server.views import Json

router = APIRouter()
AuditLimit = Annotated[int, Query(ge=1, le=100_000)]


@router.get("/agents/{agent}/audit", tags=["audit"], response_model=responses.Audit)
def agent_audit(agent: Name, who: Who, svc: Svc, limit: AuditLimit = 100) -> Json:
    return svc.audit(who, agent, limit)


@router.get(
    "/audit",
    tags=["audit"],
    summary="The audit trail of every agent",
    response_model=responses.Audit,
)
def audit(who: Who, svc: Svc, limit: AuditLimit = 100) -> Json:
    return svc.audit(who, None, limit)


@router.get(
    "/stats",
    tags=["stats"],
    response_model=responses.Stats,
    response_model_exclude_unset=True,
)
def stats(who: Who, svc: Svc) -> Json:
    return svc.stats(who)
