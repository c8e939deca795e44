"""Writing back the text of a summary, the Active Context, a bank or entity page or
``lessons.md`` from what the index (or a copy kept under ``.corrupt/``) still holds.

Two kinds of loss, each mended where it stands:

* an item still in the file but in a damaged form (bytes that were not text, a file
  cut inside it): the damaged stretch of its text is found in the file (with a little
  of the unchanged text around it, so it is found once) and replaced by the text as it
  was; the rest of the file, its headers and comments, stay as they are;
* an item no longer in the file (emptied, deleted, cut short): written again in the
  file's own form — the Active Context and a summary whole (a summary's header from
  what the index kept: id, time, sessions, audience), a note at the end of its page
  (with a metadata comment holding its id), a lesson under its section (its text,
  kind, times, importance and audience; its helped/hurt counts and evidence were not
  indexed and start again at 0: :data:`LOST_WITH_LESSONS`).

A bullet without metadata gets its id from its text, so overwritten bytes inside it
give it another id: the bullet holding unreadable characters (U+FFFD) whose text is
the lost one's but for that stretch is mended in place, never left beside the text put
back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from kronika.core.lessons import ACTIVE, RETIRED, Lesson
from kronika.core.model import ItemType, MemoryItem, Status
from kronika.core.visibility import Audience
from kronika.stores.markdown import notes
from kronika.stores.markdown.files import read_source, write_text
from kronika.stores.markdown.layout import SourceKind, classify
from kronika.stores.markdown.meta import format_time
from kronika.stores.markdown.sessions import audience_fields
from kronika.stores.markdown.workspace import MarkdownWorkspace

LOST_WITH_LESSONS = "a lesson written back starts its helped/hurt counts and evidence again"
_REPLACED = "\ufffd"


def write_back_text(
    workspace: MarkdownWorkspace,
    agent: str,
    path: str,
    items: Sequence[MemoryItem],
    held: Mapping[str, str],
) -> int:
    """Put ``items`` (what ``path`` lost, or holds damaged: ``held`` is its text now,
    by id) back into ``path``; returns how many."""
    kind = classify(path)
    file = workspace.agent_dir(agent) / path
    read = read_source(workspace.agent_dir(agent), path)
    text = read.text if read is not None else ""
    mended = 0
    missing: list[MemoryItem] = []
    for item in items:
        now = held.get(item.id)
        fixed = mend(text, now, item.content) if now is not None else None
        if fixed is not None:
            text, mended = fixed, mended + 1
        elif now is None or not text.strip():
            missing.append(item)
    if mended:
        write_text(file, text)
    if not missing:
        return mended
    if kind is SourceKind.ACTIVE_CONTEXT:
        workspace.write_active_context(agent, missing[0].content, Audience.of(missing[0]))
    elif kind is SourceKind.SUMMARY:
        workspace.write_summary(agent, path, missing[0].content, _summary_fields(missing[0]))
    elif kind is SourceKind.LESSONS:
        workspace.write_lessons(agent, [_lesson(item) for item in missing])
    elif kind in (SourceKind.BANK, SourceKind.ENTITY):
        _append_notes(file, missing)
    else:
        return mended
    return mended + (1 if kind in (SourceKind.ACTIVE_CONTEXT, SourceKind.SUMMARY) else len(missing))


def mend(text: str, now: str, was: str) -> str | None:
    """``text`` with the damaged form ``now`` of an item's text replaced by ``was``
    (``None``: not found once in ``text``)."""
    if now == was:
        return None
    start, end = _common_ends(now, was)
    for around in (24, 12, 6, 0):
        a = max(0, start - around)
        bad = now[a : len(now) - max(0, end - around)]
        good = was[a : len(was) - max(0, end - around)]
        if bad and text.count(bad) == 1:
            return text.replace(bad, good, 1)
    return None


def drop_garbled_notes(
    workspace: MarkdownWorkspace, agent: str, path: str, items: Sequence[MemoryItem]
) -> int:
    """Remove from a file of bullets (a daily log, a bank or entity page, lessons) each one holding
    unreadable characters that is one of ``items`` (not in the file by id) but for one
    overwritten stretch — its metadata, or a bullet whose id came from its text — so the
    item written back does not stand beside its damaged form; returns how many."""
    if not (workspace.agent_dir(agent) / path).is_file():
        return 0
    wanted = {item.id: item.content for item in items}
    dropped = 0
    for now in workspace.parse_source(agent, path).items:
        if now.id in wanted or _REPLACED not in now.content:
            continue
        if any(_damaged_form(now.content, was) for was in wanted.values()):
            dropped += workspace.remove_item(agent, now)
    return dropped


def _damaged_form(now: str, was: str) -> bool:
    """Whether ``now`` (holding U+FFFD) is ``was`` but for one overwritten stretch."""
    if _REPLACED not in now or _REPLACED in was:
        return False
    start, end = _common_ends(now, was)
    return start + end >= len(was) - 16


def _common_ends(now: str, was: str) -> tuple[int, int]:
    """How many characters ``now`` and ``was`` share at the start, and then at the end
    (not counting those of the start twice)."""
    shortest = min(len(now), len(was))
    start = 0
    while start < shortest and now[start] == was[start]:
        start += 1
    end = 0
    while end < shortest - start and now[-1 - end] == was[-1 - end]:
        end += 1
    return start, end


def _summary_fields(item: MemoryItem) -> dict[str, str]:
    sessions = [t.removeprefix("session:") for t in item.tags if t.startswith("session:")]
    fields = {"id": item.id, "created": format_time(item.created_at)}
    if sessions:
        fields["sessions"] = ", ".join(sessions)
    return fields | dict(audience_fields(Audience.of(item)))


def _lesson(item: MemoryItem) -> Lesson:
    return Lesson(
        id=item.id,
        agent=item.agent,
        kind="strategy" if item.type is ItemType.STRATEGY else "reflection",
        text=item.content,
        cause="",
        created_at=item.created_at,
        updated_at=item.updated_at,
        status=RETIRED if item.status is Status.SUPERSEDED else ACTIVE,
        importance=item.importance,
        tags=item.tags,
        owners=Audience.of(item),
    )


def _append_notes(file: Path, items: Sequence[MemoryItem]) -> None:
    read = read_source(file.parent, file.name)
    text = read.text if read is not None else ""
    if not text.strip():
        text = f"# {file.stem[:1].upper()}{file.stem[1:]}\n\n"
    elif not text.endswith("\n"):
        text += "\n"
    lines = [line for item in items for line in notes.render_note(item)]
    write_text(file, text + "".join(lines))
