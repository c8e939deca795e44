"""Request bodies of the REST API (what ``/openapi.json`` documents). Unknown fields
are refused, so a misspelt option is a 422, never silently ignored."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool

from kronika.core.checks import MAX_BUDGET_TOKENS, MAX_K
from kronika.core.query import Mode, RecallQuery
from kronika.core.sections import SECTION_NAMES
from kronika.core.text import any_case
from kronika.engine.backup_format import FORMAT, OLDEST_VERSION, VERSION
from kronika.stores.markdown.layout import AGENT_NAME_PATTERN

SOME_TEXT = r"[^\s\x00-\x1f\x7f]"
"""Text that is more than white space and control characters (what the memory would
call empty). Said in the schema only: the memory's own message for empty text is
clearer than a pattern's."""
BLANKLESS: dict[str, Any] = {"pattern": SOME_TEXT}
NO_NUL = "^[^\\x00]*$"
"""Text with no NUL character: kronika keeps no text holding one, so a key, tag or
name holding one is refused (a 422)."""
Word = Annotated[str, Field(json_schema_extra={"pattern": NO_NUL})]
"""A tag, entity, key or speaker in a list."""
Text = Field(min_length=1, max_length=20_000, json_schema_extra=BLANKLESS)


def _iso_text(value: object) -> object:
    if not isinstance(value, str | datetime):
        raise ValueError("give the time as ISO 8601 text, e.g. 2025-11-01T10:30:00Z")
    return value


IsoTime = Annotated[datetime, BeforeValidator(_iso_text)]
"""A time as ISO 8601 text (a number is refused, not read as seconds since 1970)."""
_WHEN_WORD = "|".join(
    any_case(word) for word in ("now", "today", "yesterday", "last week", "last month")
)
_YEAR = r"[1-9][0-9]{3}"
_LEAP_YEAR = r"(?:[1-9][0-9](?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[13579][26])00)"
_CLOCK = r"T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]{1,6})?)?"
WHEN = (
    r"^(?:" + _WHEN_WORD + r"|[0-9]{1,3}(?:mo|min|m|h|d|w|y)"
    r"|" + _YEAR + r"(?:-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|1[0-9]|2[0-8])"
    r"(?:" + _CLOCK + r"(?:Z|[+-]0[0-9]:00)?)?)?)?"
    r"|(?:" + _YEAR + r"-(?:(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
    r"|" + _LEAP_YEAR + r"-02-29)(?:" + _CLOCK + r"Z?)?)$"
)
"""The time expressions a recall filter takes (:mod:`kronika.core.timeexpr` reads a
few more: month names, ``6 mo``, other offsets). A time may name seconds and their
fraction (``2025-11-30T10:30:00.123456Z``, what :meth:`RecallQuery.as_json
<kronika.core.query.RecallQuery.as_json>` writes); from the 29th of a month on, only in
UTC (``Z``) or without an offset, so no time in the year 9999 runs past its end."""
SECTION = r"^(?:|\s*(?:" + "|".join(any_case(n) for n in SECTION_NAMES) + r")\s*)$"
"""A Brain section as :func:`kronika.core.sections.parse_section` reads it (empty:
the section the fact's words suggest)."""
ItemTypeName = Literal[
    "sensory",
    "episodic",
    "semantic",
    "profile",
    "reflection",
    "strategy",
    "fact",
    "summary",
    "message",
    "note",
]
Channel = Field(None, min_length=1, max_length=200, description="a channel (none: the caller's)")


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _given(name: str) -> dict[str, Any]:
    """JSON schema: ``name`` is there as text that is more than white space."""
    return {"required": [name], "properties": {name: {"type": "string", "pattern": SOME_TEXT}}}


def _present(*names: str) -> dict[str, Any]:
    """JSON schema: one of ``names`` is there and not null (the memory counts it as
    given, even when empty)."""
    return {"anyOf": [{"required": [n], "properties": {n: {"type": "string"}}} for n in names]}


