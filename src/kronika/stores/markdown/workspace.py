"""The Markdown workspace: the canonical, hand-editable store of every agent's memory.

``<home>/agents/<agent>/`` holds the files described in
:mod:`kronika.stores.markdown.layout`. This class is the only code that touches them:
it lists and parses the indexed files for the derived index, and applies every
change as a minimal line edit followed by an atomic write, so a hand-edited file
keeps everything the person wrote and a crash never leaves half a file.

Damaged files (invalid UTF-8, NUL bytes, a broken frontmatter header) never stop an
agent: the original bytes are copied to ``<agent>/.corrupt/<path>.<UTC time>``, the
problem is reported in the warnings, and the readable rest is used (bad bytes become
U+FFFD). The next write to such a file stores the repaired text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from urllib.parse import unquote

from kronika.core.lessons import Lesson
from kronika.core.model import ItemType, MemoryItem, SessionRecord, TurnRecord
from kronika.core.visibility import OWNER, Audience
from kronika.errors import NotFound, WorkspaceError
from kronika.stores import held
from kronika.stores.markdown import (
    documents,
    frontmatter,
    lessons,
    notes,
    proposals,
    sessions,
)
from kronika.stores.markdown.agentfiles import (
    IDENTITY_TEMPLATE,
    ParsedSource,
    SourceFile,
    _checked_path,
)
from kronika.stores.markdown.atomic import is_temp_name
from kronika.stores.markdown.factfiles import FactFiles
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.files import read_source, write_text
from kronika.stores.markdown.layout import (
    IDENTITY,
    SourceKind,
    classify,
)
from kronika.stores.markdown.lines import split_lines

__all__ = ["IDENTITY_TEMPLATE", "MarkdownWorkspace", "ParsedSource", "SourceFile"]


class MarkdownWorkspace(FactFiles):
    """Every agent's Markdown files under ``home/agents``; an agent's items carry its
    tenant: ``tenants[agent]``, else ``tenant`` (several tenants share one workspace,
    each agent belonging to one). Folders and parsing: :class:`AgentFiles`; the fact
    files: :class:`FactFiles`; notes, sessions, summaries, lessons and proposals here."""

    # -- notes, sessions, summaries -----------------------------------------------------

    def append_note(self, agent: str, item: MemoryItem) -> MemoryItem:
        """Append ``item`` under ``## Retain`` of ``memory/<created_at date>.md``
        (file and section created as needed); returns it citing its line."""
        day = item.created_at.astimezone(UTC).date().isoformat()
        folder = "sensory" if item.type is ItemType.SENSORY else "memory"
        path = f"{folder}/{day}.md"
        at = 0

        def change(lines: list[str]) -> list[str]:
            nonlocal at
            lines, at = notes.insert_note(lines, item)
            return lines

        self._edit(agent, path, change, notes.daily_log_template(day))
        return brain.with_line(item, path, at)

    def update_note(self, agent: str, item: MemoryItem) -> MemoryItem:
        """Rewrite the note ``item.id`` where it stands (its kind, confidence, text,
        metadata); :class:`NotFound` when the file no longer holds it."""
        path = item.provenance.path
        if classify(path) not in (SourceKind.DAILY_LOG, SourceKind.BANK, SourceKind.ENTITY):
            raise WorkspaceError(f"{path} holds no notes")
        lines, parsed = self._parsed(agent, path)
        span = parsed.span(item.id)
        if span is None:
            raise NotFound(f"no note {item.id!r} in {path} any more")
        start, end = span
        write_text(
            self.require_agent(agent) / path,
            "".join(lines[:start] + notes.render_note(item) + lines[end:]),
        )
        return brain.with_line(item, path, start)

    def write_session(self, agent: str, session: SessionRecord) -> str:
        """Write a whole session file (replacing an earlier import); returns its path."""
        folder = self.require_agent(agent)
        path = sessions.session_filename(session.session_id)
        write_text(folder / path, sessions.render_session(session))
        return path

    def append_turn(
        self,
        agent: str,
        session_id: str,
        turn: TurnRecord,
        *,
        started_at: datetime,
        header_fields: Mapping[str, str] | None = None,
    ) -> str:
        """Append one turn to the session file (created with its header if absent)."""
        path = sessions.session_filename(session_id)
        header = sessions.session_header(session_id, started_at, extra=header_fields)

        def change(lines: list[str]) -> list[str]:
            text = "".join(lines)
            if text and not text.endswith("\n"):
                text += "\n"
            return split_lines(text + "\n" + sessions.render_turn(turn))

        self._edit(agent, path, change, header)
        return path

    def session_headers(self, agent: str) -> list[sessions.SessionHeader]:
        """Headers of the live sessions: those kronika recorded itself, oldest first,
        then those ``save_turn`` started (``source: api``), by file name. Imports, whose
        ids have another shape and whose header has another source, are not listed."""
        folder = self.require_agent(agent) / "sessions"
        live: list[sessions.SessionHeader] = []
        saved: list[sessions.SessionHeader] = []
        if not folder.is_dir():
            return live
        for file in sorted(folder.glob("*.md")):
            is_live = bool(sessions.LIVE_ID_RE.match(file.stem))
            if not is_live and not sessions.saved_head(file):
                continue  # an import: only its first lines were read
            read = read_source(folder.parent, f"sessions/{file.name}")
            if read is None:
                continue
            fields = sessions.read_header(read.text)
            if is_live:
                live.append(sessions.SessionHeader(file.stem, f"sessions/{file.name}", fields))
            elif fields.get("source") == sessions.SAVED_SOURCE:
                session_id = fields.get("session") or unquote(file.stem)
                saved.append(sessions.SessionHeader(session_id, f"sessions/{file.name}", fields))
        return live + saved

    def set_session_fields(
        self, agent: str, session_id: str, fields: Mapping[str, str | None]
    ) -> str:
        """Change header fields of an existing session file; returns its path."""
        path = sessions.session_filename(session_id)
        if not (self.require_agent(agent) / path).is_file():
            raise NotFound(f"agent {agent!r} has no session {session_id!r}")
        self._edit(agent, path, lambda lines: frontmatter.set_fields(lines, fields))
        return path

    def summary_headers(self, agent: str, level: str) -> list[tuple[str, Mapping[str, str]]]:
        """``(path, header fields)`` of every ``summaries/<level>/*.md``, by name."""
        folder = self.require_agent(agent)
        found = []
        for file in sorted((folder / "summaries" / level).glob("*.md")):
            rel = f"summaries/{level}/{file.name}"
            read = read_source(folder, rel)
            if read is not None:
                found.append((rel, sessions.read_header(read.text)))
        return found

    def write_summary(self, agent: str, path: str, text: str, fields: dict[str, str]) -> str:
        """Write ``summaries/L1|L2/<name>.md`` with a header of ``fields``."""
        if classify(_checked_path(path)) is not SourceKind.SUMMARY:
            raise WorkspaceError(f"{path} is not a summaries/L1 or summaries/L2 Markdown file")
        write_text(self.require_agent(agent) / path, documents.render_summary(text, fields))
        return path

    def read_identity(self, agent: str) -> str:
        """``identity.md`` as written (empty when missing)."""
        read = read_source(self.require_agent(agent), IDENTITY)
        return read.text if read is not None else ""

    def read_active_context(self, agent: str) -> str:
        """``active_context.md`` as written (empty when missing)."""
        read = read_source(self.require_agent(agent), documents.ACTIVE_CONTEXT)
        return read.text if read is not None else ""

    def active_context_item(self, agent: str) -> MemoryItem | None:
        """The active context as its item (with the audience it was made for), if any."""
        read = read_source(self.require_agent(agent), documents.ACTIVE_CONTEXT)
        if read is None:
            return None
        tenant = self.tenant_of(agent)
        return documents.parse_active_context(
            read.text, agent=agent, tenant=tenant, mtime=read.mtime
        ).item

    def write_active_context(self, agent: str, text: str, owners: Audience = OWNER) -> None:
        """Replace the active context (the summary of the last session, made for ``owners``)."""
        write_text(
            self.require_agent(agent) / documents.ACTIVE_CONTEXT,
            documents.render_active_context(text, owners),
        )

    # -- lessons ---------------------------------------------------------------------------

    def read_lessons(self, agent: str) -> list[Lesson]:
        """The agent's lessons (``lessons.md``), in file order."""
        read = read_source(self.require_agent(agent), lessons.LESSONS_FILE)
        if read is None:
            return []
        found, _, warned = lessons.parse_lessons(read.text, agent=agent, mtime=read.mtime)
        self.notes.extend(warned)
        return found

    def write_lessons(self, agent: str, changed: Sequence[Lesson]) -> None:
        """Add or replace (by id) ``changed`` in ``lessons.md``, keeping the others."""
        kept = self.read_lessons(agent)
        index = {lesson.id: n for n, lesson in enumerate(kept)}
        for lesson in changed:
            if lesson.id in index:
                kept[index[lesson.id]] = lesson
            else:
                index[lesson.id] = len(kept)
                kept.append(lesson)
        write_text(self.require_agent(agent) / lessons.LESSONS_FILE, lessons.render_lessons(kept))

    # -- proposals (changes waiting for the person; never indexed) -------------------------

    def read_proposals(self, agent: str) -> proposals.ParsedProposals:
        """The proposals in ``proposals.md``; damaged lines are reported in ``warnings``."""
        read = read_source(self.require_agent(agent), proposals.PATH)
        if read is None:
            return proposals.ParsedProposals((), ())
        parsed = proposals.parse_proposals(read.text)
        return replace(parsed, warnings=read.warnings + parsed.warnings)

    def add_proposal(self, agent: str, entry: proposals.ProposalEntry) -> None:
        """Append ``entry`` to ``proposals.md`` (created when missing)."""
        self._edit(
            agent, proposals.PATH, lambda ls: proposals.append_entry(ls, entry), proposals.TEMPLATE
        )
        self._record_proposals(agent)

    def remove_proposal(self, agent: str, proposal_id: str) -> None:
        """Delete the line of proposal ``proposal_id``; every other line is kept."""
        self._edit(agent, proposals.PATH, lambda lines: proposals.remove_entry(lines, proposal_id))
        self._record_proposals(agent)

    def _record_proposals(self, agent: str) -> None:
        """Record how many proposals wait (:mod:`kronika.stores.held`)."""
        count = len(self.read_proposals(agent).entries)
        held.note_count(self.home, f"agents/{agent}/{proposals.PATH}", count)

    def cleanup_temp(self) -> int:
        """Delete temporary files left by interrupted writes; returns how many."""
        if not self._root.is_dir():
            return 0
        removed = 0
        for path in self._root.rglob("*"):
            if is_temp_name(path.name) and path.is_file():
                path.unlink(missing_ok=True)
                removed += 1
        return removed
