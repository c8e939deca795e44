"""``GET /v1/me``: what the request's API key is (its tenant, role, agent, and for a key
bound to a user that user's channels and teams). Keys are made and revoked with
``kronika keys``, never over HTTP."""

from __future__ import annotations

from fastapi import APIRouter

from kronika.server import responses, views
from kronika.server.deps import Who
from kronika.server.views import Json

router = APIRouter(tags=["keys"])


@router.get(
    "/me",
    summary="What this API key is",
    response_model=responses.Key,
    response_model_exclude_unset=True,
)
def me(who: Who) -> Json:
    return views.api_key(who.key)
