"""Request bodies of the REST API (what ``/openapi.json`` documents). Unknown fields
are refused, so a misspelt option is a 422, never silently ignored."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Text = Field(min_length=1, max_length=20_000)


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RememberBody(Body):
    content: str | None = Field(None, max_length=20_000, description="the fact")
    key: str | None = Field(None, max_length=200, description="a new value supersedes the old")
    value: str | None = Field(None, max_length=20_000, description="the value of `key`")
    section: str | None = Field(None, max_length=100)
    multi: bool = False
    importance: float | None = Field(None, ge=0, le=1)
    entities: list[str] = Field(default_factory=list, max_length=100)
    tags: list[str] = Field(default_factory=list, max_length=100)
    scope: Literal["personal", "channel", "team", "global"] | None = None
    channel: str | None = Field(None, max_length=200)
    source: Literal["explicit", "auto"] = "explicit"


ScopeName = Literal["personal", "channel", "team", "global"]


class NoteBody(Body):
    text: str = Text
    kind: Literal["W", "B", "O", "S"] | None = Field(
        None, description="W world, B experience (first person), O opinion, S observation"
    )
    confidence: float | None = Field(None, ge=0, le=1, description="an opinion's (kind O)")
    tags: list[str] = Field(default_factory=list, max_length=100)
    scope: ScopeName | None = None
    channel: str | None = Field(None, max_length=200)


class ForgetBody(Body):
    id: str | None = Field(None, max_length=200)
    key: str | None = Field(None, max_length=200)
    value: str | None = Field(None, max_length=20_000)
    topic: str | None = Field(None, max_length=2_000)
    dry_run: bool = Field(False, description="change nothing: say what would be forgotten")


class RecallBody(Body):
    query: str = Field(min_length=1, max_length=10_000)
    k: int | None = Field(None, ge=1, le=10_000)
    mode: Literal["hybrid", "lexical", "vector"] = "hybrid"
    since: str | None = Field(None, max_length=100, description="30d, 2025-11-01, last week…")
    until: str | None = Field(None, max_length=100)
    as_of: str | None = Field(None, max_length=100, description="what was true at that time")
    types: list[str] = Field(default_factory=list, max_length=20)
    keys: list[str] = Field(default_factory=list, max_length=100)
    entities: list[str] = Field(default_factory=list, max_length=100)
    speakers: list[str] = Field(default_factory=list, max_length=100)
    scopes: list[Literal["personal", "channel", "team", "global"]] = Field(
        default_factory=list, max_length=4
    )
    channel: str | None = Field(None, max_length=200)
    include_superseded: bool = False
    budget_tokens: int | None = Field(None, ge=1, le=10_000_000)
    record_access: bool = True
    all_agents: bool = False
    explain: bool = False


class TurnBody(Body):
    speaker: str = Field(min_length=1, max_length=100)
    content: str = Field(min_length=1, max_length=100_000)
    at: datetime | None = None
    turn_id: str | None = Field(None, min_length=1, max_length=200)
    scope: ScopeName | None = None
    channel: str | None = Field(None, max_length=200)


DEFAULT_DAYS = 7


class DistillBody(Body):
    days: int = Field(DEFAULT_DAYS, ge=1, le=3650, description="the period to distil, in days")


class AgentBody(Body):
    name: str = Field(min_length=1, max_length=100)


class ImportBody(Body):
    document: dict[str, Any] = Field(description="a document made by GET /v1/export")
    replace: bool = False


class EvaluationBody(Body):
    """How an action went, judged by the caller (e.g. ``kronika.core.lessons.exit_code``)."""

    is_ok: bool
    score: float = Field(ge=0, le=1)
    reasons: list[str] = Field(default_factory=list, max_length=50)
    evaluator: str = Field("given", min_length=1, max_length=100)


class OutcomeBody(Body):
    task: str = Field(min_length=1, max_length=2_000, description="what the agent tried to do")
    action: str = Field(min_length=1, max_length=20_000, description="what it did")
    evaluation: EvaluationBody | None = None
    ok: bool | None = Field(None, description="instead of an evaluation: did it go well")
    reasons: list[str] = Field(default_factory=list, max_length=50)
    served: list[str] | None = Field(
        None, max_length=100, description="ids of the lessons followed (default: the matching)"
    )
    scope: ScopeName | None = None
    channel: str | None = Field(None, max_length=200)


class JobBody(Body):
    days: int = Field(
        default=DEFAULT_DAYS, ge=1, le=3650, description="how far back to look, in days"
    )
    mode: Literal["lite", "full"] = Field(default="full", description="lite: no dreaming")
    clear: bool | None = Field(
        default=None,
        description="distill only: clear the messages distilled (default: distill_clear)",
    )
