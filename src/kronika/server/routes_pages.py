"""The memory browser's read routes: summaries, entity pages, opinions, a fact's
explanation and the Markdown zip (:mod:`kronika.server.pages`).

Authenticated and scoped like every ``/v1`` route: the caller comes from the request's
key, and each page is read as that caller reads (only what its reader may see).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from kronika.server import pages
from kronika.server.deps import Id, Name, Svc, Who

router = APIRouter()
Entity = Annotated[str, Path(min_length=1, max_length=80)]


@router.get("/agents/{agent}/summaries", tags=["pages"], summary="Session and L1/L2 summaries")
def summaries(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return pages.summaries(svc, who, agent)


@router.get(
    "/agents/{agent}/sessions/{session_id}/summary",
    tags=["pages"],
    summary="A session's summary and the summaries that cover it",
)
def session_summary(agent: Name, session_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return pages.session_summary(svc, who, agent, session_id)


@router.get("/agents/{agent}/entities", tags=["pages"], summary="The entity pages")
def entities(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return pages.entities(svc, who, agent)


@router.get("/agents/{agent}/entities/{name}", tags=["pages"], summary="One entity's page")
def entity(agent: Name, name: Entity, who: Who, svc: Svc) -> dict[str, Any]:
    return pages.entity(svc, who, agent, name)


@router.get("/agents/{agent}/opinions", tags=["pages"], summary="Opinions and their evidence")
def opinions(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return pages.opinions(svc, who, agent)


@router.get(
    "/agents/{agent}/explain/{item_id}",
    tags=["pages"],
    summary="Why an item exists: origin, turns, events, history",
)
def explain(agent: Name, item_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    """``item_id``: an item's id, or a fact key (its current value)."""
    return pages.explanation(svc, who, agent, item_id)


@router.get(
    "/export/markdown",
    tags=["export"],
    summary="The Markdown files of a whole export, as a zip",
    response_class=Response,
    responses={200: {"content": {"application/zip": {}}}},
)
async def export_markdown(
    who: Who, svc: Svc, agent: Annotated[str | None, Query(min_length=1, max_length=100)] = None
) -> Response:
    data = await run_in_threadpool(pages.markdown_zip, svc, who, agent)
    name = "kronika-" + re.sub(r"[^A-Za-z0-9._-]", "_", agent or who.tenant) + ".zip"
    return Response(
        data,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
