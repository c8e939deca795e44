"""Where forgotten text is written, and the edits that take it out.

:func:`plan_forget` reads every indexed Markdown file of the agent and works out, without
writing, what forgetting some items changes: the items' blocks removed from their files
(a summary file is deleted, the Active Context emptied), an entity page whose name holds
forgotten text deleted (its name is in its path), and every other file but the fact
files redacted (:func:`kronika.core.redaction.redact_document`) — except the lines of
the items the caller may not see (``keep``), which stay as they are; pending proposals
that would store the text again withdrawn, and the ones that only mention it redacted;
the audit entries to redact counted. :func:`apply_forget` (the write path's
``ForgetItems``) makes exactly those edits, written down first so a kill cannot undo
them, and takes the items out of the copies under ``.corrupt/``
(:mod:`kronika.engine.forget_journal`). The plan is what a
:class:`~kronika.engine.forgetting.ForgetReceipt` reports.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from kronika.core.model import MemoryItem
from kronika.core.redaction import (
    MARKER,
    Phrases,
    Redacted,
    phrase_pattern,
    redact,
    redact_document,
)
from kronika.engine import forget_journal
from kronika.ports import AuditLog
from kronika.stores.markdown import notes, proposals, sessions
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.facts.many import compact_after, compacted
from kronika.stores.markdown.files import read_source
from kronika.stores.markdown.layout import BANK_KINDS, SourceKind, classify
from kronika.stores.markdown.lines import ParsedItems, split_lines
from kronika.stores.markdown.workspace import MarkdownWorkspace

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""Parsing here only needs ids and line spans, which never depend on a file's time."""


@dataclass(frozen=True, slots=True)
class ForgetPlace:
    """One place a forget touched: ``path`` (agent-relative, or ``audit.jsonl``),
    ``action`` (``removed``, ``redacted``, ``deleted`` or ``withdrawn``), how many items,
    matches or entries (``count``) and how many of its lines (``lines``)."""

    path: str
    action: str
    count: int
    lines: int


@dataclass(frozen=True, slots=True)
class FileEdit:
    """A file's new text (``None``: delete the file) and what changed in it."""

    path: str
    text: str | None
    place: ForgetPlace
    lines: list[str] | None = field(default=None, compare=False, repr=False)
    """``text`` as its lines, for a fact file: the writer looks again only at those
    that changed (a long archive is not scanned whole to forget one fact)."""


Stamp = tuple[int, int, int, int]
"""A file's inode, size and modification and change times (ns): a file with the same
stamp holds what it held (the index trusts a file's size and time the same way)."""


@dataclass(frozen=True, slots=True)
class ForgetPlan:
    """Every edit a forget makes: Markdown files, withdrawn proposals, audit entries.

    ``asked`` (the items' ids, the phrases, ``keep``) and ``files`` (each file looked at:
    its stamp and its edit, ``None`` when it needs none) let a later plan of the same
    forget take a file's edit over while the file is as it was (:func:`plan_forget`'s
    ``reuse``)."""

    edits: tuple[FileEdit, ...]
    proposals: FileEdit | None
    audit_entries: int
    pattern: Phrases | None
    asked: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())
    files: Mapping[str, tuple[Stamp, FileEdit | None]] = field(default_factory=dict)

    @property
    def places(self) -> tuple[ForgetPlace, ...]:
        found = [e.place for e in self.edits]
        if self.proposals is not None:
            found.append(self.proposals.place)
        if self.audit_entries:
            entries = self.audit_entries  # one line each
            found.append(ForgetPlace("audit.jsonl", "redacted", entries, entries))
        return tuple(found)


def plan_forget(
    workspace: MarkdownWorkspace,
    audit: AuditLog,
    agent: str,
    items: Sequence[MemoryItem],
    phrases: Sequence[str],
    keep: frozenset[str] = frozenset(),
    *,
    count_audit: bool = True,
    reuse: ForgetPlan | None = None,
) -> ForgetPlan:
    """What forgetting ``items`` and redacting ``phrases`` outside the items ``keep``
    names would change (nothing is written here; :func:`apply_forget` writes it). The
    audit entries to redact are counted unless ``count_audit`` is false (the count is
    then 0: a read of the whole trail saved where only the edits are wanted).

    ``reuse``: an earlier plan of the same forget (the receipt's, made under the same
    lock): a file whose stamp it saw is taken over, not read and looked through again;
    every other file, and all of them when the plan was of another forget, as without."""
    folder = workspace.agent_dir(agent)
    pattern = phrase_pattern(phrases)
    wanted = {it.id: it for it in items}
    holding = {it.provenance.path for it in items}
    if any(classify(path) is SourceKind.FACTS for path in holding):
        holding |= {spec.path for spec in brain.FACT_FILES}  # a fact may have moved
    asked = (tuple(wanted), tuple(phrases), tuple(sorted(keep)))
    known = reuse.files if reuse is not None and reuse.asked == asked else {}
    edits: list[FileEdit] = []
    files: dict[str, tuple[Stamp, FileEdit | None]] = {}
    for source in workspace.list_sources(agent):
        stamp = _stamp(folder / source.path)  # before the read: a later change shows
        if stamp is None:
            continue
        seen = known.get(source.path)
        if seen is not None and seen[0] == stamp:
            edit: FileEdit | None = seen[1]
        else:
            read = read_source(folder, source.path)
            if read is None:
                continue
            edit = None
            if source.path in holding or (pattern is not None and pattern.search(read.text)):
                edit = _edit_file(workspace, agent, source.path, read.text, wanted, pattern, keep)
        files[source.path] = (stamp, edit)
        if edit is not None:
            edits.append(edit)
    audited = 0
    if pattern is not None and count_audit:
        audited = audit.mentioning(agent, pattern)
    waiting = _edit_proposals(workspace, agent, pattern)
    return ForgetPlan(tuple(edits), waiting, audited, pattern, asked, files)