class RememberBody(Body):
    """A fact: ``content``, or a ``value`` (with its ``key``, or alone)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"allOf": [_given("content"), {"not": _present("value")}]},
                _given("value"),
            ]
        },
    )
    content: str | None = Field(None, max_length=20_000, description="the fact")
    key: str | None = Field(
        None,
        max_length=200,
        description="a new value supersedes the old",
        json_schema_extra=BLANKLESS,
    )
    value: str | None = Field(
        None, max_length=20_000, description="the value of `key`", json_schema_extra=BLANKLESS
    )
    section: str | None = Field(None, max_length=100, json_schema_extra={"pattern": SECTION})
    multi: StrictBool = False
    importance: float | None = Field(None, ge=0, le=1, strict=True)
    entities: list[Word] = Field(default_factory=list, max_length=100)
    tags: list[Word] = Field(default_factory=list, max_length=100)
    scope: Literal["personal", "channel", "team", "global"] | None = None
    channel: str | None = Channel
    source: Literal["explicit", "auto"] = "explicit"


ScopeName = Literal["personal", "channel", "team", "global"]


class NoteBody(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {"required": ["confidence"], "properties": {"confidence": {"type": "number"}}},
            "then": {"required": ["kind"], "properties": {"kind": {"const": "O"}}},
        },
    )
    text: str = Text
    kind: Literal["W", "B", "O", "S"] | None = Field(
        None, description="W world, B experience (first person), O opinion, S observation"
    )
    confidence: float | None = Field(
        None, ge=0, le=1, strict=True, description="an opinion's (kind O)"
    )
    tags: list[Word] = Field(default_factory=list, max_length=100)
    scope: ScopeName | None = None
    channel: str | None = Channel


class ForgetBody(Body):
    """What to forget: an item ``id``, a ``key`` (with or without its ``value``), a
    ``value``, or a ``topic``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [
                {"allOf": [_given("id"), {"not": _present("key", "value", "topic")}]},
                {"allOf": [_given("key"), {"not": _present("id", "topic")}]},
                {"allOf": [_given("topic"), {"not": _present("id", "key", "value")}]},
                {"allOf": [_given("value"), {"not": _present("id", "key", "topic")}]},
            ]
        },
    )
    id: str | None = Field(None, max_length=200, json_schema_extra=BLANKLESS)
    key: str | None = Field(None, max_length=200, json_schema_extra=BLANKLESS)
    value: str | None = Field(None, max_length=20_000, json_schema_extra=BLANKLESS)
    topic: str | None = Field(None, max_length=2_000, json_schema_extra=BLANKLESS)
    dry_run: StrictBool = Field(False, description="change nothing: say what would be forgotten")


class RecallBody(Body):
    query: str = Field(min_length=1, max_length=10_000, json_schema_extra={"pattern": NO_NUL})
    k: int | None = Field(None, ge=1, le=MAX_K)
    mode: Mode = "hybrid"
    since: str | None = Field(
        None, max_length=100, json_schema_extra={"pattern": WHEN}, description="30d, 2025-11-01…"
    )
    until: str | None = Field(None, max_length=100, json_schema_extra={"pattern": WHEN})
    as_of: str | None = Field(
        None,
        max_length=100,
        json_schema_extra={"pattern": WHEN},
        description="what was true at that time",
    )
    types: list[ItemTypeName] = Field(default_factory=list, max_length=20)
    keys: list[Word] = Field(default_factory=list, max_length=100)
    entities: list[Word] = Field(default_factory=list, max_length=100)
    speakers: list[Word] = Field(default_factory=list, max_length=100)
    scopes: list[Literal["personal", "channel", "team", "global"]] = Field(
        default_factory=list, max_length=4
    )
    channel: str | None = Channel
    include_superseded: StrictBool = False
    budget_tokens: int | None = Field(None, ge=1, le=MAX_BUDGET_TOKENS)
    record_access: StrictBool = True
    all_agents: StrictBool = False
    explain: StrictBool = False
    """Also each score's parts: how the answer is shown, not what is asked."""

    def recall_query(self, agent: str) -> RecallQuery:
        """The recall this body asks of ``agent`` (the agent of the request's path).
        Its fields are :class:`~kronika.core.query.RecallQuery`'s, with the same
        defaults and bounds (``tests/server/test_recall_options.py`` holds them so)."""
        return RecallQuery(agent=agent, **self.model_dump(exclude={"explain"}))


class TurnText(Body):
    """One turn of a conversation: who said what, when, under which id."""

    speaker: str = Field(min_length=1, max_length=100, json_schema_extra=BLANKLESS)
    content: str = Field(min_length=1, max_length=100_000, json_schema_extra=BLANKLESS)
    at: IsoTime | None = None
    turn_id: str | None = Field(
        None, min_length=1, max_length=200, json_schema_extra={"pattern": NO_NUL}
    )


class TurnBody(TurnText):
    scope: ScopeName | None = None
    channel: str | None = Channel


MAX_TURNS_PER_BATCH = 1000
"""How many turns one ``POST …/turns/batch`` may carry (more: a 422 naming ``turns``)."""


class TurnsBody(Body):
    turns: list[TurnText] = Field(
        min_length=1,
        max_length=MAX_TURNS_PER_BATCH,
        description=f"the turns, in order (1 to {MAX_TURNS_PER_BATCH})",
    )
    scope: ScopeName | None = None
    channel: str | None = Channel


DEFAULT_DAYS = 7


class DistillBody(Body):
    days: int = Field(DEFAULT_DAYS, ge=1, le=3650, description="the period to distil, in days")


