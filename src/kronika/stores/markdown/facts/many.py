"""Many fact changes written together (``workspace.write_facts``): a batch of facts
added, refreshed and superseded costs one rewrite of the Brain and one append to the
history, whatever its length, and leaves the files the same changes made one by one
leave (:meth:`~.files.FactFiles.add_fact`, ``update_fact``, ``supersede_fact``).

The order of the writes is theirs (:mod:`.moves`): an archived fact a step supersedes
is brought back to the Brain before the archive lets it go; the history gets the
retired values before the Brain gives them up."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace

from kronika.core.model import MemoryItem, Status
from kronika.errors import NotFound
from kronika.stores.markdown.facts import brain, lookup
from kronika.stores.markdown.facts.reads import FactReads
from kronika.stores.markdown.facts.write import FactWriter
from kronika.stores.markdown.lines import ParsedItems


@dataclass(frozen=True, slots=True)
class FactStep:
    """One change of a batch: ``item`` added to the Brain; or written over the stored
    fact of its id (``touch``, in the Brain or the archive); or taking the place of the
    current fact ``replaces``, which moves to the history (``supersede_fact``'s rule)."""

    item: MemoryItem
    replaces: str | None = None
    touch: bool = False


class _Plan:
    """Where each step's fact ends: the final item at each Brain bullet (by the id the
    file holds there), the facts to append, the archive's changes, the history's."""

    def __init__(self, agent: str, brain_ids: set[str], archive: ParsedItems) -> None:
        self.agent = agent
        self.slots: dict[str, MemoryItem] = {}  # a Brain bullet's id → the fact it becomes
        self.added: list[MemoryItem] = []
        self.at: dict[str, tuple[bool, str | int]] = {i: (True, i) for i in brain_ids}
        self.archive = archive
        self.taken: set[str] = set()  # archived facts brought back to the Brain
        self.archive_edits: dict[str, MemoryItem] = {}
        self.unarchived: list[MemoryItem] = []  # in the Brain between two writes
        self.retired: list[MemoryItem] = []

    def archived(self, fact_id: str) -> MemoryItem | None:
        """The archived fact ``fact_id`` as the archive holds it (not one brought back)."""
        span = None if fact_id in self.taken else self.archive.spans.get(fact_id)
        if span is None:
            return None
        # found by its line: the items are in file order
        items, spans = self.archive.items, self.archive.spans
        at = bisect.bisect_left(items, span[0], key=lambda item: spans[item.id][0])
        if at < len(items) and items[at].id == fact_id:
            return items[at]
        return next((it for it in items if it.id == fact_id), None)

    def current(self, fact_id: str) -> MemoryItem | None:
        place = self.at.get(fact_id)
        if place is None:
            return None
        slot, where = place
        return self.slots.get(str(where)) if slot else self.added[int(where)]

    def put(self, fact_id: str, item: MemoryItem) -> None:
        """``item`` where fact ``fact_id`` stands now (it may be ``item``'s own id)."""
        slot, where = self.at.pop(fact_id)
        if slot:
            self.slots[str(where)] = item
        else:
            self.added[int(where)] = item
        self.at[item.id] = (slot, where)

    def step(self, step: FactStep, brain_items: dict[str, MemoryItem]) -> tuple[str, ...]:
        """Plan ``step``; returns the files it writes."""
        item = step.item
        if step.touch:
            if item.id in self.at:
                self.put(item.id, item)
                return (brain.BRAIN.path,)
            if self.archived(item.id) is None:
                raise NotFound(f"no fact with id {item.id!r} in {self.agent}'s Brain or archive")
            self.archive_edits[item.id] = item
            return (brain.ARCHIVE.path,)
        if step.replaces is None:
            self.at[item.id] = (False, len(self.added))
            self.added.append(item)
            return (brain.BRAIN.path,)
        old_id = step.replaces
        files: tuple[str, ...] = (brain.BRAIN.path, brain.HISTORY.path)
        if old_id in self.at:
            old = self.current(old_id) or brain_items[old_id]
        else:  # archived: back to the end of its Brain section, as it is superseded now
            archived = self.archive_edits.pop(old_id, None) or self.archived(old_id)
            if archived is None:
                raise NotFound(f"no current fact with id {old_id!r} in {self.agent}'s Brain")
            old = archived
            self.taken.add(old_id)
            self.unarchived.append(old)
            self.at[old_id] = (False, len(self.added))
            self.added.append(old)
            files += (brain.ARCHIVE.path,)
        old_since = old.valid_from or old.created_at
        since = max(item.valid_from or item.created_at, old_since)
        new = replace(item, valid_from=since, section=item.section or old.section)
        self.retired.append(
            replace(old, valid_from=old_since, valid_to=since, superseded_by=new.id)
        )
        self.put(old_id, new)
        return files


def write_many(
    reads: FactReads, writer: FactWriter, agent: str, steps: Sequence[FactStep]
) -> list[tuple[MemoryItem, tuple[str, ...]]]:
    """Apply ``steps`` in order (see the module docstring); returns each step's fact as
    stored, citing the file and line where the batch left it (a fact a later step
    superseded is in the history), and the files the step wrote."""
    brain_items = {item.id: item for item in _parse(reads, agent, brain.BRAIN).items}
    plan = _Plan(agent, set(brain_items), _parse(reads, agent, brain.ARCHIVE))
    finals: list[tuple[MemoryItem, tuple[str, ...]]] = []
    for step in steps:
        files = plan.step(step, brain_items)
        finals.append((plan.current(step.item.id) or step.item, files))
    if plan.unarchived:
        writer.edit(agent, brain.BRAIN, lambda lines, _: brain.insert_facts(lines, plan.unarchived))
    gone = [item.id for item in plan.unarchived]
    if plan.unarchived or plan.archive_edits:
        archived = reads.kept(agent, brain.ARCHIVE.path)
        marks = lookup.marks(archived) if archived is not None else None

        def archive_change(lines: list[str], here: ParsedItems) -> list[str]:
            count = marks
            if count is not None:  # and the lines of each fact that leaves now
                spans = [here.spans.get(fact_id) for fact_id in set(gone)]
                count += sum(span[1] - span[0] for span in spans if span is not None)
            return compacted(_rewritten(lines, here, plan.archive_edits, gone, marked=True), count)

        writer.edit(agent, brain.ARCHIVE, archive_change)
    in_history = writer.append(agent, brain.HISTORY, plan.retired) if plan.retired else []

    def final_brain(lines: list[str], here: ParsedItems) -> list[str]:
        return brain.insert_facts(_rewritten(lines, here, plan.slots, gone), plan.added)

    if plan.slots or plan.added or gone:
        writer.edit(agent, brain.BRAIN, final_brain)
    held = _parse(reads, agent, brain.BRAIN)
    # the archive's parse only for the facts refreshed in it (else it is not read)
    archive = _parse(reads, agent, brain.ARCHIVE) if plan.archive_edits else ParsedItems((), {})
    history = {item.id: item.provenance for item in in_history}
    stored: list[tuple[MemoryItem, tuple[str, ...]]] = []
    for item, files in finals:
        if (span := held.span(item.id)) is not None:
            where, status, line = brain.BRAIN.path, Status.CURRENT, span[0]
        elif (span := archive.span(item.id)) is not None:
            where, status, line = brain.ARCHIVE.path, Status.ARCHIVED, span[0]
        else:  # superseded later in the batch
            kept = history.get(item.id)
            where, status = brain.HISTORY.path, Status.SUPERSEDED
            line = (kept.line or 1) - 1 if kept is not None else 0
        stored.append((brain.with_line(replace(item, status=status), where, line), files))
    return stored


def _parse(reads: FactReads, agent: str, spec: brain.FactsFile) -> ParsedItems:
    """The kept parse of ``spec``'s file (its lines are not copied: an archive is long)."""
    entry = reads.kept(agent, spec.path)
    return entry.parsed if entry is not None else ParsedItems((), {})


def _rewritten(
    lines: list[str],
    here: ParsedItems,
    edits: dict[str, MemoryItem],
    gone: Sequence[str] = (),
    *,
    marked: bool = False,
) -> list[str]:
    """``lines`` (a fact file parsed as ``here``) with the facts of ``edits`` written
    over the bullets of their ids and the bullets of ``gone`` dropped; ``marked``: each
    line of a dropped bullet becomes a line that says so (:func:`moved_out`), so no line
    below moves."""
    changes = [
        (here.spans[i], brain.render_fact(item)) for i, item in edits.items() if i in here.spans
    ]
    for fact_id in set(gone):
        if (span := here.spans.get(fact_id)) is not None:
            marks = [brain.moved_out(fact_id)] * (span[1] - span[0]) if marked else []
            changes.append((span, marks))
    for (start, end), new in sorted(changes, key=lambda change: change[0][0], reverse=True):
        lines[start:end] = new
    return lines


def compacted(lines: list[str], marks: int | None = None) -> list[str]:
    """``lines`` without the lines :func:`~.brain.moved_out` left, once they are over
    an eighth of the file (and over :data:`COMPACT_AFTER`): the lines below move then,
    once for many moves. ``marks``: how many there are, when the caller knows
    (:func:`~.lookup.marks`; else they are counted)."""
    moved = brain.moved_out_lines(lines) if marks is None else marks
    if moved <= compact_after(len(lines)):
        return lines
    return [line for line in lines if not brain.is_moved_out(line)]


def compact_after(lines: int) -> int:
    """How many lines :func:`~.brain.moved_out` left a file of ``lines`` lines may hold
    before :func:`compacted` drops them."""
    return max(COMPACT_AFTER, lines // 8)


COMPACT_AFTER = 64
"""How many lines :func:`moved_out` may leave in the archive, whatever its length,
before :func:`compacted` drops them."""


__all__ = ["COMPACT_AFTER", "FactStep", "compact_after", "compacted", "write_many"]