def _stamp(file: Path) -> Stamp | None:
    """``file``'s :data:`Stamp` (None: it is gone)."""
    try:
        st = os.stat(file)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _edit_proposals(
    workspace: MarkdownWorkspace, agent: str, pattern: Phrases | None
) -> FileEdit | None:
    """Pending proposals whose change holds the forgotten text are withdrawn; one whose
    readable line only mentions it gets that line redacted."""
    read = read_source(workspace.agent_dir(agent), proposals.PATH)
    if pattern is None or read is None:
        return None
    lines = split_lines(read.text)
    withdrawn = redacted = 0
    for entry in sorted(workspace.read_proposals(agent).entries, key=lambda e: -e.line):
        at = entry.line - 1
        if not 0 <= at < len(lines):
            continue
        if pattern.search(json.dumps(entry.payload, ensure_ascii=False)):
            del lines[at]
            withdrawn += 1
        elif pattern.search(entry.text):
            text = redact(entry.text, pattern)[0]
            lines[at] = proposals.render_entry(replace(entry, text=text))
            redacted += 1
    if not withdrawn and not redacted:
        return None
    action = "withdrawn" if withdrawn else "redacted"
    place = ForgetPlace(proposals.PATH, action, withdrawn + redacted, withdrawn + redacted)
    return FileEdit(proposals.PATH, "".join(lines), place)


def _edit_file(
    workspace: MarkdownWorkspace,
    agent: str,
    path: str,
    text: str,
    wanted: Mapping[str, MemoryItem],
    pattern: Phrases | None,
    keep: frozenset[str] = frozenset(),
) -> FileEdit | None:
    kind = classify(path)
    parsed = _located(agent, path, text, wanted, keep) or _parse(workspace, agent, path, text)
    # looked up by id, not found by walking every item: an archive holds thousands
    gone = [item_id for item_id in wanted if item_id in parsed.spans]
    kept = [item_id for item_id in keep if item_id in parsed.spans]
    named = (
        kind is SourceKind.ENTITY
        and pattern is not None
        and pattern.search(PurePosixPath(path).stem.replace("_", " ")) is not None
    )
    if (gone and kind is SourceKind.SUMMARY) or (named and not kept):
        return FileEdit(path, None, ForgetPlace(path, "deleted", 1, len(split_lines(text))))
    lines = split_lines(text)
    removed = 0
    if gone and kind is SourceKind.ACTIVE_CONTEXT:
        removed, lines = len(lines), []
    else:
        # a fact forgotten from the archive or the history leaves marks on its lines, as
        # one moved out of the archive does: no line below moves, so no fact below is
        # cited anew (in the kept parse, the index's rows, a record's document) however
        # long the file is
        marked = path in (brain.ARCHIVE.path, brain.HISTORY.path)
        for item_id in sorted(gone, key=lambda i: parsed.spans[i][0], reverse=True):
            start, end = parsed.spans[item_id]
            removed += end - start
            lines[start:end] = [brain.moved_out(None)] * (end - start) if marked else []
        # the marks dropped once many, as a move out of the archive drops them (a cheap
        # bound on their number first; compacted counts them exactly)
        bound = brain.moved_out_at_most(text) + removed if marked and gone else 0
        if bound > compact_after(len(lines)):
            lines = compacted(lines)
    new = "".join(lines)
    if kind is SourceKind.FACTS or pattern is None:
        if not gone:
            return None
        return FileEdit(path, new, ForgetPlace(path, "removed", len(gone), removed), lines)
    spans = [parsed.spans[i] for i in gone]
    shifted = [
        (start - _before(spans, start), end - _before(spans, start))
        for start, end in (parsed.spans[i] for i in kept)
    ]
    red = _redact_outside(new, pattern, shifted)
    if not gone and not red.matches:
        return None
    if gone:
        place = ForgetPlace(path, "removed", len(gone), removed + red.lines)
        return FileEdit(path, red.text, place)
    return FileEdit(path, red.text, ForgetPlace(path, "redacted", red.matches, red.lines))


def _before(spans: Sequence[tuple[int, int]], line: int) -> int:
    """How many lines the removed ``spans`` took before ``line``."""
    return sum(end - start for start, end in spans if end <= line)


