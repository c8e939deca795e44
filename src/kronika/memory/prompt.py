"""``memory.prompt``: what an agent is given to read — the Brain at wake-up, its
identity, the summary of its last session, the ``<memory>`` and ``LONG_TERM_MEMORY``
blocks (:mod:`kronika.core.prompt`), and the facts a prompt loads whole or by
relevance (SPEC R4, R6). Each holds only what the reader may see."""

from __future__ import annotations

from collections.abc import Sequence

from kronika.core import checks
from kronika.core.model import ItemType, MemoryItem, Reader, Scope
from kronika.core.prompt import render_brain, render_long_term_block, render_memory_block
from kronika.core.visibility import visible
from kronika.memory.base import MemoryContext
from kronika.memory.reads import Reads


class Prompt:
    """The Brain, identity, active context, prompt blocks, facts loaded for a prompt."""

    def __init__(self, ctx: MemoryContext, reads: Reads) -> None:
        self._ctx = ctx
        self._reads = reads

    def load_all(
        self, *, agent: str | None = None, query: str | None = None, reader: Reader | None = None
    ) -> list[MemoryItem]:
        """All current facts below ``load_all_below`` of them; above, the relevant ones (R6)."""
        name = self._ctx.agent(agent)
        facts = self._reads.facts(agent=name, reader=reader)
        limit = self._ctx.settings.load_all_below
        if len(facts) < limit:
            return facts
        if not query:
            brain = self._reads.brain_facts(name, reader)
            return sorted(brain, key=lambda f: -f.importance)[:limit]
        result = self._reads.recall(  # an automatic read: it records no access (docs/scoring.md)
            query,
            agent=name,
            k=min(limit, checks.MAX_K),
            types=[ItemType.FACT],
            reader=reader,
            record_access=False,
        )
        return [hit.item for hit in result.hits]

    def load_long_term(
        self,
        *,
        agent: str | None = None,
        query: str | None = None,
        k: int | None = None,
        reader: Reader | None = None,
        scopes: Sequence[Scope | str] = (),
    ) -> list[MemoryItem]:
        """Static Brain facts plus the top-K relevant long-term items for ``query`` (R4)."""
        name = self._ctx.agent(agent)
        static = self._reads.brain_facts(name, reader, scopes)
        if not query:
            return static
        seen = {f.id for f in static}
        result = self._reads.recall(  # an automatic read: it records no access (docs/scoring.md)
            query,
            agent=name,
            k=k or self._ctx.settings.long_term_top_k,
            types=[ItemType.FACT, ItemType.NOTE, ItemType.SUMMARY, ItemType.SEMANTIC],
            reader=reader,
            scopes=scopes,
            record_access=False,
        )
        return static + [hit.item for hit in result.hits if hit.item.id not in seen]

    def blocks(
        self,
        *,
        agent: str | None = None,
        query: str | None = None,
        reader: Reader | None = None,
        scopes: Sequence[Scope | str] = (),
    ) -> str:
        """The ``<memory>`` block (I6) and, for a query, the ``LONG_TERM_MEMORY`` block (R4),
        of what ``reader`` may see (of ``scopes``, when given). Returns ``""`` when there is
        nothing to show (``memory.format_for_prompt``).
        """
        name = self._ctx.agent(agent)
        brain = self._reads.brain_facts(name, reader, scopes)
        parts = [render_memory_block(brain)]
        if query:
            long_term = self.load_long_term(agent=name, query=query, reader=reader, scopes=scopes)
            relevant = [i for i in long_term if i not in brain]
            parts.append(render_long_term_block(relevant, []))
        return "\n\n".join(part for part in parts if part)

    def brain(
        self,
        *,
        agent: str | None = None,
        reader: Reader | None = None,
        scopes: Sequence[Scope | str] = (),
    ) -> str:
        """The Brain as the agent sees it at wake-up (the facts ``reader`` may see)."""
        name = self._ctx.agent(agent)
        return render_brain(name, self._reads.brain_facts(name, reader, scopes))

    def identity(self, *, agent: str | None = None) -> str:
        """The agent's identity file, as written."""
        return self._ctx.workspace.read_identity(self._ctx.agent(agent))

    def active_context(self, *, agent: str | None = None, reader: Reader | None = None) -> str:
        """The summary of the last session, when ``reader`` may see that session ("" if not)."""
        ctx = self._ctx
        who = ctx.reading(reader)
        item = ctx.workspace.active_context_item(ctx.agent(agent))
        if item is None or (who is not None and not visible(item, who)):
            return ""
        return item.content
