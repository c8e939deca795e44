"""``memory.proposals``: changes an agent's autonomy turned into proposals
(:mod:`kronika.engine.proposals`): listed for the reader who may see them, approved
(applied as the person, a fact placed as :meth:`~kronika.memory.facts.Facts.remember`
would) or rejected."""

from __future__ import annotations

from dataclasses import replace

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Reader, Tier
from kronika.core.visibility import visible
from kronika.engine.changes import AppendTurn, ForgetItems, WriteLessons
from kronika.engine.proposals import Proposal, fact_of, items_of
from kronika.engine.write import USER, WriteReceipt
from kronika.memory.base import MemoryContext
from kronika.memory.facts import Facts
from kronika.memory.forgetting import Forgetting
from kronika.memory.sessions import Sessions
from kronika.stores.markdown.lessons import lesson_items
from kronika.stores.markdown.sessions import header_audience, session_filename


class Proposals:
    """List, approve and reject proposals; calling the part lists them (what
    ``memory.proposals(agent)`` did before the part was there)."""

    def __init__(
        self, ctx: MemoryContext, facts: Facts, sessions: Sessions, forgetting: Forgetting
    ) -> None:
        self._ctx = ctx
        self._facts = facts
        self._sessions = sessions
        self._forgetting = forgetting

    def __call__(self, agent: str | None = None, *, reader: Reader | None = None) -> list[Proposal]:
        """:meth:`list`."""
        return self.list(agent, reader=reader)

    def _proposed_items(self, proposal: Proposal) -> tuple[MemoryItem, ...]:
        """What ``proposal`` would store: its items, or the lessons it would write as
        the items they become (so a lesson's own audience sees its proposal)."""
        if isinstance(proposal.change, WriteLessons):
            tenant = self._ctx.workspace.tenant_of(proposal.agent)
            return tuple(lesson_items(proposal.change.lessons, {}, tenant=tenant))
        if isinstance(proposal.change, AppendTurn):
            return (self._proposed_turn(proposal.agent, proposal.change),)
        return items_of(proposal.change)

    def _proposed_turn(self, agent: str, change: AppendTurn) -> MemoryItem:
        """The turn ``change`` would append, for the audience its session header names
        (a saved turn's change always carries it): who sees that turn sees its proposal."""
        owners = header_audience(dict(change.header), session_filename(change.session_id), [])
        turn = change.turn
        at = turn.at or change.started_at
        return MemoryItem(
            id=turn.turn_id,
            agent=agent,
            tenant=self._ctx.workspace.tenant_of(agent),
            content=turn.content,
            type=ItemType.MESSAGE,
            layer=Layer.WORKING,
            tier=Tier.SHORT,
            created_at=at,
            updated_at=at,
            provenance=Provenance(session_filename(change.session_id)),
            **owners.fields(),
        )

    def approve(self, proposal_id: str, agent: str | None = None) -> WriteReceipt:
        """Apply a waiting proposal as the person, then remove it (see engine/proposals)."""
        ctx = self._ctx
        # a forget approved rewrites the files that held its text once the lock is let go
        with self._forgetting.outside_the_lock(), ctx.lock:
            found = ctx.proposal_book.find(ctx.agents_or_all(agent), proposal_id)
            fact = fact_of(found.change)
            if isinstance(found.change, ForgetItems):  # the one way a forget is written
                receipt = self._forgetting.write_forget(
                    found.agent, found.section, found.change, USER
                )
            elif isinstance(found.change, AppendTurn):
                path = session_filename(found.change.session_id)
                try:
                    change = self._sessions.approved_turn(found.agent, found.change)
                    receipt = ctx.writer.memory_write(found.agent, found.section, change, USER)
                finally:
                    ctx.indexer.forget_tail(found.agent, path)
            elif fact is None:
                receipt = ctx.writer.memory_write(found.agent, found.section, found.change, USER)
            else:
                receipt = self._facts.write_fact(
                    found.agent, found.section, fact, ctx.clock.now(), USER
                )
            ctx.proposal_book.settle(found, "approve")
        return receipt

    def reject(self, proposal_id: str, agent: str | None = None) -> Proposal:
        """Drop a waiting proposal (audited as ``reject``); returns it, marked rejected."""
        ctx = self._ctx
        with ctx.lock:
            found = ctx.proposal_book.find(ctx.agents_or_all(agent), proposal_id)
            ctx.proposal_book.settle(found, "reject")
        return replace(found, status="rejected")

    # named `list`, this method comes last: an annotation below it would read `list` as it
    def list(self, agent: str | None = None, *, reader: Reader | None = None) -> list[Proposal]:
        """Changes waiting for the person's approval; every agent's when ``agent`` is None.
        A reader sees those whose every item they may see (none that only keep books)."""
        ctx = self._ctx
        found = [p for name in ctx.agents_or_all(agent) for p in ctx.proposal_book.pending(name)]
        who = ctx.reading(reader)
        if who is None:
            return found
        return [
            p
            for p in found
            if (its := self._proposed_items(p)) and all(visible(i, who) for i in its)
        ]
