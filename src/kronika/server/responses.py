"""What the REST API answers, as Pydantic models: each route names its answer
(``response_model``), so ``/openapi.json`` describes every field of every answer.

The answers themselves are made once per result object by :mod:`kronika.wire` (an
item, a recall hit, a write or forget receipt, a proposal, an audit entry…; a key by
:mod:`kronika.server.views`), as JSON-ready dicts the MCP tools return too; these
models say what those dicts hold, field for field and in the same order. A route's
answer is checked against its model before it is sent: a field the model does not
declare is refused (``extra="forbid"``), so the document and the answers cannot drift
apart unnoticed (the schemathesis run of ``tests/server/test_contract.py`` checks every
route's answers against the document, ``tests/server/test_responses.py`` that they are
what ``wire`` makes). Checking costs some CPU: about 0.1 ms for a recall of ten hits,
20 ms for a list of 1,000 items.

A field marked *absent unless …* is left out of the answer, not sent as ``null``
(those routes answer with ``response_model_exclude_unset``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, WithJsonSchema

from kronika.core.model import ItemType, Layer, RetainKind, Scope, Source, Status, Tier

Time = Annotated[str, Field(description="ISO 8601 time")]


def _number(value: object) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("a number is expected")
    return value


Number = Annotated[float | int, PlainValidator(_number), WithJsonSchema({"type": "number"})]
"""A number, sent as it was made (``0`` stays ``0``: a ``float`` field would send ``0.0``)."""
Outcome = Literal["applied", "proposed", "refused"]


class Answer(BaseModel):
    """An answer holds exactly the fields its model declares."""

    model_config = ConfigDict(extra="forbid")


# ----------------------------------------------------------------- items
class Provenance(Answer):
    path: str = Field(description="the file in the agent's folder the item is read from")
    line: int | None
    session_id: str | None
    turn_ids: list[str]


class Item(Answer):
    """A memory item with every field (:func:`kronika.core.serialize.item_to_dict`)."""

    id: str
    agent: str
    content: str
    type: ItemType
    layer: Layer
    tier: Tier
    created_at: Time
    updated_at: Time
    provenance: Provenance
    tenant: str
    scope: Scope
    channel: str | None
    user: str | None
    team: str | None
    key: str | None
    value: str | None
    multi: bool
    source: Source
    section: str | None
    kind: RetainKind | None = Field(description="a note's: W, B, O or S")
    confidence: Number | None = Field(description="an opinion's, 0..1")
    importance: Number
    status: Status
    valid_from: Time | None
    valid_to: Time | None
    superseded_by: str | None
    speaker: str | None
    entities: list[str]
    tags: list[str]
    last_accessed_at: Time | None
    access_count: int
    citation: str = Field(description="where it is written: path#Lline")


class Items(Answer):
    items: list[Item]


# -------------------------------------------------------------- receipts
class WriteReceipt(Answer):
    """What happened to a write."""

    outcome: Outcome
    change: str = Field(description="the kind of change, e.g. AddFact, SupersedeFact")
    item: Item | None
    proposal: str | None = Field(description="the id of the proposal it waits as")
    notes: list[str] = Field(description="steps after the change that did not finish")
    policy: str | None = Field(description="what a storage policy did")
    detail: dict[str, Any] = Field(description="the change whole, as a proposal stores it")


class ForgetPlace(Answer):
    path: str
    action: str = Field(description="removed, redacted, deleted or withdrawn")
    count: int
    lines: int


class IndexRows(Answer):
    removed: int
    rewritten: int


class ForgetReceipt(Answer):
    """What a forget took, and every place it touched (as ``kronika forget --json``)."""

    outcome: Literal["applied", "proposed", "refused", "preview"]
    agent: str
    proposal: str | None
    forgotten: list[Item]
    places: list[ForgetPlace]
    index: IndexRows
    audit_redacted: int


class TurnReceipt(Answer):
    """What happened to a saved turn (the answer of ``POST …/sessions/{s}/turns``)."""

    session_id: str
    turn_id: str = Field(description="the turn's id in its session (or the one it would have)")
    outcome: Outcome = Field(
        description="applied: the turn is in the session; proposed: an agent at autonomy 1"
        " saved it and it waits for approval as `proposal`; refused: a storage policy"
        " kept it out (`policy` says why)"
    )
    proposal: str | None = Field(description="the id of the proposal it waits as")
    policy: str | None = Field(description="what a storage policy did")


class TurnReceipts(Answer):
    """What happened to each turn of a batch (``POST …/sessions/{s}/turns/batch``)."""

    session_id: str
    turns: list[TurnReceipt] = Field(description="a receipt per turn, in the order given")


# ---------------------------------------------------------------- recall
class ScoreParts(Answer):
    relevance: Number
    importance: Number
    recency: Number
    total: Number
    lexical_rank: int | None
    vector_similarity: Number | None
    rerank_score: Number | None
    history: str | None = Field(description="why a past value of a fact was recalled")


class Hit(Answer):
    item: Item
    score: Number
    citation: str
    tokens: int
    explain: ScoreParts | None = Field(None, description="absent unless `explain` was asked")


class Recall(Answer):
    query: str
    hits: list[Hit]
    total_tokens: int
    budget_tokens: int | None
    candidates: int
    dropped_for_budget: int
    notes: list[str]


class History(Answer):
    key: str
    values: list[Item] = Field(description="every value the key has had, oldest first")


class Facts(Answer):
    facts: list[Item]


# --------------------------------------------------------------- context
class Brain(Answer):
    agent: str
    brain: str = Field(description="brain.md as the agent sees it (Markdown)")


class WakeParts(Answer):
    identity: int
    memory_block: int
    active_context: int


class Wake(Answer):
    agent: str
    identity: str
    memory_block: str
    active_context: str
    tokens: int
    parts: WakeParts = Field(description="each block's tokens")
    budgets: WakeParts = Field(description="each block's budget")


class Prompt(Answer):
    agent: str
    block: str


# -------------------------------------------------------------- sessions
class SessionRow(Answer):
    session_id: str
    status: str
    turns: int = Field(description="how many turns it holds")
    first_at: Time
    last_at: Time
    fields: dict[str, str] = Field(description="the session file's header")


class Sessions(Answer):
    sessions: list[SessionRow]


class Session(Answer):
    session_id: str
    turns: list[Item]


# ------------------------------------------------------------- proposals
class Proposal(Answer):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str
    agent: str
    from_: str = Field(alias="from", description="the agent that wrote it")
    created_at: Time
    section: str
    summary: str
    type: str = Field(description="the kind of change")
    status: str
    detail: dict[str, Any]


class Proposals(Answer):
    proposals: list[Proposal]


class Approved(Answer):
    approved: WriteReceipt


class Rejected(Answer):
    rejected: Proposal


# ----------------------------------------------------------------- audit
class AuditEntry(Answer):
    at: Time
    action: str
    target_agent: str
    source_agent: str
    section: str
    item_id: str | None
    summary: str
    outcome: str
    api_key: str | None = Field(description="the id of the API key it came through")
    user: str | None


class Audit(Answer):
    entries: list[AuditEntry]


class Stats(Answer):
    agents: dict[str, int] = Field(description="items per agent the reader may see")
    index: dict[str, Any] | None = Field(
        None, description="the index's statistics; absent unless the tenant has a memory"
    )


# ------------------------------------------------------------ keys, agents
class Key(Answer):
    """The request's API key; ``user``, ``channels`` and ``teams`` are absent unless
    the key is bound."""

    id: str
    tenant: str
    role: Literal["admin", "agent", "reader"]
    agent: str | None
    bound: bool
    user: str | None = None
    channels: list[str] | None = None
    teams: list[str] | None = None


class Agents(Answer):
    agents: list[str]


class AgentCreated(Answer):
    agent: str
    created: bool
    tenant: str


# ------------------------------------------------------------------ jobs
class Job(Answer):
    id: str
    kind: str = Field(description="decay, reflect, dream, summarize or distill")
    agent: str
    params: dict[str, Any]
    status: Literal["queued", "running", "done", "waiting", "failed", "interrupted"]
    created_at: Time
    started_at: Time | None
    finished_at: Time | None
    message: str
    result: dict[str, Any] = Field(description="what the job did, once it ended")
    resumable: bool = Field(description="interrupted: POST /v1/jobs/{id}/resume starts it again")


class Jobs(Answer):
    jobs: list[Job]


# --------------------------------------------------------------- lessons
class Lesson(Answer):
    id: str
    agent: str
    kind: Literal["reflection", "strategy"]
    text: str
    cause: str
    score: Number
    helped: int
    hurt: int
    uses: int
    streak: int
    status: str
    importance: Number
    evidence: list[str]
    tags: list[str]
    scope: Scope
    user: str | None
    channel: str | None
    team: str | None
    created_at: Time
    updated_at: Time


class Lessons(Answer):
    lessons: list[Lesson]


class Evaluation(Answer):
    is_ok: bool
    score: Number
    reasons: list[str]
    evaluator: str


class OutcomeReport(Answer):
    event: str | None = Field(description="the id of the outcome's event note")
    is_ok: bool
    reasons: list[str]
    evaluation: Evaluation
    learned: list[Lesson]
    reinforced: list[Lesson]
    credited: list[Lesson]
    retired: list[Lesson]
    reflected_by: str | None
    notes: list[str]


# ---------------------------------------------------------------- export
class Export(Answer):
    """An export document: whole (a backup ``POST /v1/import`` restores: ``files``,
    ``items``, ``audit`` and, when ``kronika.toml`` is the tenant's alone, ``settings``)
    or the reader's view (``view``: the items it may see). Fields are absent when the
    document does not hold them."""

    format: str | None = None
    version: int | None = None
    exported_at: Time | None = None
    tenant: str | None = None
    view: dict[str, Any] | None = Field(None, description="absent unless a reader's view")
    embedding_model: str | None = None
    agents: dict[str, dict[str, Any]] = Field(description="agent -> files, items, policy")
    settings: dict[str, Any] | None = None
    audit: list[AuditEntry] | None = None


class Restored(Answer):
    agents: int
    files: int
    audit_entries: int
    access_stats: int
    policies: int
    embedding_model: str
    notes: list[str]
    rules: list[str] = Field(description="what was added to kronika.toml besides agents")


# -------------------------------------------------------------- MicroDAO
class MemoryList(Answer):
    scope: str | None
    items: list[Item]


class Forgotten(Answer):
    success: bool
    receipt: ForgetReceipt


class DistillStarted(Answer):
    success: bool
    job: Job


class Health(Answer):
    status: Literal["ok"]
