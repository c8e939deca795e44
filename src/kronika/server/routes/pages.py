"""The memory browser's read routes: summaries, entity pages, opinions and a fact's
explanation (:mod:`kronika.server.pages`; the Markdown zip is with the export,
:mod:`.export`).

Authenticated and scoped like every ``/v1`` route: the caller comes from the request's
key, and each page is read as that caller reads (only what its reader may see).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from kronika.server import pages
from kronika.server.deps import Id, Name, Svc, Who

router = APIRouter(tags=["pages"])
Entity = Annotated[str, Path(min_length=1, max_length=80)]


@router.get("/agents/{agent}/summaries", summary="Session and L1/L2 summaries")
def summaries(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return pages.summaries(svc, who, agent)


@router.get(
    "/agents/{agent}/sessions/{session_id}/summary",
    summary="A session's summary and the summaries that cover it",
)
def session_summary(agent: Name, session_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    return pages.session_summary(svc, who, agent, session_id)


@router.get("/agents/{agent}/entities", summary="The entity pages")
def entities(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return pages.entities(svc, who, agent)


@router.get("/agents/{agent}/entities/{name}", summary="One entity's page")
def entity(agent: Name, name: Entity, who: Who, svc: Svc) -> dict[str, Any]:
    return pages.entity(svc, who, agent, name)


@router.get("/agents/{agent}/opinions", summary="Opinions and their evidence")
def opinions(agent: Name, who: Who, svc: Svc) -> dict[str, Any]:
    return pages.opinions(svc, who, agent)


@router.get(
    "/agents/{agent}/explain/{item_id}",
    summary="Why an item exists: origin, turns, events, history",
)
def explain(agent: Name, item_id: Id, who: Who, svc: Svc) -> dict[str, Any]:
    """``item_id``: an item's id, or a fact key (its current value)."""
    return pages.explanation(svc, who, agent, item_id)
