"""The memory browser's read routes: summaries, entity pages, opinions and a fact's
explanation (:mod:`kronika.server.pages`; the Markdown zip is with the export,
:mod:`.export`).

Authenticated and scoped like every ``/v1`` route: the caller comes from the request's
key, and each page is read as that caller reads (only what its reader may see).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import Field

from kronika.server import pages
from kronika.server.deps import Id, Name, Svc, Who
from kronika.server.responses import Answer, Item, Time
from kronika.server.views import Json

router = APIRouter(tags=["pages"])
ENTITY_NAME = r"^[^/\\\x00]*[^\s\x00-\x1f\x7f\x85/\\][^/\\\x00]*$"
"""An entity's name: more than white space and control characters, no ``/`` or ``\\``
(what :func:`kronika.server.pages.entity` takes; said in the schema only, so a name it
refuses is told why)."""
EntityName = Annotated[
    str, Path(min_length=1, max_length=80, json_schema_extra={"pattern": ENTITY_NAME})
]


class SessionSummaryRow(Answer):
    session_id: str
    status: str
    summary: str


class Summary(Item):
    """An L1/L2 summary: the item, its ``level`` and the sessions it covers."""

    level: str = Field(description="L1 or L2")
    sessions: list[str]


class Summaries(Answer):
    sessions: list[SessionSummaryRow]
    summaries: list[Summary]


class SessionSummary(Answer):
    session_id: str
    status: str
    summary: str | None
    turns: int
    summaries: list[Summary] = Field(description="the L1/L2 summaries that cover it")


class EntityRow(Answer):
    name: str
    items: int = Field(description="how many items the reader sees on it")


class Entities(Answer):
    entities: list[EntityRow]


class Evidence(Answer):
    kind: str = Field(description="the link's kind")
    item: Item


class Opinion(Item):
    """A note of kind ``O`` and its evidence: the linked items the reader sees."""

    evidence: list[Evidence]


class Entity(Answer):
    name: str
    path: str | None = Field(description="its page, when it has one")
    facts: list[Item]
    notes: list[Item]
    opinions: list[Opinion]
    written: list[Item] = Field(description="the lines written on its page")


class Opinions(Answer):
    opinions: list[Opinion]


class ExplainedItem(Answer):
    id: str
    agent: str
    content: str
    type: str
    key: str | None
    value: str | None
    status: str
    source: str
    created_at: Time
    valid_from: Time | None
    valid_to: Time | None
    citation: str


class Origin(Answer):
    how: str = Field(description="remembered, extracted, consolidated, imported, hand-written…")
    by: str | None
    session_id: str | None
    turn_ids: list[str]
    turns: list[str] = Field(description='"speaker: text" of the turns it came from')
    model: str | None


class Event(Answer):
    at: Time
    action: str
    by: str
    outcome: str
    item: str | None
    summary: str


class Value(Answer):
    id: str
    value: str
    status: str
    valid_from: Time | None
    valid_to: Time | None


class Explanation(Answer):
    """``kronika explain --json`` (:func:`kronika.workflows.explain.explanation_json`)."""

    item: ExplainedItem
    origin: Origin
    events: list[Event]
    lineage: list[Value] = Field(description="every value of its fact key")


@router.get(
    "/agents/{agent}/summaries", summary="Session and L1/L2 summaries", response_model=Summaries
)
def summaries(agent: Name, who: Who, svc: Svc) -> Json:
    return pages.summaries(svc, who, agent)


@router.get(
    "/agents/{agent}/sessions/{session_id}/summary",
    summary="A session's summary and the summaries that cover it",
    response_model=SessionSummary,
)
def session_summary(agent: Name, session_id: Id, who: Who, svc: Svc) -> Json:
    return pages.session_summary(svc, who, agent, session_id)


@router.get("/agents/{agent}/entities", summary="The entity pages", response_model=Entities)
def entities(agent: Name, who: Who, svc: Svc) -> Json:
    return pages.entities(svc, who, agent)


@router.get("/agents/{agent}/entities/{name}", summary="One entity's page", response_model=Entity)
def entity(agent: Name, name: EntityName, who: Who, svc: Svc) -> Json:
    return pages.entity(svc, who, agent, name)


@router.get(
    "/agents/{agent}/opinions", summary="Opinions and their evidence", response_model=Opinions
)
def opinions(agent: Name, who: Who, svc: Svc) -> Json:
    return pages.opinions(svc, who, agent)


@router.get(
    "/agents/{agent}/explain/{item_id}",
    summary="Why an item exists: origin, turns, events, history",
    response_model=Explanation,
)
def explain(agent: Name, item_id: Id, who: Who, svc: Svc) -> Json:
    """``item_id``: an item's id, or a fact key (its current value)."""
    return pages.explanation(svc, who, agent, item_id)
