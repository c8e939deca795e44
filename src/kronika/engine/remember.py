"""What remembering a fact becomes (SPEC M3): the decision the write path's
:meth:`~kronika.engine.write.MemoryWriter.remember_fact` makes for every caller —
:meth:`Memory.remember`, an approved proposal, consolidation, the agent tools, the
server.

The fact is first screened for secrets (the ``secrets`` setting,
:mod:`kronika.core.screening`), so a redacted fact said twice is one fact; it is then
placed against the stored facts of its own audience (one audience's facts never
replace another's) by the rules of :mod:`kronika.core.dedup`: a new fact is added
(:class:`AddFact`), a new value of a key supersedes the current one
(:class:`SupersedeFact`), an exact duplicate only refreshes ``updated_at``
(:class:`TouchFact`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TypeGuard

from kronika.core.dedup import Add, Refresh, Replace, place_fact, same_form
from kronika.core.model import MemoryItem, Source
from kronika.core.screening import screen_item
from kronika.core.text import normalize_key
from kronika.core.visibility import Audience
from kronika.engine.changes import AddFact, Change, SupersedeFact, TouchFact
from kronika.stores.markdown.facts.many import FactStep
from kronika.stores.markdown.workspace import MarkdownWorkspace

FactChange = AddFact | SupersedeFact | TouchFact

_Slot = tuple[Audience, str, str]
"""Where a fact is looked for: its audience, its key (normalized) or ``""``, and for a
fact without a key its value's :func:`~kronika.core.dedup.same_form`."""


class FactPlacer:
    """Decides the change each fact of a batch makes (:class:`AddFact`,
    :class:`SupersedeFact` or :class:`TouchFact`), one after another, as if every
    change before it had been written: against the stored facts of its audience and
    the batch's own earlier facts (:meth:`take` tells it a change was written).

    A fact the person gave (not ``source=auto``) can only meet facts of its own key, or
    without a key of its own text (:func:`~kronika.core.dedup.place_fact`'s rules), so
    only those are compared: a batch costs what its facts cost, not their number times
    the Brain's. An extracted fact is compared with every Brain fact of its audience
    (near duplicates and a key's concept)."""

    def __init__(
        self, workspace: MarkdownWorkspace, agent: str, *, secrets: str, near: float
    ) -> None:
        self._workspace, self._agent = workspace, agent
        self._secrets, self._near = secrets, near
        self._brain: dict[Audience, dict[str, MemoryItem]] = {}
        self._slots: dict[_Slot, dict[str, MemoryItem]] = {}
        self._archived: dict[str, MemoryItem | None] = {}  # changed by the batch (None: gone)
        for fact in workspace.brain_facts(agent):
            self._enter(fact)

    def place(self, item: MemoryItem, now: datetime) -> FactChange:
        """The change remembering ``item`` at ``now`` makes: ``item`` screened, then
        added, superseding or refreshing a stored fact of its audience (``near``: the
        similarity from which an extracted keyless fact is the same as a stored one)."""
        item = screen_item(item, self._secrets)
        owners = Audience.of(item).readers()
        if item.source is Source.AUTO:
            brain = list(self._brain.get(owners, {}).values())
        else:
            value = item.value if item.value is not None else item.content
            brain = list(self._slots.get(_slot(owners, item.key, value), {}).values())
        archive = [
            fact
            for found in self._workspace.archived_facts_like(self._agent, item)
            if (fact := self._archived.get(found.id, found)) is not None
            and Audience.of(fact).readers() == owners
        ]
        match place_fact(item, brain, archive, near=self._near):
            case Refresh(fact):
                return TouchFact(replace(fact, updated_at=now))
            case Replace(old, new):
                return SupersedeFact(old.id, new)
            case Add(new):
                return AddFact(new)

    def take(self, change: FactChange) -> None:
        """``change`` was written (or will be, before the batch ends): the facts that
        follow are placed against what it leaves."""
        match change:
            case AddFact(item):
                self._enter(item)
            case TouchFact(item):
                if not self._leave(item.id):
                    self._archived[item.id] = item
                    return
                self._enter(item)
            case SupersedeFact(old_id, new):
                if not self._leave(old_id):
                    self._archived[old_id] = None
                self._enter(new)

    def _enter(self, fact: MemoryItem) -> None:
        owners = Audience.of(fact).readers()
        self._brain.setdefault(owners, {})[fact.id] = fact
        self._slots.setdefault(_stored_slot(owners, fact), {})[fact.id] = fact

    def _leave(self, fact_id: str) -> bool:
        """Forget Brain fact ``fact_id``; False when the Brain does not hold it."""
        for owners, facts in self._brain.items():
            fact = facts.pop(fact_id, None)
            if fact is not None:
                del self._slots[_stored_slot(owners, fact)][fact_id]
                return True
        return False


def _slot(owners: Audience, key: str | None, value: str) -> _Slot:
    return (owners, normalize_key(key), "") if key else (owners, "", same_form(value))


def _stored_slot(owners: Audience, fact: MemoryItem) -> _Slot:
    """A stored fact's slot: its value as :func:`~kronika.core.dedup.place_fact` reads
    a stored fact's."""
    return _slot(owners, fact.key, fact.value or fact.content)


def is_fact_change(change: Change) -> TypeGuard[FactChange]:
    """Whether ``change`` is one a remembered fact makes (not a note a storage policy
    made of it)."""
    return isinstance(change, AddFact | TouchFact | SupersedeFact)


def fact_step(change: FactChange) -> FactStep:
    """The workspace's step for a remembered fact's change."""
    match change:
        case AddFact(item):
            return FactStep(item)
        case TouchFact(item):
            return FactStep(item, touch=True)
        case SupersedeFact(old_id, new):
            return FactStep(new, replaces=old_id)


__all__ = ["FactChange", "FactPlacer", "fact_step", "is_fact_change"]
