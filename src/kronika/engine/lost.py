"""Copies of what a file lost at once, kept until it is back.

When a sync finds that a file holds much less than the index had of it (truncated,
emptied, deleted: :func:`lost_at_once`), the index's copy of the lost items is written
to ``<agent>/.corrupt/<path, / as __>.lost.<UTC time>`` before the index forgets them:
a fact file's facts as a fact file (ready to be copied back), anything else as JSON
(``{"path": …, "items": [{"id", "content", "speaker", "turn", "at"}]}``).

:func:`kept_copies` finds every such copy whose items are still in no file, so
``kronika doctor`` reports it on every run until it is dealt with; :func:`put_back`
(``doctor --fix``) writes facts, conversation turns and daily-log notes back where
they were, and the text of a summary, the Active Context, a bank or entity page or
lessons (:mod:`kronika.engine.write_back`), and renames the copy ``….restored`` so it
is never put back twice; a copy whose items could not all be written back stays
reported, naming the copy that holds the text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Scope, Tier, TurnRecord
from kronika.engine.write_back import drop_garbled_notes, write_back_text
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.files import keep_copy, write_text
from kronika.stores.markdown.layout import CORRUPT_DIR, SourceKind, classify
from kronika.stores.markdown.lines import split_lines
from kronika.stores.markdown.meta import format_time, parse_time
from kronika.stores.markdown.sessions import render_turn
from kronika.stores.markdown.workspace import MarkdownWorkspace

LOST = ".lost."
RESTORED = ".restored"
"""Added to the name of a copy of lost items once they were put back."""
RESTORABLE = (SourceKind.FACTS, SourceKind.SESSION, SourceKind.DAILY_LOG)
"""The kinds of file whose lost items ``doctor --fix`` writes back as items; the text
of the others is mended or written again by :func:`write_back_text`."""
_REPLACED = "\ufffd"


def lost_at_once(
    kind: SourceKind | None, before: int, lost: int, after: int, *, damaged: bool = False
) -> bool:
    """Whether a file of ``kind`` losing ``lost`` of its ``before`` items (``after``
    left) looks like damage rather than an edit: it lost them all, or at least 3 and at
    least half; a conversation turn is never removed by hand, so a session losing any;
    and any loss from a file that shows damage (``damaged``: cut inside a line, or
    holding bytes that are not text)."""
    if lost <= 0:
        return False
    if kind is SourceKind.SESSION or damaged:
        return True
    return after == 0 or (lost >= 3 and 2 * lost >= before)


def cut_inside_a_line(file: Path) -> bool:
    """Whether ``file`` ends inside a line (no line end after its last byte): what a
    truncation leaves, and a torn write."""
    try:
        with file.open("rb") as handle:
            handle.seek(0, 2)
            if handle.tell() == 0:
                return False
            handle.seek(-1, 2)
            return handle.read(1) != b"\n"
    except OSError:
        return False


def garbled(before: Iterable[str], now: Iterable[str]) -> bool:
    """Whether a text of ``now`` holds unreadable characters (U+FFFD) though none of
    ``before`` did: the file shows damage (its items then count as lost, not edited)."""
    return not any(_REPLACED in text for text in before) and any(_REPLACED in t for t in now)


def worse(now: str, was: str, *, cut: bool) -> bool:
    """Whether text ``now`` is a damaged form of ``was``: bytes that are not UTF-8 read
    into it (U+FFFD it did not hold), or, in a file cut inside a line, only its start."""
    if now == was:
        return False
    if "\ufffd" in now and "\ufffd" not in was:
        return True
    return cut and was.startswith(now.rstrip())


def torn_items(
    before: Sequence[MemoryItem], now: Sequence[MemoryItem], *, cut: bool
) -> list[MemoryItem]:
    """The items of ``before`` still in ``now`` by id but in a damaged form (:func:`worse`)."""
    here = {item.id: item.content for item in now}
    return [
        item for item in before if item.id in here and worse(here[item.id], item.content, cut=cut)
    ]


@dataclass(frozen=True, slots=True)
class KeptCopy:
    """A copy under ``.corrupt/`` of items ``path`` lost, those still in no file."""

    agent: str
    path: str
    copy: Path
    items: tuple[MemoryItem, ...]

    @property
    def restorable(self) -> bool:
        return classify(self.path) is not None


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
            "type": item.type.value,
            "tags": list(item.tags),
            "importance": item.importance,
            **{k: v for k, v in _audience(item).items() if v is not None},
        }
        for item in items
    ]
    raw = json.dumps({"path": path, "items": rows}, ensure_ascii=False, indent=1).encode("utf-8")
    folder = workspace.agent_dir(agent)
    return folder / keep_copy(folder, f"{path}.lost", raw)


def _audience(item: MemoryItem) -> dict[str, str | None]:
    return {
        "scope": item.scope.value if item.scope is not Scope.PERSONAL else None,
        "user": item.user,
        "channel": item.channel,
        "team": item.team,
    }


def kept_copies(workspace: MarkdownWorkspace, agent: str) -> list[KeptCopy]:
    """Every copy of lost items of ``agent`` that holds an item no file holds now."""
    corrupt = workspace.agent_dir(agent) / CORRUPT_DIR
    if not corrupt.is_dir():
        return []
    found: list[KeptCopy] = []
    here: dict[str, dict[str, str]] = {}
    for copy in sorted(corrupt.glob(f"*{LOST}*")):
        if copy.name.endswith(RESTORED) or not copy.is_file():
            continue
        read = _read_copy(workspace, agent, copy)
        if read is None:
            continue
        path, items = read
        if path not in here:
            here[path] = _held_now(workspace, agent, path)
        absent = tuple(item for item in items if _missing(item, here[path]))
        if absent:
            found.append(KeptCopy(agent, path, copy, absent))
    return found


def put_back(workspace: MarkdownWorkspace, kept: KeptCopy) -> int:
    """Write ``kept``'s items back into their file and mark the copy used up; returns
    how many (0: this kind of file cannot be written back; the copy stays)."""
    if not kept.restorable:
        return 0
    count = write_back(workspace, kept.agent, kept.path, kept.items)
    held = _held_now(workspace, kept.agent, kept.path)
    if not any(_missing(item, held) for item in kept.items):
        kept.copy.rename(kept.copy.with_name(kept.copy.name + RESTORED))
    return count


def write_back(
    workspace: MarkdownWorkspace, agent: str, path: str, items: Sequence[MemoryItem]
) -> int:
    """Write ``items`` that ``path`` lost back into it (those it does not hold again);
    returns how many (0 for a kind of file that cannot be written back)."""
    kind = classify(path)
    if kind is None:
        return 0
    held = _held_now(workspace, agent, path)
    items = [item for item in items if _missing(item, held)]
    if not items:
        return 0
    if kind in (SourceKind.DAILY_LOG, SourceKind.BANK, SourceKind.ENTITY, SourceKind.LESSONS):
        missing = [item for item in items if item.id not in held]
        if drop_garbled_notes(workspace, agent, path, missing):
            held = _held_now(workspace, agent, path)
    if kind not in RESTORABLE:
        return write_back_text(workspace, agent, path, items, held)
    if kind is SourceKind.FACTS:  # a damaged copy of one of them is replaced
        _drop_torn_values(workspace, agent, items)
        workspace.put_back_facts(agent, path, items)
    elif kind is SourceKind.SESSION:
        _write_back_turns(workspace, agent, path, items)
    else:
        for item in items:
            if item.id in held:
                workspace.update_note(agent, item)
            else:
                workspace.append_note(agent, item)
    return len(items)


def _turn(item: MemoryItem) -> TurnRecord:
    turn_id = item.provenance.turn_ids[0] if item.provenance.turn_ids else item.id
    return TurnRecord(turn_id, item.speaker or "?", item.content, item.created_at)


def _write_back_turns(
    workspace: MarkdownWorkspace, agent: str, path: str, items: Sequence[MemoryItem]
) -> None:
    """Put turns back into a session file: a damaged turn is written whole again where
    it stands, a missing one after the turns there (the header is kept as it is)."""
    now = list(workspace.parse_source(agent, path).items) if _exists(workspace, agent, path) else []
    if not now:
        for item in items:
            session = item.provenance.session_id or Path(path).stem
            workspace.append_turn(agent, session, _turn(item), started_at=item.created_at)
        return
    file = workspace.agent_dir(agent) / path
    lines = split_lines(file.read_text(encoding="utf-8", errors="replace"))  # as lines are numbered
    first = min(item.provenance.line or 1 for item in now) - 1
    head = "".join(lines[:first]).rstrip("\n") + "\n"
    whole = {item.id: item for item in items}
    turns = [whole.pop(item.id, item) for item in now]
    turns += [item for item in items if item.id in whole]
    write_text(file, head + "".join("\n" + render_turn(_turn(item)) for item in turns))


def _exists(workspace: MarkdownWorkspace, agent: str, path: str) -> bool:
    return (workspace.agent_dir(agent) / path).is_file()


def _missing(item: MemoryItem, held: dict[str, str]) -> bool:
    """Whether ``item`` is not in its file, or only in a damaged form."""
    return item.id not in held or worse(held[item.id], item.content, cut=True)


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


def _held_now(workspace: MarkdownWorkspace, agent: str, path: str) -> dict[str, str]:
    """The text of each item a file holds now, by id (for a fact file: of all three, as
    a fact may have moved between them)."""
    if classify(path) is SourceKind.FACTS:
        facts = (
            workspace.brain_facts(agent),
            workspace.archived_facts(agent),
            workspace.fact_history(agent),
        )
        return {item.id: item.content for items in facts for item in items}
    if not _exists(workspace, agent, path):
        return {}
    return {item.id: item.content for item in workspace.parse_source(agent, path).items}


def _read_copy(
    workspace: MarkdownWorkspace, agent: str, copy: Path
) -> tuple[str, list[MemoryItem]] | None:
    """The file a copy of lost items is of, and the items; ``None`` for a copy kronika
    did not write. A fact file's copy is named after it (``brain.md.lost.<time>``);
    any other names its file inside (``"path"``)."""
    text = copy.read_text(encoding="utf-8", errors="replace")
    now = datetime.now(UTC)
    tenant = workspace.tenant_of(agent)
    name = copy.name.split(LOST, 1)[0]
    spec = next((s for s in brain.FACT_FILES if s.path == name), None)
    if spec is not None:
        parsed = brain.parse_facts(text, spec=spec, agent=agent, tenant=tenant, mtime=now)
        return name, list(parsed.items)
    try:
        data = json.loads(text)
        path = str(data["path"])
        if classify(path) is None:
            return None
        return path, [_item(agent, tenant, path, dict(row), now) for row in data["items"]]
    except (ValueError, KeyError, TypeError):
        return None


def _item(agent: str, tenant: str, path: str, row: dict[str, object], now: datetime) -> MemoryItem:
    at = parse_time(str(row["at"])) if row.get("at") else now
    turn = row.get("turn")
    kind = classify(path)
    note = ItemType.MESSAGE if kind is SourceKind.SESSION else ItemType.NOTE
    typed = str(row.get("type") or note.value)
    tags = row.get("tags")
    importance = row.get("importance")
    return MemoryItem(
        id=str(row["id"]),
        agent=agent,
        tenant=tenant,
        content=str(row["content"]),
        type=ItemType(typed) if typed in ItemType._value2member_map_ else note,
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
        tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
        importance=float(importance) if isinstance(importance, int | float) else 0.5,
        scope=Scope(str(row["scope"])) if row.get("scope") else Scope.PERSONAL,
        user=str(row["user"]) if row.get("user") else None,
        channel=str(row["channel"]) if row.get("channel") else None,
        team=str(row["team"]) if row.get("team") else None,
    )
