"""The changes a write is made of: one frozen value per kind of change, handed to
:meth:`~kronika.engine.write.MemoryWriter.memory_write` (and checked by
:mod:`~kronika.engine.policy_gate` before it is applied)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kronika.core.lessons import Lesson
from kronika.core.model import MemoryItem, SessionRecord, TurnRecord
from kronika.core.visibility import OWNER, Audience


@dataclass(frozen=True, slots=True)
class AddFact:
    """A new fact. This, :class:`TouchFact` and :class:`SupersedeFact` are what
    :class:`kronika.engine.remember.FactPlacer` decides a remembered fact becomes."""

    item: MemoryItem


@dataclass(frozen=True, slots=True)
class TouchFact:
    """An exact duplicate was remembered again: refresh ``updated_at`` only (SPEC M3)."""

    item: MemoryItem


@dataclass(frozen=True, slots=True)
class SupersedeFact:
    old_id: str
    new: MemoryItem


@dataclass(frozen=True, slots=True)
class ArchiveFacts:
    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RemoveItem:
    item: MemoryItem


@dataclass(frozen=True, slots=True)
class ForgetItems:
    """Forget ``items`` and redact ``phrases`` wherever else they are written, except in
    the items ``keep`` names (the ones the caller may not see; see
    :mod:`kronika.engine.forgetting`); its audit entry never holds the forgotten text."""

    items: tuple[MemoryItem, ...]
    phrases: tuple[str, ...]
    keep: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AppendNote:
    item: MemoryItem


@dataclass(frozen=True, slots=True)
class AppendTurn:
    session_id: str
    turn: TurnRecord
    started_at: datetime
    header: tuple[tuple[str, str], ...] = ()
    """Extra header fields of a session file this turn creates (``source``, ``status``)."""


@dataclass(frozen=True, slots=True)
class UpdateSession:
    """Change header fields of a session file (its status, summary, attempts…);
    a ``None`` value removes the field."""

    session_id: str
    fields: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class WriteSummary:
    """Write an L1/L2 summary file (``path`` is ``summaries/L1|L2/<name>.md``)."""

    path: str
    text: str
    fields: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class WriteSession:
    session: SessionRecord


@dataclass(frozen=True, slots=True)
class SetActiveContext:
    text: str
    owners: Audience = OWNER
    """Who the summarised session was for: readers who may not see it do not get it."""


@dataclass(frozen=True, slots=True)
class RestoreFile:
    """Write a whole Markdown file back (importing an export); ``path`` is agent-relative."""

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class UpdateNote:
    """Rewrite a note where it stands (an opinion's confidence moved by the reflect job)."""

    item: MemoryItem


@dataclass(frozen=True, slots=True)
class WriteEntityPage:
    """Write an entity page ``bank/entities/<Name>.md`` (the reflect job keeps a section
    of it; the rest is the person's)."""

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class WriteLessons:
    """Add or update lessons (:mod:`kronika.core.lessons`) in ``lessons.md``; ``what``
    is the audit's one-line account (``learned``, ``helped``, ``hurt``, ``retired``)."""

    lessons: tuple[Lesson, ...]
    what: str


Change = (
    AddFact
    | TouchFact
    | SupersedeFact
    | ArchiveFacts
    | RemoveItem
    | ForgetItems
    | AppendNote
    | AppendTurn
    | UpdateSession
    | WriteSummary
    | WriteSession
    | SetActiveContext
    | RestoreFile
    | WriteLessons
    | WriteEntityPage
    | UpdateNote
)
