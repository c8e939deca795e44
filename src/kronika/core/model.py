"""The domain model: memory items, their provenance, and the filters recall takes.

Invariants (see ``docs/domain.md``):

* Every item belongs to exactly one agent and one tenant, and cites the Markdown
  file (and line) it lives in: the Markdown workspace is the truth, the index is
  derived from it.
* A single-valued key has at most one *current* fact per agent; older values are
  kept as ``superseded`` history with their validity interval ``[valid_from,
  valid_to)``.
* All datetimes are timezone-aware UTC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum, StrEnum
from typing import Any


class ItemType(StrEnum):
    """What kind of memory an item is (SPEC M4)."""

    SENSORY = "sensory"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROFILE = "profile"
    REFLECTION = "reflection"
    STRATEGY = "strategy"
    FACT = "fact"
    SUMMARY = "summary"
    MESSAGE = "message"
    NOTE = "note"


class Layer(IntEnum):
    """Memory layer 1-4 (SPEC M4)."""

    SENSORY = 1
    WORKING = 2
    LONG_TERM = 3
    REFLECTIVE = 4


class Tier(StrEnum):
    """Short-term (messages), mid-term (summaries, notes), long-term (facts) (SPEC M5)."""

    SHORT = "short"
    MID = "mid"
    LONG = "long"


class Scope(StrEnum):
    """Who a memory is about / shared with (SPEC M5)."""

    PERSONAL = "personal"
    CHANNEL = "channel"
    TEAM = "team"
    GLOBAL = "global"


class Source(StrEnum):
    """How a fact was learned (SPEC M3)."""

    AUTO = "auto"
    EXPLICIT = "explicit"


class Status(StrEnum):
    """Whether an item is current, replaced by a newer value, or moved out of the Brain."""

    CURRENT = "current"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"


class BrainSection(StrEnum):
    """The four sections of ``brain.md`` (SPEC M2)."""

    USER = "User"
    PREFERENCES = "Preferences"
    DECISIONS = "Decisions"
    CURRENT = "Current"


class RetainKind(StrEnum):
    """Typed retained facts in daily logs and the bank (SPEC M6)."""

    WORLD = "W"
    EXPERIENCE = "B"
    OPINION = "O"
    OBSERVATION = "S"


PROFILE_SECTIONS = ("User", "Preferences")
"""The Brain sections about who the user is and what they like: their facts are ``profile``."""

FACT_TYPES = (ItemType.FACT, ItemType.PROFILE)
"""The types of key/value facts (Brain, archive, history)."""

REFINED: dict[ItemType, tuple[ItemType, ...]] = {
    ItemType.FACT: (ItemType.PROFILE,),
    ItemType.NOTE: (ItemType.SEMANTIC,),
    ItemType.SUMMARY: (ItemType.EPISODIC,),
}
"""The long-term types (SPEC M4) that refine a kind of record: a profile fact is a fact,
a semantic note a note, an episodic summary a summary."""


def fact_type(section: str | None) -> ItemType:
    """``profile`` for a fact of the User or Preferences section (identity, likes);
    ``fact`` for the rest (Decisions, Current: what is being done)."""
    return ItemType.PROFILE if section in PROFILE_SECTIONS else ItemType.FACT


def note_type(kind: RetainKind | None) -> ItemType:
    """``semantic`` for a world note (``W``: what is true of the world); ``note`` for
    experience, opinion and observation notes and untyped ones."""
    return ItemType.SEMANTIC if kind is RetainKind.WORLD else ItemType.NOTE


def widened_types(types: tuple[ItemType, ...]) -> tuple[ItemType, ...]:
    """``types`` and the types that refine them (:data:`REFINED`), in order, once each:
    a filter on ``fact`` takes profile facts too."""
    out = dict.fromkeys(types)
    for wanted in types:
        out.update(dict.fromkeys(REFINED.get(wanted, ())))
    return tuple(out)


def layer_counts(by_layer: dict[Any, Any]) -> dict[str, int]:
    """Item counts keyed by layer number, as ``{"1 sensory": n, …}`` in layer order."""
    return {
        f"{int(k)} {Layer(int(k)).name.lower().replace('_', '-')}": int(v)
        for k, v in sorted(by_layer.items(), key=lambda kv: int(kv[0]))
    }


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where an item lives and where it came from.

    ``path`` is relative to the agent's folder (``memory/2025-11-27.md``), ``line``
    is 1-based. ``turn_ids`` are the original ids of the conversation turns the
    item was taken from (``D1:3`` in LoCoMo, ``<session>_<n>`` in LongMemEval).
    """

    path: str
    line: int | None = None
    session_id: str | None = None
    turn_ids: tuple[str, ...] = ()

    def citation(self) -> str:
        """``memory/2025-11-27.md#L12`` (or just the path when there is no line)."""
        return f"{self.path}#L{self.line}" if self.line else self.path


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One unit of memory: a fact, a conversation turn, a note, a summary…

    ``created_at`` is when the thing was said or happened (for an imported
    conversation: the session's date), ``updated_at`` when it last changed.
    ``last_accessed_at`` / ``access_count`` are usage statistics kept by the index.
    """

    id: str
    agent: str
    content: str
    type: ItemType
    layer: Layer
    tier: Tier
    created_at: datetime
    updated_at: datetime
    provenance: Provenance
    tenant: str = "default"
    scope: Scope = Scope.PERSONAL
    channel: str | None = None
    user: str | None = None
    team: str | None = None
    key: str | None = None
    value: str | None = None
    multi: bool = False
    source: Source = Source.AUTO
    section: str | None = None
    kind: RetainKind | None = None
    confidence: float | None = None
    importance: float = 0.5
    status: Status = Status.CURRENT
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    speaker: str | None = None
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    last_accessed_at: datetime | None = None
    access_count: int = 0


class LinkKind(StrEnum):
    """How one item leads to another (SPEC S3, F2), named after what the link points to.

    ``reflection``: from an event to the reflection drawn from it; ``strategy``: from an
    error or a reflection to the strategy that answers it; ``related``: two items that
    belong together, read the same way from either end.
    """

    REFLECTION = "reflection"
    STRATEGY = "strategy"
    RELATED = "related"


@dataclass(frozen=True, slots=True)
class ItemLink:
    """A link ``from_id -> to_id`` between two items of one agent's memory.

    A ``related`` link has no direction: it is stored with its ends in sorted order, so
    ``a related b`` and ``b related a`` are one link (:meth:`normalised`).
    """

    from_id: str
    to_id: str
    kind: LinkKind
    created_at: datetime | None = None

    def normalised(self) -> ItemLink:
        if self.kind is LinkKind.RELATED and self.to_id < self.from_id:
            return ItemLink(self.to_id, self.from_id, self.kind, self.created_at)
        return self

    @property
    def identity(self) -> tuple[str, str, str]:
        """What makes two links the same link (its time aside)."""
        link = self.normalised()
        return (link.from_id, link.to_id, link.kind.value)

    def touches(self, item_id: str) -> bool:
        return item_id in (self.from_id, self.to_id)


@dataclass(frozen=True, slots=True)
class Reader:
    """Who is reading, and in which channel (SPEC M5): the context every read path
    takes. ``teams`` are the teams ``user`` belongs to."""

    tenant: str = "default"
    user: str | None = None
    channel: str | None = None
    teams: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RecallFilter:
    """Restrictions a recall applies before ranking. Empty tuples mean "any"."""

    agents: tuple[str, ...] = ()
    tenant: str | None = None
    scopes: tuple[Scope, ...] = ()
    types: tuple[ItemType, ...] = ()
    keys: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    speakers: tuple[str, ...] = ()
    channel: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    as_of: datetime | None = None
    include_superseded: bool = False
    include_archived: bool = True
    reader: Reader | None = None
    """Who reads, and where: only items :func:`kronika.core.visibility.visible` to them
    pass. ``None`` reads without that restriction (maintenance, the workspace owner)."""

    def __post_init__(self) -> None:
        # a filter on a kind of record takes the long-term types that refine it
        object.__setattr__(self, "types", widened_types(tuple(self.types)))


@dataclass(frozen=True, slots=True)
class ScoreParts:
    """The pieces of one recall score (SPEC R3), kept for logs and ``--explain``."""

    relevance: float
    importance: float
    recency: float
    total: float
    lexical_rank: int | None = None
    vector_similarity: float | None = None
    rerank_score: float | None = None
    """The reranker's own score, when one read this item (its scale is the reranker's)."""
    history: str | None = None
    """Why a past value of a fact was recalled without ``as_of``: "true then (…)" for a
    period the question names, "the value before 'Google' (…)" for "before X"."""


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One recalled item with its score and citation (SPEC R2)."""

    item: MemoryItem
    score: ScoreParts
    tokens: int

    @property
    def citation(self) -> str:
        return self.item.provenance.citation()


