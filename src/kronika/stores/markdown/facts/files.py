"""Moving facts between the fact files (``workspace.fact_files``): a fact added to the
Brain, changed where it stands, superseded into ``history.md``, archived and brought
back, kept aside and put back, and an item removed from whatever file holds it. Each
move writes its destination before the file it leaves, in the order
:mod:`.moves` explains, through :class:`~.write.FactWriter`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kronika.core.model import MemoryItem
from kronika.stores.markdown.agentfiles import AgentFiles, checked_path
from kronika.stores.markdown.facts import brain, lookup, moves
from kronika.stores.markdown.facts.many import FactStep, write_many
from kronika.stores.markdown.facts.reads import FactReads, held
from kronika.stores.markdown.facts.write import FactWriter
from kronika.stores.markdown.files import keep_copy, write_text
from kronika.stores.markdown.layout import SourceKind, classify
from kronika.stores.markdown.state import WorkspaceState


class FactFiles:
    """The moves of facts between the fact files (see the module docstring)."""

    def __init__(
        self, state: WorkspaceState, files: AgentFiles, reads: FactReads, writer: FactWriter
    ) -> None:
        self.state = state
        self.files = files
        self.reads = reads
        self.writer = writer

    def add_fact(self, agent: str, item: MemoryItem) -> MemoryItem:
        """Append ``item`` to its Brain section (``User`` if none); ``brain.md`` is
        created when missing. Returns the item citing its new line."""
        return write_many(self.reads, self.writer, agent, [FactStep(item)])[0][0]

    def write_facts(
        self, agent: str, steps: Sequence[FactStep]
    ) -> list[tuple[MemoryItem, tuple[str, ...]]]:
        """Add, refresh and supersede facts in one go (:mod:`.many`): the files the same
        steps leave one by one, for one rewrite of the Brain and one append to the
        history. Returns each step's fact citing where it was left, and the files the
        step wrote."""
        return write_many(self.reads, self.writer, agent, steps)

    def update_fact(self, agent: str, item: MemoryItem) -> MemoryItem:
        """Rewrite the bullet with ``item.id`` in place (Brain or archive)."""
        return write_many(self.reads, self.writer, agent, [FactStep(item, touch=True)])[0][0]

    def supersede_fact(self, agent: str, old_id: str, new: MemoryItem) -> MemoryItem:
        """Move fact ``old_id`` to ``history.md`` with validity ``[valid_from,
        new.valid_from)`` and ``superseded_by=new.id``; ``new`` takes its line.

        ``new`` starts no earlier than ``old`` did (a clock set back, or a writer whose
        time was taken before another's, would otherwise make an interval run
        backwards and two values current at once). An archived ``old_id`` comes back
        to the Brain first. History is written before the Brain: a crash between the
        two leaves a copy that :mod:`~kronika.stores.markdown.facts.moves` reads as not
        moved, so the key keeps exactly one current value at every point.
        """
        return write_many(self.reads, self.writer, agent, [FactStep(new, replaces=old_id)])[0][0]

    def move_to_archive(self, agent: str, ids: Sequence[str]) -> list[MemoryItem]:
        """Move the Brain facts with these ids to ``brain_archive.md`` (unknown ids are
        skipped); returns them as archived items."""
        lines, parsed = self.reads.parsed(agent, brain.BRAIN.path)
        wanted = set(ids)
        moving = [item for item in parsed.items if item.id in wanted]
        if not moving:
            return []
        archived = self.writer.append(agent, brain.ARCHIVE, moving)
        for item in sorted(moving, key=lambda i: parsed.spans[i.id][0], reverse=True):
            start, end = parsed.spans[item.id]
            del lines[start:end]
        self.writer.write(agent, brain.BRAIN.path, "".join(lines))
        return archived

    def put_back_facts(self, agent: str, path: str, items: Sequence[MemoryItem]) -> None:
        """Append ``items`` (facts kept aside when ``path`` lost them) to ``path`` again."""
        spec = next(s for s in brain.FACT_FILES if s.path == path)
        self.writer.append(agent, spec, list(items))

    def keep_lost_facts(self, agent: str, path: str, items: Sequence[MemoryItem]) -> Path:
        """Write ``items`` (facts ``path`` no longer holds) as a fact file under
        ``.corrupt/``, ready to be copied back; returns its path."""
        folder = self.files.require_agent(agent)
        spec = next(s for s in brain.FACT_FILES if s.path == path)
        text = brain.render_facts_document(spec, list(items))
        return folder / keep_copy(folder, f"{path}.lost", text.encode("utf-8"))

    def settle_moves(self, agent: str) -> tuple[str, ...]:
        """Delete the leftovers of interrupted moves from the archive and the history;
        returns the paths of the files rewritten. Call it under the workspace lock."""
        changed: list[str] = []
        ahead: list[set[str]] = []
        for spec in brain.FACT_FILES:
            entry = self.reads.kept(agent, spec.path)
            if entry is None:
                continue
            stale: set[str] = set()
            for ids in ahead:
                stale.update(held(ids, entry.parsed))
            if stale:
                lines = moves.drop_bullets(list(entry.lines), entry.parsed, stale)
                self.writer.write(agent, spec.path, "".join(lines))
                changed.append(spec.path)
                entry = self.reads.kept(agent, spec.path)
            if entry is not None:
                ahead.append(lookup.ids(entry))
        return tuple(changed)

    def remove_item(self, agent: str, item: MemoryItem) -> bool:
        """Delete ``item`` (by id) from the file its provenance names: its bullet,
        paragraph or turn block, or the whole summary file. A fact whose provenance
        is out of date is looked for in the other fact files. False if not found."""
        path = checked_path(item.provenance.path)
        kind = classify(path)
        candidates = [path]
        if kind is SourceKind.FACTS:
            candidates += [s.path for s in brain.FACT_FILES if s.path != path]
        folder = self.files.require_agent(agent)
        self.writer.release_brain(agent, os.fspath(folder))  # files are edited on disk below
        if kind is SourceKind.FACTS:
            self.drop_leftovers(agent, item.id)
        for candidate in candidates:
            lines, parsed = self.reads.parsed(agent, candidate)
            span = parsed.span(item.id)
            if span is None:
                continue
            if kind is SourceKind.SUMMARY:
                (folder / candidate).unlink()
                self.state.removed.add((agent, candidate))
            elif kind is SourceKind.ACTIVE_CONTEXT:
                write_text(folder / candidate, "")
            else:
                del lines[span[0] : span[1]]
                self.state.facts.drop(os.fspath(folder), candidate)
                write_text(folder / candidate, "".join(lines))
            return True
        return False

    def drop_leftovers(self, agent: str, fact_id: str) -> None:
        """Delete the copies of ``fact_id`` behind its first file (the leftovers of an
        interrupted move), so removing the fact does not bring one of them to light."""
        held = [
            spec
            for spec in brain.FACT_FILES
            if self.reads.parsed(agent, spec.path)[1].span(fact_id)
        ]
        for spec in held[1:]:
            lines, parsed = self.reads.parsed(agent, spec.path)
            lines = moves.drop_bullets(lines, parsed, [fact_id])
            self.writer.write(agent, spec.path, "".join(lines))