class AgentBody(Body):
    name: str = Field(
        min_length=1, max_length=64, json_schema_extra={"pattern": AGENT_NAME_PATTERN}
    )


_TIME = {"type": "string", "format": "date-time"}
_TEXT = {"type": "string"}
EXPORT_DOCUMENT: dict[str, Any] = {
    "type": "object",
    "required": ["format", "version", "agents"],
    "properties": {
        "format": {"const": FORMAT},
        "version": {"type": "integer", "minimum": OLDEST_VERSION, "maximum": VERSION},
        "exported_at": {"description": "when it was made (kept as text)"},
        "embedding_model": {"description": "the embedder of the vectors (text; else ignored)"},
        "view": {"type": "null", "description": "set on a reader's view, which is no backup"},
        "agents": {
            "type": "object",
            "propertyNames": {"pattern": AGENT_NAME_PATTERN},
            "additionalProperties": {
                "type": "object",
                "required": ["files"],
                "properties": {
                    "files": {
                        "type": "object",
                        "description": "path inside the agent folder (*.md) -> text",
                        "propertyNames": {"pattern": r"^(?:[^./\\][^/\\]*/)*[^./\\][^/\\]*\.md$"},
                        "additionalProperties": _TEXT,
                    },
                    "file_times": {
                        "type": "object",
                        "description": "path of one of `files` -> its modification time",
                        "additionalProperties": {"anyOf": [_TIME, {"type": "null"}]},
                    },
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["id"],
                            "properties": {
                                "id": _TEXT,
                                "access_count": {"type": "integer", "minimum": 0},
                                "last_accessed_at": {"anyOf": [_TIME, {"type": "null"}]},
                            },
                        },
                    },
                    "policy": {
                        "anyOf": [
                            {"type": "null"},
                            {
                                "type": "object",
                                "required": ["autonomy"],
                                "properties": {
                                    "autonomy": {"enum": [0, 1, 2, 3]},
                                    "writers": {"type": "array", "items": _TEXT},
                                    "tenant": {"type": ["string", "null"], "pattern": SOME_TEXT},
                                },
                            },
                        ]
                    },
                },
            },
        },
        "audit": {
            "type": "array",
            "description": "entries about the document's own agents",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "at",
                    "action",
                    "target_agent",
                    "source_agent",
                    "section",
                    "item_id",
                    "summary",
                    "outcome",
                ],
                "properties": {
                    "at": _TIME,
                    "action": _TEXT,
                    "target_agent": _TEXT,
                    "source_agent": _TEXT,
                    "section": _TEXT,
                    "item_id": {"type": ["string", "null"]},
                    "summary": _TEXT,
                    "outcome": _TEXT,
                    "api_key": {"type": ["string", "null"]},
                    "user": {"type": ["string", "null"]},
                },
            },
        },
    },
}
"""The export document's shape as a JSON schema (what
:func:`kronika.engine.backup_format.read_backup` checks; it also checks what a schema
cannot say: each ``file_times`` path is one of ``files``, the audit names only the
document's agents)."""


class ImportBody(Body):
    document: dict[str, Any] = Field(
        description="a document made by GET /v1/export", json_schema_extra=EXPORT_DOCUMENT
    )
    replace: StrictBool = False


class EvaluationBody(Body):
    """How an action went, judged by the caller (e.g. ``kronika.core.lessons.exit_code``)."""

    is_ok: StrictBool
    score: float = Field(ge=0, le=1, strict=True)
    reasons: list[Word] = Field(default_factory=list, max_length=50)
    evaluator: str = Field("given", min_length=1, max_length=100)


class OutcomeBody(Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [
                {"required": ["evaluation"], "properties": {"evaluation": {"type": "object"}}},
                {"required": ["ok"], "properties": {"ok": {"type": "boolean"}}},
            ]
        },
    )
    task: str = Field(
        min_length=1,
        max_length=2_000,
        description="what the agent tried to do",
        json_schema_extra={"pattern": r"\S"},
    )
    action: str = Field(min_length=1, max_length=20_000, description="what it did")
    evaluation: EvaluationBody | None = None
    ok: StrictBool | None = Field(None, description="instead of an evaluation: did it go well")
    reasons: list[Word] = Field(default_factory=list, max_length=50)
    served: list[str] | None = Field(
        None, max_length=100, description="ids of the lessons followed (default: the matching)"
    )
    scope: ScopeName | None = None
    channel: str | None = Channel


class JobBody(Body):
    days: int = Field(
        default=DEFAULT_DAYS, ge=1, le=3650, description="how far back to look, in days"
    )
    mode: Literal["lite", "full"] = Field(default="full", description="lite: no dreaming")
    clear: StrictBool | None = Field(
        default=None,
        description="distill only: clear the messages distilled (default: distill_clear)",
    )
