"""Why an item exists: where it came from and everything that happened to it.

``explain(memory, "f-…")`` (an id) or ``explain(memory, "city")`` (a fact key: its
current value) gathers, from what kronika already keeps — the item, its key's history,
the audit trail and the session it was taken from:

* the item as it is now (status, validity, citation);
* its **origin**: remembered by the user or an agent, taken by the rule extractor or by
  a consolidation (prompt id and model) from which session and turns, imported, written
  by hand in the Markdown (no audit entry: a hand edit);
* its **events**: every audit entry about it or its key's values (remember, refresh,
  supersede, archive, approve/reject of a proposal), oldest first;
* its **lineage**: the values its key had before and after, with validity intervals.

Nothing here writes: explaining is a read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kronika.core.model import MemoryItem
from kronika.core.text import normalize_key
from kronika.errors import NotFound
from kronika.memory import Memory
from kronika.ports import AuditEntry

_EXTRACTOR_TAGS = ("rules", "extraction")


@dataclass(frozen=True, slots=True)
class Origin:
    how: str  # remembered | extracted | consolidated | imported | hand-written | conversation
    by: str | None = None  # user, an agent, the extractor id
    session_id: str | None = None
    turn_ids: tuple[str, ...] = ()
    turns: tuple[str, ...] = ()  # "speaker: text" of the turns it came from
    model: str | None = None


@dataclass(frozen=True, slots=True)
class Explanation:
    item: MemoryItem
    origin: Origin
    events: tuple[AuditEntry, ...] = ()
    lineage: tuple[MemoryItem, ...] = ()
    notes: tuple[str, ...] = field(default=())


def explain(memory: Memory, target: str, *, agent: str | None = None) -> Explanation:
    """Explain the item with id ``target``, or else the current fact with key ``target``."""
    item = _find(memory, target, agent)
    lineage = tuple(memory.history(item.key, agent=item.agent)) if item.key else ()
    ids = {item.id, *(it.id for it in lineage)}
    events = tuple(
        e
        for e in memory.audit(agent=item.agent)
        if (e.item_id in ids)
        or any(i in e.summary for i in ids if e.action in ("approve", "reject", "archive"))
    )
    return Explanation(item, _origin(memory, item, events), events, lineage)


def _find(memory: Memory, target: str, agent: str | None) -> MemoryItem:
    try:
        return memory.get(target, agent=agent)
    except NotFound:
        pass
    wanted = normalize_key(target)
    current = [f for f in memory.facts(agent=agent) if f.key and normalize_key(f.key) == wanted]
    if not current:
        raise NotFound(f"no memory item with id {target!r} and no fact with that key")
    return max(current, key=lambda f: f.updated_at)


def _origin(memory: Memory, item: MemoryItem, events: tuple[AuditEntry, ...]) -> Origin:
    session_id = item.provenance.session_id or _session_tag(item)
    made = next((e for e in events if e.item_id == item.id and e.outcome == "applied"), None)
    if item.speaker is not None and session_id:
        return Origin("conversation", item.speaker, session_id, item.provenance.turn_ids, (), None)
    extractor = next((t for t in item.tags if t.startswith(_EXTRACTOR_TAGS)), None)
    turns: tuple[str, ...] = ()
    model = None
    if session_id:
        stored = memory.load_session(session_id, agent=item.agent)
        wanted = set(item.provenance.turn_ids)
        picked = [t for t in stored if wanted and _turn_id(t) in wanted]
        if not picked and item.value:
            needle = item.value.casefold()
            picked = [t for t in stored if needle in t.content.casefold()]
        turns = tuple(f"{t.speaker}: {t.content}" for t in picked[:5])
        model = _session_model(memory, item.agent, session_id)
    if extractor is not None:
        how = "consolidated" if extractor.startswith("extraction") else "extracted"
        return Origin(how, extractor, session_id, item.provenance.turn_ids, turns, model)
    if made is None:
        how = "imported" if session_id else "hand-written"
        return Origin(how, None, session_id, item.provenance.turn_ids, turns, None)
    return Origin("remembered", made.source_agent, session_id, item.provenance.turn_ids, turns)


def _session_tag(item: MemoryItem) -> str | None:
    return next((t.split(":", 1)[1] for t in item.tags if t.startswith("session:")), None)


def _turn_id(turn: MemoryItem) -> str | None:
    return turn.provenance.turn_ids[0] if turn.provenance.turn_ids else None


def _session_model(memory: Memory, agent: str, session_id: str) -> str | None:
    for header in memory.workspace.session_headers(agent):
        if header.session_id == session_id:
            return header.fields.get("model")
    return None


def when(moment: datetime | None) -> str:
    return moment.isoformat(timespec="seconds") if moment else "—"


def explanation_json(found: Explanation) -> dict[str, Any]:
    """The explanation as JSON (``kronika explain --json``, ``GET …/explain/{target}``)."""
    item, origin = found.item, found.origin
    return {
        "item": {
            "id": item.id,
            "agent": item.agent,
            "content": item.content,
            "type": item.type.value,
            "key": item.key,
            "value": item.value,
            "status": item.status.value,
            "source": item.source.value,
            "created_at": item.created_at.isoformat(),
            "valid_from": item.valid_from.isoformat() if item.valid_from else None,
            "valid_to": item.valid_to.isoformat() if item.valid_to else None,
            "citation": item.provenance.citation(),
        },
        "origin": {
            "how": origin.how,
            "by": origin.by,
            "session_id": origin.session_id,
            "turn_ids": list(origin.turn_ids),
            "turns": list(origin.turns),
            "model": origin.model,
        },
        "events": [
            {
                "at": e.at.isoformat(),
                "action": e.action,
                "by": e.source_agent,
                "outcome": e.outcome,
                "item": e.item_id,
                "summary": e.summary,
            }
            for e in found.events
        ],
        "lineage": [
            {
                "id": it.id,
                "value": it.value or it.content,
                "status": it.status.value,
                "valid_from": it.valid_from.isoformat() if it.valid_from else None,
                "valid_to": it.valid_to.isoformat() if it.valid_to else None,
            }
            for it in found.lineage
        ],
    }
