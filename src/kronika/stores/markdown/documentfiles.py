"""The whole-file documents of a Markdown workspace (``workspace.document_files``):
``identity.md``, ``active_context.md``, the summaries (``summaries/L1|L2/``),
``lessons.md`` and ``proposals.md`` (changes waiting for the person; never indexed).
Their formats: :mod:`~kronika.stores.markdown.documents`,
:mod:`~kronika.stores.markdown.lessons`, :mod:`~kronika.stores.markdown.proposals`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from kronika.core.lessons import Lesson
from kronika.core.model import MemoryItem
from kronika.core.visibility import OWNER, Audience
from kronika.errors import WorkspaceError
from kronika.stores import held
from kronika.stores.markdown import documents, lessons, proposals, sessions
from kronika.stores.markdown.agentfiles import AgentFiles, checked_path
from kronika.stores.markdown.files import read_source, write_text
from kronika.stores.markdown.layout import IDENTITY, SourceKind, classify
from kronika.stores.markdown.state import WorkspaceState


class DocumentFiles:
    """Identity, active context, summaries, lessons and proposals (see the module
    docstring)."""

    def __init__(self, state: WorkspaceState, files: AgentFiles) -> None:
        self.state = state
        self.files = files

    def summary_headers(self, agent: str, level: str) -> list[tuple[str, Mapping[str, str]]]:
        """``(path, header fields)`` of every ``summaries/<level>/*.md``, by name."""
        folder = self.files.require_agent(agent)
        found = []
        for file in sorted((folder / "summaries" / level).glob("*.md")):
            rel = f"summaries/{level}/{file.name}"
            read = read_source(folder, rel)
            if read is not None:
                found.append((rel, sessions.read_header(read.text)))
        return found

    def write_summary(self, agent: str, path: str, text: str, fields: dict[str, str]) -> str:
        """Write ``summaries/L1|L2/<name>.md`` with a header of ``fields``."""
        if classify(checked_path(path)) is not SourceKind.SUMMARY:
            raise WorkspaceError(f"{path} is not a summaries/L1 or summaries/L2 Markdown file")
        write_text(self.files.require_agent(agent) / path, documents.render_summary(text, fields))
        return path

    def read_identity(self, agent: str) -> str:
        """``identity.md`` as written (empty when missing)."""
        read = read_source(self.files.require_agent(agent), IDENTITY)
        return read.text if read is not None else ""

    def read_active_context(self, agent: str) -> str:
        """``active_context.md`` as written (empty when missing)."""
        read = read_source(self.files.require_agent(agent), documents.ACTIVE_CONTEXT)
        return read.text if read is not None else ""

    def active_context_item(self, agent: str) -> MemoryItem | None:
        """The active context as its item (with the audience it was made for), if any."""
        read = read_source(self.files.require_agent(agent), documents.ACTIVE_CONTEXT)
        if read is None:
            return None
        tenant = self.state.tenant_of(agent)
        return documents.parse_active_context(
            read.text, agent=agent, tenant=tenant, mtime=read.mtime
        ).item

    def write_active_context(self, agent: str, text: str, owners: Audience = OWNER) -> None:
        """Replace the active context (the summary of the last session, made for ``owners``)."""
        write_text(
            self.files.require_agent(agent) / documents.ACTIVE_CONTEXT,
            documents.render_active_context(text, owners),
        )

    def read_lessons(self, agent: str) -> list[Lesson]:
        """The agent's lessons (``lessons.md``), in file order."""
        read = read_source(self.files.require_agent(agent), lessons.LESSONS_FILE)
        if read is None:
            return []
        found, _, warned = lessons.parse_lessons(read.text, agent=agent, mtime=read.mtime)
        self.state.notes.extend(warned)
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
        write_text(
            self.files.require_agent(agent) / lessons.LESSONS_FILE, lessons.render_lessons(kept)
        )

    def read_proposals(self, agent: str) -> proposals.ParsedProposals:
        """The proposals in ``proposals.md``; damaged lines are reported in ``warnings``."""
        read = read_source(self.files.require_agent(agent), proposals.PATH)
        if read is None:
            return proposals.ParsedProposals((), ())
        parsed = proposals.parse_proposals(read.text)
        return replace(parsed, warnings=read.warnings + parsed.warnings)

    def add_proposal(self, agent: str, entry: proposals.ProposalEntry) -> None:
        """Append ``entry`` to ``proposals.md`` (created when missing)."""
        self.add_proposals(agent, (entry,))

    def add_proposals(self, agent: str, entries: Sequence[proposals.ProposalEntry]) -> None:
        """Append ``entries`` to ``proposals.md`` in one write of it (created when missing)."""

        def change(lines: list[str]) -> list[str]:
            for entry in entries:
                lines = proposals.append_entry(lines, entry)
            return lines

        self.files.edit(agent, proposals.PATH, change, proposals.TEMPLATE)
        self.record_proposals(agent)

    def remove_proposal(self, agent: str, proposal_id: str) -> None:
        """Delete the line of proposal ``proposal_id``; every other line is kept."""
        self.files.edit(
            agent, proposals.PATH, lambda lines: proposals.remove_entry(lines, proposal_id)
        )
        self.record_proposals(agent)

    def record_proposals(self, agent: str) -> None:
        """Record how many proposals wait (:mod:`kronika.stores.held`)."""
        count = len(self.read_proposals(agent).entries)
        held.note_count(self.state.home, f"agents/{agent}/{proposals.PATH}", count)
