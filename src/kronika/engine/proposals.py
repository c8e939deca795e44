"""Proposals: changes an agent at autonomy 1 ("suggest") made, waiting for the person.

The write path hands every proposed change to :meth:`ProposalBook.record`, which keeps
it in ``<agent>/proposals.md`` (format in :mod:`kronika.stores.markdown.proposals`)
with everything needed to replay it: the change itself, serialised exactly, its
section and who proposed it.

* **Approving** (:meth:`kronika.Memory.approve`) applies the stored change through the
  single write path as the person (``source_agent="user"``), so autonomy does not hold
  it back. A fact is applied to memory as it is *now*: if the value it replaces is gone,
  the new value is simply added (or replaces the value the key has now), and a value
  that is already known is only refreshed. The proposal's line is then removed and the
  audit trail gets an ``approve`` entry beside the applied change.
* **Rejecting** removes the line; the audit trail gets a ``reject`` entry.

Settled proposals are removed rather than ticked so the file only ever lists what is
still waiting; the audit trail keeps what was decided. A line that cannot be read is
logged as a warning and skipped; the other proposals still work.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, fields
from datetime import datetime
from enum import Enum
from typing import Any

from kronika.core.lessons import Lesson
from kronika.core.model import MemoryItem, Scope, SessionRecord, TurnRecord
from kronika.core.serialize import item_from_dict, item_to_dict
from kronika.core.visibility import OWNER, Audience
from kronika.engine.changes import (
    AddFact,
    AppendNote,
    AppendTurn,
    ArchiveFacts,
    Change,
    ForgetItems,
    RemoveItem,
    RestoreFile,
    SetActiveContext,
    SupersedeFact,
    TouchFact,
    UpdateNote,
    UpdateSession,
    WriteEntityPage,
    WriteLessons,
    WriteSession,
    WriteSummary,
)
from kronika.engine.write import USER, describe_change
from kronika.errors import InvalidInput, NotFound
from kronika.ports import AuditEntry, AuditLog, Clock, acting
from kronika.stores.markdown.proposals import ProposalEntry, new_proposal_id
from kronika.stores.markdown.workspace import MarkdownWorkspace

log = logging.getLogger("kronika.proposals")

_CHANGES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        AddFact,
        TouchFact,
        SupersedeFact,
        ArchiveFacts,
        RemoveItem,
        ForgetItems,
        AppendNote,
        AppendTurn,
        UpdateSession,
        WriteSummary,
        WriteSession,
        SetActiveContext,
        RestoreFile,
        WriteLessons,
        WriteEntityPage,
        UpdateNote,
    )
}
_ITEM_DEFAULTS = {
    f.name: f.default.value if isinstance(f.default, Enum) else f.default
    for f in fields(MemoryItem)
    if f.default is not MISSING
}


@dataclass(frozen=True, slots=True)
class Proposal:
    """A change waiting for the person: ``agent`` is whose memory it would change,
    ``source_agent`` who proposed it, ``summary`` a readable line."""

    id: str
    agent: str
    source_agent: str
    created_at: datetime
    section: str
    summary: str
    change: Change
    status: str = "pending"


# ----------------------------------------------------------------------- change codec
def _encode(value: Any) -> Any:
    match value:
        case MemoryItem():
            data = item_to_dict(value)
            del data["citation"]
            for name, default in _ITEM_DEFAULTS.items():
                if data[name] == default or data[name] == []:
                    del data[name]
            return data
        case datetime():
            return value.isoformat()
        case TurnRecord() | SessionRecord() | Lesson():
            return {f.name: _encode(getattr(value, f.name)) for f in fields(value)}
        case tuple():
            return [_encode(v) for v in value]
        case Audience():
            return {f.name: getattr(value, f.name) for f in fields(value)}
    return value


def _turn(data: Mapping[str, Any]) -> TurnRecord:
    at = data.get("at")
    return TurnRecord(
        str(data["turn_id"]),
        str(data["speaker"]),
        str(data["content"]),
        datetime.fromisoformat(at) if at else None,
    )


def _lesson(data: Mapping[str, Any]) -> Lesson:
    return Lesson(
        id=str(data["id"]),
        agent=str(data["agent"]),
        kind=str(data["kind"]),
        text=str(data["text"]),
        cause=str(data["cause"]),
        created_at=datetime.fromisoformat(data["created_at"]),
        updated_at=datetime.fromisoformat(data["updated_at"]),
        helped=int(data["helped"]),
        hurt=int(data["hurt"]),
        uses=int(data["uses"]),
        streak=int(data.get("streak", 0)),
        status=str(data["status"]),
        importance=float(data["importance"]),
        evidence=tuple(str(v) for v in data["evidence"]),
        tags=tuple(str(v) for v in data["tags"]),
        owners=_decode("owners", data["owners"]) if data.get("owners") else OWNER,
    )


def _decode(name: str, value: Any) -> Any:
    match name:
        case "item" | "new":
            return item_from_dict(value)
        case "items":
            return tuple(item_from_dict(v) for v in value)
        case "phrases" | "keep":
            return tuple(str(v) for v in value)
        case "started_at":
            return datetime.fromisoformat(value)
        case "turn":
            return _turn(value)
        case "session":
            return SessionRecord(
                session_id=str(value["session_id"]),
                started_at=datetime.fromisoformat(value["started_at"]),
                turns=tuple(_turn(t) for t in value["turns"]),
                title=value.get("title"),
                source=value.get("source"),
            )
        case "ids":
            return tuple(str(v) for v in value)
        case "lessons":
            return tuple(_lesson(v) for v in value)
        case "header" | "fields":
            return tuple((str(k), v) for k, v in value)
        case "owners":
            return Audience(Scope(value["scope"]), value["user"], value["channel"], value["team"])
    if not isinstance(value, str):
        raise TypeError(f"{name} should be text")
    return value


def change_to_dict(change: Change) -> dict[str, Any]:
    """``change`` as a JSON-ready dict (``type`` names its class)."""
    data = {f.name: _encode(getattr(change, f.name)) for f in fields(change)}
    return {"type": type(change).__name__, **data}


def change_from_dict(data: Mapping[str, Any]) -> Change:
    """The inverse of :func:`change_to_dict`; ``ValueError`` when ``data`` is not one."""
    cls = _CHANGES.get(str(data.get("type")))
    if cls is None:
        raise ValueError(f"unknown change type {data.get('type')!r}")
    try:
        given = (f for f in fields(cls) if f.name in data)  # a missing default keeps it
        change: Change = cls(**{f.name: _decode(f.name, data[f.name]) for f in given})
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"a {cls.__name__} that cannot be read ({exc!r})") from exc
    return change


def _fact(item: MemoryItem) -> str:
    return f"**{item.key}**: {item.value}" if item.key else item.content


def fact_of(change: Change) -> MemoryItem | None:
    """The fact a proposal would store (``None`` when it stores no fact)."""
    match change:
        case AddFact(item) | TouchFact(item):
            return item
        case SupersedeFact(_, new):
            return new
    return None


def items_of(change: Change) -> tuple[MemoryItem, ...]:
    """The memory items a change would store or remove (none for bookkeeping: turns,
    session headers, summaries)."""
    match change:
        case AddFact(item) | TouchFact(item) | AppendNote(item) | RemoveItem(item):
            return (item,)
        case SupersedeFact(_, new):
            return (new,)
        case ForgetItems(items, _):
            return tuple(items)
    return ()


def _audited(proposal: Proposal) -> str:
    """The proposal as the audit trail keeps it: a forget is named by its ids and keys,
    never by what it forgets."""
    if isinstance(proposal.change, ForgetItems | RemoveItem):
        return describe_change(proposal.change)[2]
    return proposal.summary


# --------------------------------------------------------------------------- the book
class ProposalBook:
    """Keeps, lists and settles the proposals of every agent in ``proposals.md``."""

    def __init__(self, *, workspace: MarkdownWorkspace, audit: AuditLog, clock: Clock) -> None:
        self._workspace = workspace
        self._audit = audit
        self._clock = clock

    def record(self, entry: AuditEntry, change: Change) -> str:
        """Keep a proposed change (the write path's ``on_proposed``); returns its id."""
        return self.record_all(entry.target_agent, [(entry, change)])[0]

    def record_all(self, agent: str, proposed: Sequence[tuple[AuditEntry, Change]]) -> list[str]:
        """Keep proposed changes to ``agent``'s memory in one write of ``proposals.md``
        (all of them or, when that write fails, none); returns their ids, in order."""
        taken = {e.id for e in self._workspace.read_proposals(agent).entries}
        kept: list[ProposalEntry] = []
        for entry, change in proposed:
            proposal = ProposalEntry(
                id=new_proposal_id(taken),
                source_agent=entry.source_agent,
                created_at=entry.at,
                section=entry.section,
                text=self._text(agent, change),
                payload=change_to_dict(change),
            )
            taken.add(proposal.id)
            kept.append(proposal)
        if kept:
            self._workspace.document_files.add_proposals(agent, kept)
        return [p.id for p in kept]

    def _text(self, agent: str, change: Change) -> str:
        match change:
            case AddFact(item):
                return f"remember {_fact(item)}"
            case TouchFact(item):
                return f"refresh {_fact(item)}"
            case SupersedeFact(old_id, new):
                old = [f for f in self._workspace.brain_facts(agent) if f.id == old_id]
                was = (old[0].value or old[0].content) if old else old_id
                return f"update {_fact(new)} (was {was})"
            case RemoveItem(item):
                return f"forget {_fact(item)}"
            case ForgetItems(items, phrases):
                listed = "; ".join(_fact(it) for it in items)
                extra = [p for p in phrases if p not in {it.value or it.content for it in items}]
                also = f" (and redact {'; '.join(extra)})" if extra else ""
                return f"forget {listed}{also}, wherever it is written"
        action, _, summary = describe_change(change)
        return f"{action} {summary}"

    def pending(self, agent: str) -> list[Proposal]:
        """``agent``'s waiting proposals, oldest first; unreadable lines are logged."""
        parsed = self._workspace.read_proposals(agent)
        for warning in parsed.warnings:
            log.warning("%s: %s", agent, warning)
        found = []
        for entry in parsed.entries:
            try:
                change = change_from_dict(entry.payload)
            except ValueError as exc:
                line, pid = entry.line, entry.id
                log.warning("%s: proposals.md line %d (%s) was skipped: %s", agent, line, pid, exc)
                continue
            found.append(
                Proposal(
                    entry.id,
                    agent,
                    entry.source_agent,
                    entry.created_at,
                    entry.section,
                    self._text(agent, change),
                    change,
                )
            )
        return found

    def find(self, agents: Sequence[str], proposal_id: str) -> Proposal:
        """The waiting proposal ``proposal_id`` of one of ``agents``."""
        found = [p for agent in agents for p in self.pending(agent) if p.id == proposal_id]
        if not found:
            where = f" for agent {agents[0]!r}" if len(agents) == 1 else ""
            raise NotFound(
                f"no proposal {proposal_id!r} is waiting{where}; `kronika proposals` lists them"
            )
        if len(found) > 1:
            names = ", ".join(p.agent for p in found)
            raise InvalidInput(f"proposal {proposal_id!r} exists for {names}: name the agent")
        return found[0]

    def settle(self, proposal: Proposal, action: str) -> None:
        """Remove ``proposal`` and audit the decision (``approve`` or ``reject``)."""
        self._workspace.remove_proposal(proposal.agent, proposal.id)
        self._audit.append(
            AuditEntry(
                at=self._clock.now(),
                action=action,
                target_agent=proposal.agent,
                source_agent=USER,
                section=proposal.section,
                item_id=describe_change(proposal.change)[1],
                summary=f"[{proposal.id}] {_audited(proposal)}"[:200],
                outcome="applied",
                **acting(),
            )
        )
