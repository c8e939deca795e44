"""``GET /healthz``: liveness, the one route that needs no key (for a proxy's checks)."""

from __future__ import annotations

from fastapi import APIRouter

from kronika.server import responses
from kronika.server.views import Json

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness (no key needed)", response_model=responses.Health)
async def healthz() -> Json:
    return {"status": "ok"}
