"""The memory browser's pages: summaries, entity pages, opinions, a fact's explanation and
the Markdown zip of an export.

Every page is built from reads made *as the caller*: the memory is the caller's view
(:func:`~kronika.server.access.reading`), so each item on a page is one the reader may
see. The files the jobs write (``bank/entities/<Name>.md``, ``bank/opinions.md``, the
session headers) are never sent as they stand: they list everyone's memories. A page is
drawn again from the items those files were drawn from, as the reader sees them:

* an **entity page** is the reader's current facts and notes that mention the entity,
  its opinions with their evidence, and the lines written by hand on its page;
* an **opinion** is a note of kind ``O`` with its confidence; its **evidence** is the
  items linked to it (the reflect job links each piece it weighed) that the reader sees;
* a session's **summary** is its header's ``summary`` when the reader sees the session's
  turns (a header is written for the session's audience), and the L1/L2 summaries that
  cover the session and that the reader sees.

No memory logic lives here: these are reads of :class:`~kronika.memory.Memory`.
"""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, datetime, timedelta
from typing import Any

from kronika import wire
from kronika.core.entities import normalize_entity
from kronika.core.model import FACT_TYPES, ItemType, MemoryItem, RetainKind
from kronika.engine.backup_format import markdown_files
from kronika.errors import InvalidInput, NotFound
from kronika.memory import Memory
from kronika.server.access import Caller, Forbidden
from kronika.server.service import Service

ENTITY_DIR = "bank/entities/"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ZIP_EPOCH = datetime(1980, 1, 1, tzinfo=UTC)  # the earliest time a zip entry can hold
SCAN = 10_000
"""How many of an agent's newest notes a page looks through (facts are read whole)."""


def _known(memory: Memory, agent: str) -> list[MemoryItem]:
    """The agent's current facts and its newest notes, as the reader sees them."""
    facts = memory.facts(agent=agent, include_archived=False)
    notes = memory.items(agent=agent, types=(ItemType.NOTE,), limit=SCAN)
    return facts + notes


def _mentions(item: MemoryItem, wanted: str) -> bool:
    return any(normalize_entity(e) == wanted for e in item.entities)


def _is_opinion(item: MemoryItem) -> bool:
    return item.type is ItemType.NOTE and item.kind is RetainKind.OPINION


def _page_names(memory: Memory, agent: str) -> dict[str, str]:
    """``normalized name -> name`` of every entity page the agent has."""
    names = {}
    for source in memory.workspace.list_sources(agent):
        if source.path.startswith(ENTITY_DIR) and source.path.endswith(".md"):
            name = source.path[len(ENTITY_DIR) : -3]
            names[normalize_entity(name)] = name
    return names


def entities(svc: Service, caller: Caller, agent: str) -> dict[str, Any]:
    """The entity pages of which the reader sees something, with how many items each."""
    with svc.reading(caller, agent) as memory:
        pages = _page_names(memory, agent)
        counts: dict[str, int] = {}
        for item in _known(memory, agent):
            on_page = item.provenance.path.startswith(ENTITY_DIR)
            named = {normalize_entity(e) for e in item.entities}
            if on_page:
                named.add(normalize_entity(item.provenance.path[len(ENTITY_DIR) : -3]))
            for wanted in named & pages.keys():
                counts[wanted] = counts.get(wanted, 0) + 1
    found = [{"name": pages[k], "items": n} for k, n in counts.items()]
    return {"entities": sorted(found, key=lambda e: str(e["name"]).casefold())}


def entity(svc: Service, caller: Caller, agent: str, name: str) -> dict[str, Any]:
    """One entity's page as the reader sees it (404 when they see nothing of it)."""
    if "/" in name or "\\" in name or not name.strip():
        raise InvalidInput(f"{name!r} is not an entity name")
    wanted = normalize_entity(name)
    with svc.reading(caller, agent) as memory:
        pages = _page_names(memory, agent)
        path = f"{ENTITY_DIR}{pages.get(wanted, name)}.md"
        known = _known(memory, agent)
        written = [it for it in known if it.provenance.path == path]
        about = [it for it in known if it.provenance.path != path and _mentions(it, wanted)]
        about.sort(key=lambda it: (it.created_at, it.id))  # a page reads oldest first
        opinions = [_opinion(memory, agent, it) for it in about if _is_opinion(it)]
    if not (written or about):
        raise NotFound(f"agent {agent!r} has no page about {name!r} that this key may see")
    return {
        "name": pages.get(wanted, name),
        "path": path if wanted in pages else None,
        "facts": [wire.item(it) for it in about if it.type in FACT_TYPES],
        "notes": [
            wire.item(it)
            for it in about
            if it.type in (ItemType.NOTE, ItemType.SEMANTIC) and not _is_opinion(it)
        ],
        "opinions": opinions,
        "written": [wire.item(it) for it in written],
    }


