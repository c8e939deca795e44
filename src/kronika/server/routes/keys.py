"""``GET /v1/me``: what the request's API key is (its tenant, role, agent, and for a key
bound to a user that user's channels and teams). Keys are made and revoked with
``kronika keys``, never over HTTP."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from kronika.server.deps import Who

router = APIRouter(tags=["keys"])


@router.get("/me", summary="What this API key is")
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
