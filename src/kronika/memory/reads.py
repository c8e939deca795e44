"""The reads of :class:`kronika.memory.Memory`: recall, one item, listings, facts and
their history. Reads bring the index up to date with the Markdown first."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from kronika.core import checks
from kronika.core.model import (
    ItemType,
    MemoryItem,
    Reader,
    RecallFilter,
    RecallResult,
    Scope,
)
from kronika.core.query import Mode, RecallQuery
from kronika.core.text import normalize_key
from kronika.core.visibility import only_visible, visible
from kronika.engine.held import within_audience
from kronika.engine.turn_ids import turn_named
from kronika.errors import ConfigError, InvalidQuery, NotFound
from kronika.memory.base import MemoryContext
from kronika.ports import Vector


class Reads:
    """Recall, items, facts and their history."""

    def __init__(self, ctx: MemoryContext) -> None:
        self._ctx = ctx

    # --------------------------------------------------------------------- reads
    def recall(
        self,
        query: str | RecallQuery,
        *,
        agent: str | None = None,
        all_agents: bool = False,
        k: int | None = None,
        mode: Mode = "hybrid",
        since: str | datetime | None = None,
        until: str | datetime | None = None,
        as_of: str | datetime | None = None,
        types: Sequence[ItemType | str] = (),
        keys: Sequence[str] = (),
        entities: Sequence[str] = (),
        speakers: Sequence[str] = (),
        scopes: Sequence[Scope | str] = (),
        channel: str | None = None,
        include_superseded: bool = False,
        budget_tokens: int | None = None,
        now: datetime | None = None,
        record_access: bool = True,
        query_vector: Vector | None = None,
        reader: Reader | None = None,
    ) -> RecallResult:
        """Find the memories that best match ``query`` (SPEC R1-R3) among those
        ``reader`` may see (docs/scopes.md).

        ``query`` is the text to look for, with the options as keywords, or a whole
        :class:`~kronika.core.query.RecallQuery` (then give only ``now``,
        ``query_vector`` and ``reader`` beside it): each option means what the
        query's field of that name says. A blank query finds nothing. Raises
        :class:`InvalidQuery` for an option out of its bounds (a ``k`` outside
        1..10 000, a ``budget_tokens`` outside 1..10 000 000, a time that cannot be
        understood or lies outside the years 1..9999) or of the wrong type.
        """
        asked = RecallQuery.from_call(query, locals())
        return self._run(asked, now=now, query_vector=query_vector, reader=reader)

    def _run(
        self,
        asked: RecallQuery,
        *,
        now: datetime | None = None,
        query_vector: Vector | None = None,
        reader: Reader | None = None,
    ) -> RecallResult:
        """:meth:`recall` of a query already made."""
        ctx = self._ctx
        who = ctx.reading(reader)
        if now is not None and not isinstance(now, datetime):
            raise InvalidQuery(f"now must be a datetime, not {type(now).__name__}")
        checks.aware(now, what="now", error=InvalidQuery)
        moment = now or ctx.clock.now()
        if asked.all_agents:
            agents: tuple[str, ...] = ()
            for name in ctx.agents():
                ctx.fresh(name)
        else:
            name = ctx.agent(asked.agent)
            ctx.fresh(name)
            agents = (name,)
        if asked.mode != "lexical":
            ctx.vectors_ready()
        flt = asked.recall_filter(
            agents=agents, now=moment, tenant=None if who is None else who.tenant, reader=who
        )
        result = ctx.healing(  # a damaged index is rebuilt, never the end of an agent
            lambda: ctx.recaller.recall(
                asked.query,
                flt,
                k=asked.k if asked.k is not None else self._default_k(),
                mode=asked.mode,
                now=moment,
                budget_tokens=asked.budget_tokens,
                record_access=asked.record_access,
                query_vector=query_vector,
            )
        )
        if asked.record_access:  # a recall that counts is logged (engine/recall_log.py)
            tenant = ctx.workspace.tenant_of(agents[0]) if agents else ctx.settings.tenant
            ctx.recalls.record(result, at=moment, reader=who, tenant=tenant, agents=agents)
        return result

    def _default_k(self) -> int:
        return checks.count(
            self._ctx.settings.recall_k,
            what="the recall_k setting",
            low=1,
            high=checks.MAX_K,
            error=ConfigError,
        )

    def get(
        self, item_id: str, *, agent: str | None = None, reader: Reader | None = None
    ) -> MemoryItem:
        """One item by id (a turn also by the turn id ``save_turn`` returned);
        :class:`NotFound` also when ``reader`` may not see it."""
        ctx = self._ctx
        item_id = checks.text(item_id, what="the item id")
        name = ctx.agent(agent)
        ctx.fresh(name)
        who = ctx.reading(reader)
        found = [it for it in ctx.index.get_items([item_id]) if it.agent == name]
        found = only_visible(found, who) or turn_named(
            ctx.workspace, ctx.index, name, item_id, lambda it: who is None or visible(it, who)
        )
        if not found:
            raise NotFound(f"no memory item {item_id!r} for agent {name!r}")
        return found[0]

    def items(
        self,
        *,
        agent: str | None = None,
        types: Sequence[ItemType | str] = (),
        include_superseded: bool = False,
        limit: int | None = None,
        offset: int = 0,
        reader: Reader | None = None,
        scopes: Sequence[Scope | str] = (),
    ) -> list[MemoryItem]:
        """Stored items ``reader`` may see, newest first (``kronika list``); ``limit``
        1..1 000 000."""
        ctx = self._ctx
        limit = checks.optional_count(limit, what="the limit", low=1, high=checks.MAX_LIMIT)
        offset = checks.count(offset, what="the offset", low=0, high=checks.MAX_OFFSET)
        name = ctx.agent(agent)
        ctx.fresh(name)
        try:
            flt = RecallFilter(
                agents=(name,),
                types=tuple(
                    ItemType(t) for t in checks.texts(types, what="types", error=InvalidQuery)
                ),
                scopes=tuple(
                    Scope(sc) for sc in checks.texts(scopes, what="scopes", error=InvalidQuery)
                ),
                include_superseded=include_superseded,
                reader=ctx.reading(reader),
            )
        except ValueError as exc:
            raise InvalidQuery(str(exc)) from exc
        listed = ctx.index.list_items(flt, limit=limit, offset=offset)
        return [item for item in listed if within_audience(item, flt)]  # fail closed

    def count(self, *, agent: str | None = None, reader: Reader | None = None) -> int:
        ctx = self._ctx
        name = ctx.agent(agent)
        ctx.fresh(name)
        return ctx.index.count_items(RecallFilter(agents=(name,), reader=ctx.reading(reader)))

    def facts(
        self,
        *,
        agent: str | None = None,
        include_archived: bool = True,
        reader: Reader | None = None,
        scopes: Sequence[Scope | str] = (),
    ) -> list[MemoryItem]:
        """Current facts ``reader`` may see (of ``scopes``, when given): the Brain, then
        (by default) the archive."""
        ctx = self._ctx
        name = ctx.agent(agent)
        facts = self.brain_facts(name, reader, scopes)
        if not include_archived:
            return facts
        archived = only_visible(ctx.workspace.archived_facts(name), ctx.reading(reader))
        return facts + _of_scopes(archived, scopes)

    def brain_facts(
        self, agent: str, reader: Reader | None, scopes: Sequence[Scope | str] = ()
    ) -> list[MemoryItem]:
        """The Brain's facts ``reader`` may see (of ``scopes``, when given)."""
        brain = only_visible(self._ctx.workspace.brain_facts(agent), self._ctx.reading(reader))
        return _of_scopes(brain, scopes)

    def history(
        self, key: str, *, agent: str | None = None, reader: Reader | None = None
    ) -> list[MemoryItem]:
        """Every value a key has had that ``reader`` may see, oldest first, with validity
        intervals (``[]`` for a key that never had one)."""
        ctx = self._ctx
        key = checks.text(key, what="the key")
        name = ctx.agent(agent)
        wanted = normalize_key(key)
        pool = only_visible(ctx.workspace.fact_history(name), ctx.reading(reader))
        pool += self.facts(agent=name, reader=reader)
        values = [f for f in pool if f.key and normalize_key(f.key) == wanted]
        return sorted(values, key=lambda f: f.valid_from or f.created_at)


def _of_scopes(items: list[MemoryItem], scopes: Sequence[Scope | str]) -> list[MemoryItem]:
    """``items`` of these scopes (all of them when none are named)."""
    if not scopes:
        return items
    try:
        wanted = {Scope(scope) for scope in scopes}
    except ValueError as exc:
        raise InvalidQuery(str(exc)) from exc
    return [item for item in items if item.scope in wanted]
