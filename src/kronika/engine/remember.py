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

from kronika.core.dedup import Add, Refresh, Replace, place_fact
from kronika.core.model import MemoryItem
from kronika.core.screening import screen_item
from kronika.core.visibility import Audience
from kronika.engine.changes import AddFact, SupersedeFact, TouchFact
from kronika.stores.markdown.workspace import MarkdownWorkspace

FactChange = AddFact | SupersedeFact | TouchFact


def fact_change(
    workspace: MarkdownWorkspace,
    agent: str,
    item: MemoryItem,
    now: datetime,
    *,
    secrets: str,
    near: float,
) -> FactChange:
    """The change remembering ``item`` in ``agent``'s memory makes at ``now``: ``item``
    screened, then added, superseding or refreshing a stored fact of its audience
    (``near``: the similarity from which a keyless fact is the same as a stored one)."""
    item = screen_item(item, secrets)
    owners = Audience.of(item).readers()
    placed = place_fact(
        item,
        [f for f in workspace.brain_facts(agent) if Audience.of(f).readers() == owners],
        [
            f
            for f in workspace.archived_facts_like(agent, item)
            if Audience.of(f).readers() == owners
        ],
        near=near,
    )
    match placed:
        case Refresh(fact):
            return TouchFact(replace(fact, updated_at=now))
        case Replace(old, new):
            return SupersedeFact(old.id, new)
        case Add(new):
            return AddFact(new)


__all__ = ["FactChange", "fact_change"]
