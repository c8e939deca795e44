"""Copies of what a file lost at once, kept until it is back.

When a sync finds that a file holds much less than the index had of it (truncated,
emptied, deleted: :func:`lost_at_once`), the index's copy of the lost items is written
to ``<agent>/.corrupt/<path, / as __>.lost.<UTC time>`` before the index forgets them:
a fact file's facts as a fact file (ready to be copied back), anything else as JSON
(``{"path": …, "items": [{"id", "content", "speaker", "turn", "at"}]}``).

:func:`kept_copies` finds every such copy whose items are still in no file, so
``kronika doctor`` reports it on every run until it is dealt with; :func:`put_back`
(``doctor --fix``) writes facts, conversation turns and daily-log notes back where
they were, and renames the copy ``….restored`` so it is never put back twice. What it
cannot write back (a summary, the Active Context, a bank or entity page, lessons) stays
reported, naming the copy that holds the text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier, TurnRecord
from kronika.stores.markdown import brain
from kronika.stores.markdown.files import keep_copy
from kronika.stores.markdown.layout import CORRUPT_DIR, SourceKind, classify
from kronika.stores.markdown.meta import format_time, parse_time
from kronika.stores.markdown.workspace import MarkdownWorkspace

LOST = ".lost."
RESTORED = ".restored"
"""Added to the name of a copy of lost items once they were put back."""
RESTORABLE = (SourceKind.FACTS, SourceKind.SESSION, SourceKind.DAILY_LOG)
"""The kinds of file whose lost items ``doctor --fix`` writes back."""


def lost_at_once(kind: SourceKind | None, before: int, lost: int, after: int) -> bool:
    """Whether a file of ``kind`` losing ``lost`` of its ``before`` items (``after``
    left) looks like damage rather than an edit: it lost them all, or at least 3 and at
    least half; a conversation turn is never removed by hand, so a session losing any."""
    if lost <= 0:
        return False
    if kind is SourceKind.SESSION:
        return True
    return after == 0 or (lost >= 3 and 2 * lost >= before)


@dataclass(frozen=True, slots=True)
class KeptCopy:
    """A copy under ``.corrupt/`` of items ``path`` lost, those still in no file."""

    agent: str
    path: str
    copy: Path
    items: tuple[MemoryItem, ...]

    @property
    def restorable(self) -> bool:
        return classify(self.path) in RESTORABLE


def keep_lost(
    workspace: MarkdownWorkspace, agent: str, path: str, items: Sequence[MemoryItem]
) -> Path:
    """Write ``items`` (what ``path`` lost) under ``.corrupt/``; returns the copy."""
    if classify(path) is SourceKind.FACTS:
        return workspace.keep_lost_facts(agent, path, items)
    rows = [
        {
            "id": item.id,
            "content": item.content,
            "speaker": item.speaker,
            "turn": item.provenance.turn_ids[0] if item.provenance.turn_ids else None,
            "session": item.provenance.session_id,
            "at": format_time(item.created_at),
        }
        for item in items
    ]
    raw = json.dumps({"path": path, "items": rows}, ensure_ascii=False, indent=1).encode("utf-8")
    folder = workspace.agent_dir(agent)
    return folder / keep_copy(folder, f"{path}.lost", raw)


def kept_copies(workspace: MarkdownWorkspace, agent: str) -> list[KeptCopy]:
    """Every copy of lost items of ``agent`` that holds an item no file holds now."""
    corrupt = workspace.agent_dir(agent) / CORRUPT_DIR
    if not corrupt.is_dir():
        return []
    found: list[KeptCopy] = []
    here: dict[str, set[str]] = {}
    for copy in sorted(corrupt.glob(f"*{LOST}*")):
        if copy.name.endswith(RESTORED) or not copy.is_file():
            continue
        path = copy.name.split(LOST, 1)[0].replace("__", "/")
        kind = classify(path)
        if kind is None:
            continue
        items = _read_copy(workspace, agent, path, copy)
        if path not in here:
            here[path] = _ids_now(workspace, agent, path)
        absent = tuple(item for item in items if item.id not in here[path])
        if absent:
            found.append(KeptCopy(agent, path, copy, absent))
    return found


def put_back(workspace: MarkdownWorkspace, kept: KeptCopy) -> int:
    """Write ``kept``'s items back into their file and mark the copy used up; returns
    how many (0: this kind of file cannot be written back; the copy stays)."""
    if not kept.restorable:
        return 0
    count = write_back(workspace, kept.agent, kept.path, kept.items)
    kept.copy.rename(kept.copy.with_name(kept.copy.name + RESTORED))
    return count


def write_back(
    workspace: MarkdownWorkspace, agent: str, path: str, items: Sequence[MemoryItem]
) -> int:
    """Write ``items`` that ``path`` lost back into it (those it does not hold again);
    returns how many (0 for a kind of file that cannot be written back)."""
    kind = classify(path)
    if kind not in RESTORABLE:
        return 0
    present = _ids_now(workspace, agent, path)
    items = [item for item in items if item.id not in present]
    if kind is SourceKind.FACTS:
        _drop_torn_values(workspace, agent, items)
        workspace.put_back_facts(agent, path, items)
    elif kind is SourceKind.SESSION:
        for item in items:
            session = item.provenance.session_id or Path(path).stem
            turn = TurnRecord(
                item.provenance.turn_ids[0] if item.provenance.turn_ids else item.id,
                item.speaker or "?",
                item.content,
                item.created_at,
            )
            workspace.append_turn(agent, session, turn, started_at=item.created_at)
    else:
        for item in items:
            workspace.append_note(agent, item)
    return len(items)


def _drop_torn_values(
    workspace: MarkdownWorkspace, agent: str, items: Sequence[MemoryItem]
) -> None:
    """A Brain cut inside a fact's line leaves its first words as a fact of the same
    key, stamped anew: the whole value coming back replaces it, so the key does not
    end up with two current values."""
    by_key = {i.key.casefold(): i for i in items if i.key and not i.multi and i.value}
    for fact in workspace.brain_facts(agent):
        whole = by_key.get(fact.key.casefold()) if fact.key else None
        if whole is None or whole.value is None or fact.value is None:
            continue
        if fact.value != whole.value and whole.value.startswith(fact.value.rstrip()):
            workspace.remove_item(agent, fact)


def _ids_now(workspace: MarkdownWorkspace, agent: str, path: str) -> set[str]:
    """The ids a file holds now (for a fact file: any of the three, as a fact may have
    moved between them)."""
    if classify(path) is SourceKind.FACTS:
        facts = (
            workspace.brain_facts(agent),
            workspace.archived_facts(agent),
            workspace.fact_history(agent),
        )
        return {item.id for items in facts for item in items}
    if not (workspace.agent_dir(agent) / path).is_file():
        return set()
    return {item.id for item in workspace.parse_source(agent, path).items}


def _read_copy(workspace: MarkdownWorkspace, agent: str, path: str, copy: Path) -> list[MemoryItem]:
    text = copy.read_text(encoding="utf-8", errors="replace")
    now = datetime.now(UTC)
    tenant = workspace.tenant_of(agent)
    if classify(path) is SourceKind.FACTS:
        spec = next(s for s in brain.FACT_FILES if s.path == path)
        return list(brain.parse_facts(text, spec=spec, agent=agent, tenant=tenant, mtime=now).items)
    try:
        rows = json.loads(text)["items"]
        return [_item(agent, tenant, path, dict(row), now) for row in rows]
    except (ValueError, KeyError, TypeError):
        return []  # not a copy kronika wrote


def _item(agent: str, tenant: str, path: str, row: dict[str, object], now: datetime) -> MemoryItem:
    at = parse_time(str(row["at"])) if row.get("at") else now
    turn = row.get("turn")
    kind = classify(path)
    return MemoryItem(
        id=str(row["id"]),
        agent=agent,
        tenant=tenant,
        content=str(row["content"]),
        type=ItemType.MESSAGE if kind is SourceKind.SESSION else ItemType.NOTE,
        layer=Layer.WORKING if kind is SourceKind.SESSION else Layer.LONG_TERM,
        tier=Tier.SHORT,
        created_at=at,
        updated_at=at,
        provenance=Provenance(
            path,
            session_id=str(row["session"]) if row.get("session") else None,
            turn_ids=(str(turn),) if turn else (),
        ),
        speaker=str(row["speaker"]) if row.get("speaker") else None,
    )
