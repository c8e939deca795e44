"""``GET /healthz``: liveness, the one route that needs no key (for a proxy's checks)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness (no key needed)")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}
