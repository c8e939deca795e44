"""The notes of a Markdown workspace (``workspace.note_files``): a note appended under
``## Retain`` of its day's log (``memory/`` or ``sensory/<day>.md``), and a note
rewritten where it stands (daily logs, the bank, entity pages). Their format:
:mod:`kronika.stores.markdown.notes`."""

from __future__ import annotations

from datetime import UTC

from kronika.core.model import ItemType, MemoryItem
from kronika.errors import NotFound, WorkspaceError
from kronika.stores.markdown import notes
from kronika.stores.markdown.agentfiles import AgentFiles
from kronika.stores.markdown.facts import brain
from kronika.stores.markdown.facts.reads import FactReads
from kronika.stores.markdown.files import write_text
from kronika.stores.markdown.layout import SourceKind, classify


class NoteFiles:
    """Notes appended and rewritten in place (see the module docstring)."""

    def __init__(self, files: AgentFiles, reads: FactReads) -> None:
        self.files = files
        self.reads = reads

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

        self.files.edit(agent, path, change, notes.daily_log_template(day))
        return brain.with_line(item, path, at)

    def update_note(self, agent: str, item: MemoryItem) -> MemoryItem:
        """Rewrite the note ``item.id`` where it stands (its kind, confidence, text,
        metadata); :class:`NotFound` when the file no longer holds it."""
        path = item.provenance.path
        if classify(path) not in (SourceKind.DAILY_LOG, SourceKind.BANK, SourceKind.ENTITY):
            raise WorkspaceError(f"{path} holds no notes")
        lines, parsed = self.reads.parsed(agent, path)
        span = parsed.span(item.id)
        if span is None:
            raise NotFound(f"no note {item.id!r} in {path} any more")
        start, end = span
        write_text(
            self.files.require_agent(agent) / path,
            "".join(lines[:start] + notes.render_note(item) + lines[end:]),
        )
        return brain.with_line(item, path, start)