@dataclass(frozen=True, slots=True)
class RecallResult:
    """What ``Memory.recall`` returns: the packed hits and how they were chosen."""

    query: str
    hits: tuple[RecallHit, ...]
    total_tokens: int
    budget_tokens: int | None
    candidates: int
    dropped_for_budget: int = 0
    notes: tuple[str, ...] = field(default=())


ASSISTANT_SPEAKER = "assistant"
"""The speaker of an AI assistant's turns: what kronika's own chat sessions write, and
the role chat-format imports (OpenAI messages, LongMemEval) carry."""


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One conversation turn to be stored (input to ``save_turn`` and importers).

    ``turn_id`` keeps the original id (``D1:3``, ``<session>_<n>``) so evidence can be
    traced through provenance.
    """

    turn_id: str
    speaker: str
    content: str
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A whole conversation session to be stored as ``sessions/<session_id>.md``."""

    session_id: str
    started_at: datetime
    turns: tuple[TurnRecord, ...]
    title: str | None = None
    source: str | None = None


class SessionStatus(StrEnum):
    """Where a live conversation stands (``status:`` in its session file's header, L5-L8).

    ``open`` while it runs; ``ended`` once it is over and waiting for consolidation
    (extraction is queued until a model answers); ``consolidated`` when its facts and
    summary are in memory; ``failed`` after too many failed attempts (retried only on
    request).
    """

    OPEN = "open"
    ENDED = "ended"
    CONSOLIDATED = "consolidated"
    FAILED = "failed"