def _redact_outside(text: str, pattern: Phrases, kept: Sequence[tuple[int, int]]) -> Redacted:
    """``text`` redacted but for its lines in the ``kept`` spans (items the caller may
    not see), which stay as they are."""
    if not kept:
        return redact_document(text, pattern)
    lines = split_lines(text)
    out: list[str] = []
    matches = touched = at = 0
    for start, end in sorted(kept) + [(len(lines), len(lines))]:
        if start > at:
            red = redact_document("".join(lines[at:start]), pattern)
            out.append(red.text)
            matches, touched = matches + red.matches, touched + red.lines
        out.append("".join(lines[max(start, at) : end]))
        at = max(at, end)
    return Redacted("".join(out), matches, touched)


def _located(
    agent: str, path: str, text: str, wanted: Mapping[str, MemoryItem], keep: frozenset[str]
) -> ParsedItems | None:
    """What :func:`_edit_file` needs of a session's parse, found without parsing it:
    the spans of the turns to forget, from their header lines (the lines the index
    gave them, synced under the lock this plan is made under). Only when no item is
    kept (a kept item could be anywhere in the file); ``None``: the file is parsed."""
    if keep or classify(path) is not SourceKind.SESSION:
        return None
    here = [it for it in wanted.values() if it.provenance.path == path]
    spans = sessions.turn_spans(text, agent, here) if here else None
    return None if spans is None else ParsedItems(tuple(here), spans)


def _parse(workspace: MarkdownWorkspace, agent: str, path: str, text: str) -> ParsedItems:
    kind = classify(path)
    stem = PurePosixPath(path).stem
    tenant = workspace.tenant_of(agent)
    match kind:
        case SourceKind.FACTS:
            # the parse the workspace keeps of these very lines, when it has one: a long
            # archive is not parsed again (twice) to forget one fact
            held = workspace.held_facts(agent, path)
            if held is not None and "".join(held[0]) == text:
                return held[1]
            spec = next(s for s in brain.FACT_FILES if s.path == path)
            return brain.parse_facts(text, spec=spec, agent=agent, tenant=tenant, mtime=_EPOCH)
        case SourceKind.SESSION:
            session = sessions.parse_session(
                text, path=path, agent=agent, tenant=tenant, fallback_id=stem, fallback_start=_EPOCH
            )
            return ParsedItems(session.items, session.spans, session.warnings)
        case SourceKind.DAILY_LOG | SourceKind.BANK | SourceKind.ENTITY | SourceKind.SENSORY:
            return notes.parse_notes(
                text,
                path=path,
                agent=agent,
                tenant=tenant,
                default_created=_EPOCH,
                default_kind=BANK_KINDS.get(PurePosixPath(path).name),
                entity=stem if kind is SourceKind.ENTITY else None,
                sensory=kind is SourceKind.SENSORY,
            )
    # summaries and the Active Context are one item each: the whole file
    item = workspace.parse_source(agent, path).items
    spans = {it.id: (0, len(split_lines(text))) for it in item}
    return ParsedItems(item, spans)


def apply_forget(
    workspace: MarkdownWorkspace,
    audit: AuditLog,
    agent: str,
    items: Sequence[MemoryItem],
    phrases: Sequence[str],
    write: Callable[[Path, str], object],
    keep: frozenset[str] = frozenset(),
    reuse: ForgetPlan | None = None,
) -> tuple[str, ...]:
    """Make the edits :func:`plan_forget` lists (``reuse``: as there); returns the
    Markdown paths changed."""
    plan = plan_forget(
        workspace, audit, agent, items, phrases, keep, count_audit=False, reuse=reuse
    )
    folder = workspace.agent_dir(agent)
    forget_journal.begin(folder, items, phrases, sorted(keep))  # a kill finishes it later
    for edit in plan.edits:
        if edit.text is None:
            (folder / edit.path).unlink(missing_ok=True)
        elif classify(edit.path) is SourceKind.FACTS:
            # through the fact files' writer: their kept parse follows the edit, and the
            # index deletes the rows of the facts gone instead of reading the file again
            workspace.rewrite_facts(agent, edit.path, edit.text, edit.lines)
        else:
            write(folder / edit.path, edit.text)
        workspace.removed.add((agent, edit.path))
    if plan.proposals is not None and plan.proposals.text is not None:
        write(folder / plan.proposals.path, plan.proposals.text)
    if plan.pattern is not None:
        audit.redact(agent, plan.pattern, MARKER)
    wanted = {it.id for it in items}
    forget_journal.scrub_corrupt(folder, agent, workspace.tenant_of(agent), wanted, plan.pattern)
    return tuple(e.path for e in plan.edits)


def snapshot(workspace: MarkdownWorkspace, agent: str, paths: Sequence[str]) -> dict[str, str]:
    """Item id → text of every item in ``paths`` (to count the index rows a forget
    rewrites, before and after it)."""
    found: dict[str, str] = {}
    existing = {s.path for s in workspace.list_sources(agent)}
    for path in paths:
        if path in existing:
            found.update((it.id, it.content) for it in workspace.parse_source(agent, path).items)
    return found


__all__ = [
    "FileEdit",
    "ForgetPlace",
    "ForgetPlan",
    "apply_forget",
    "plan_forget",
    "snapshot",
]