def _opinion(memory: Memory, agent: str, item: MemoryItem) -> dict[str, Any]:
    """An opinion with its evidence: the items linked to it that the reader sees."""
    evidence = []
    for link in memory.links(item.id, agent=agent):
        other = link.to_id if link.from_id == item.id else link.from_id
        try:
            found = memory.get(other, agent=agent)
        except NotFound:
            continue
        evidence.append({"kind": link.kind.value, "item": wire.item(found)})
    return {**wire.item(item), "evidence": evidence}


def opinions(svc: Service, caller: Caller, agent: str) -> dict[str, Any]:
    """Every opinion the reader sees, most confident first, with its evidence."""
    with svc.reading(caller, agent) as memory:
        notes = memory.items(agent=agent, types=(ItemType.NOTE,), limit=SCAN)
        found = [_opinion(memory, agent, it) for it in notes if _is_opinion(it)]
    found.sort(key=lambda o: -1.0 if o["confidence"] is None else -float(o["confidence"]))
    return {"opinions": found}


def _covering(memory: Memory, agent: str) -> list[MemoryItem]:
    """The L1/L2 summaries the reader sees, oldest first."""
    found = memory.items(agent=agent, types=(ItemType.SUMMARY,), limit=SCAN)
    kept = [it for it in found if it.provenance.path.startswith("summaries/")]
    return sorted(kept, key=lambda it: (it.created_at, it.id))


def _summary(item: MemoryItem) -> dict[str, Any]:
    sessions = [t.split(":", 1)[1] for t in item.tags if t.startswith("session:")]
    level = item.provenance.path.split("/")[1] if item.provenance.path.count("/") >= 2 else ""
    return {**wire.item(item), "level": level, "sessions": sessions}


def summaries(svc: Service, caller: Caller, agent: str) -> dict[str, Any]:
    """The session summaries and the L1/L2 summaries the reader sees."""
    with svc.reading(caller, agent) as memory:
        sessions = []
        for header in memory.workspace.session_headers(agent):
            said = header.fields.get("summary")
            if said and memory.load_session(header.session_id, agent=agent):
                sessions.append(
                    {"session_id": header.session_id, "status": header.status, "summary": said}
                )
        levels = [_summary(it) for it in _covering(memory, agent)]
    return {"sessions": sessions, "summaries": levels}


def session_summary(svc: Service, caller: Caller, agent: str, session_id: str) -> dict[str, Any]:
    """One session's summary and the L1/L2 summaries that cover it (404 for a session
    that does not exist or whose turns the reader may not see)."""
    with svc.reading(caller, agent) as memory:
        turns = memory.load_session(session_id, agent=agent)
        header = next(
            (h for h in memory.workspace.session_headers(agent) if h.session_id == session_id),
            None,
        )
        if header is None or not turns:
            raise NotFound(f"agent {agent!r} has no session {session_id!r} this key may see")
        levels = [
            _summary(it) for it in _covering(memory, agent) if f"session:{session_id}" in it.tags
        ]
    return {
        "session_id": session_id,
        "status": header.status,
        "summary": header.fields.get("summary") or None,
        "turns": len(turns),
        "summaries": levels,
    }


def explanation(svc: Service, caller: Caller, agent: str, target: str) -> dict[str, Any]:
    """``kronika explain`` for one item id or fact key, as the reader sees it."""
    from kronika.workflows.explain import explain, explanation_json

    with svc.reading(caller, agent) as memory:
        return explanation_json(explain(memory, target, agent=agent))


def markdown_zip(svc: Service, caller: Caller, agent: str | None) -> bytes:
    """The export's Markdown files as a zip (``<agent>/<path>``, with their times), as
    ``kronika export --markdown`` writes them. Only a whole export has files: the files
    hold everyone's memories, so anyone reading a view of them is refused."""
    document = svc.export(caller, agent)
    agents = document.get("agents", {})
    if document.get("view") is not None or any("files" not in a for a in agents.values()):
        raise Forbidden(
            "the Markdown files hold every reader's memories: their zip needs an admin key "
            "of the whole tenant, reading for no particular user or channel"
        )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, text, moment in markdown_files(document):
            when = _EPOCH + timedelta(microseconds=(moment or 0) // 1000)
            entry = zipfile.ZipInfo(path, date_time=max(when, _ZIP_EPOCH).timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, text.encode("utf-8"))
    return buffer.getvalue()
