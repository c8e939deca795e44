"""The read side of :class:`kronika.memory.Memory`: recall, listings, the Brain and the
prompt blocks. Reads bring the index up to date with the Markdown first."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kronika.core.model import (
    ItemType,
    MemoryItem,
    Reader,
    RecallFilter,
    RecallResult,
    Scope,
)
from kronika.core.prompt import (
    render_brain,
    render_long_term_block,
    render_memory_block,
)
from kronika.core.text import normalize_key
from kronika.core.timeexpr import parse_since, parse_until
from kronika.core.visibility import only_visible, visible
from kronika.engine.recall import Mode
from kronika.errors import ConfigError, InvalidQuery, NotFound
from kronika.memory import checks
from kronika.memory.base import MemoryBase, _when
from kronika.ports import (
    AuditEntry,
    Vector,
)

_ITEM_ID = re.compile(r"\b[a-z]+-[0-9a-f]{12}\b")
"""An item's id (``f-62acd0de3b06``) where an audit entry's summary names one."""


class MemoryReads(MemoryBase):
    """Recall, items, facts, history, sessions, the Brain and the prompt blocks."""

    # --------------------------------------------------------------------- reads
    def recall(
        self,
        query: str,
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

        A blank query finds nothing. Raises :class:`InvalidQuery` for a ``k`` outside 1..10 000, a
        ``budget_tokens`` outside 1..10 000 000, a time that cannot be understood (or
        lies outside the years 1..9999) and arguments of the wrong type.
        """
        query = checks.text(query, what="the query", error=InvalidQuery)
        k = checks.optional_count(k, what="k", low=1, high=checks.MAX_K, error=InvalidQuery)
        budget_tokens = checks.optional_count(
            budget_tokens,
            what="the token budget",
            low=1,
            high=checks.MAX_BUDGET_TOKENS,
            error=InvalidQuery,
        )
        since, until, as_of = (
            checks.moment_or_text(value, what=what, error=InvalidQuery)
            for value, what in ((since, "since"), (until, "until"), (as_of, "as_of"))
        )
        keys, entities, speakers = (
            checks.texts(values, what=what, error=InvalidQuery)
            for values, what in ((keys, "keys"), (entities, "entities"), (speakers, "speakers"))
        )
        channel = checks.optional_text(channel, what="the channel", error=InvalidQuery)
        who = self._reader(reader)
        if now is not None and not isinstance(now, datetime):
            raise InvalidQuery(f"now must be a datetime, not {type(now).__name__}")
        for value, what in ((now, "now"), (since, "since"), (until, "until"), (as_of, "as_of")):
            checks.aware(value, what=what, error=InvalidQuery)
        moment = now or self.clock.now()
        if all_agents:
            agents: tuple[str, ...] = ()
            for name in self.agents():
                self._fresh(name)
        else:
            name = self._agent(agent)
            self._fresh(name)
            agents = (name,)
        if mode != "lexical":
            self._vectors_ready()
        try:
            flt = RecallFilter(
                agents=agents,
                tenant=None if who is None else who.tenant,
                scopes=tuple(Scope(s) for s in scopes),
                types=tuple(ItemType(t) for t in types),
                keys=tuple(normalize_key(key) for key in keys),
                entities=tuple(entities),
                speakers=tuple(speakers),
                channel=channel,
                since=_when(since, moment, parse_since),
                until=_when(until, moment, parse_until),
                as_of=_when(as_of, moment, parse_until),
                include_superseded=include_superseded,
                reader=who,
            )
        except ValueError as exc:
            raise InvalidQuery(str(exc)) from exc
        except OverflowError as exc:
            raise InvalidQuery(f"that time is outside the years 1 to 9999 ({exc})") from exc
        result = self._healing(  # a damaged index is rebuilt, never the end of an agent
            lambda: self._recaller.recall(
                query,
                flt,
                k=k if k is not None else self._default_k(),
                mode=mode,
                now=moment,
                budget_tokens=budget_tokens,
                record_access=record_access,
                query_vector=query_vector,
            )
        )
        if record_access:  # a recall that counts is logged (engine/recall_log.py)
            tenant = self.workspace.tenant_of(agents[0]) if agents else self.settings.tenant
            self.recalls.record(result, at=moment, reader=who, tenant=tenant, agents=agents)
        return result

    def _default_k(self) -> int:
        return checks.count(
            self.settings.recall_k,
            what="the recall_k setting",
            low=1,
            high=checks.MAX_K,
            error=ConfigError,
        )

    def get(
        self, item_id: str, *, agent: str | None = None, reader: Reader | None = None
    ) -> MemoryItem:
        """One item by id; :class:`NotFound` also when ``reader`` may not see it."""
        item_id = checks.text(item_id, what="the item id")
        name = self._agent(agent)
        self._fresh(name)
        found = [it for it in self.index.get_items([item_id]) if it.agent == name]
        found = only_visible(found, self._reader(reader))
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
        limit = checks.optional_count(limit, what="the limit", low=1, high=checks.MAX_LIMIT)
        offset = checks.count(offset, what="the offset", low=0, high=checks.MAX_OFFSET)
        name = self._agent(agent)
        self._fresh(name)
        try:
            flt = RecallFilter(
                agents=(name,),
                types=tuple(ItemType(t) for t in types),
                scopes=tuple(Scope(sc) for sc in scopes),
                include_superseded=include_superseded,
                reader=self._reader(reader),
            )
        except ValueError as exc:
            raise InvalidQuery(str(exc)) from exc
        return self.index.list_items(flt, limit=limit, offset=offset)

    def count(self, *, agent: str | None = None, reader: Reader | None = None) -> int:
        name = self._agent(agent)
        self._fresh(name)
        return self.index.count_items(RecallFilter(agents=(name,), reader=self._reader(reader)))

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
        name = self._agent(agent)
        facts = self._brain_facts(name, reader, scopes)
        if not include_archived:
            return facts
        archived = only_visible(self.workspace.archived_facts(name), self._reader(reader))
        return facts + _of_scopes(archived, scopes)

    def _brain_facts(
        self, agent: str, reader: Reader | None, scopes: Sequence[Scope | str] = ()
    ) -> list[MemoryItem]:
        brain = only_visible(self.workspace.brain_facts(agent), self._reader(reader))
        return _of_scopes(brain, scopes)

    def history(
        self, key: str, *, agent: str | None = None, reader: Reader | None = None
    ) -> list[MemoryItem]:
        """Every value a key has had that ``reader`` may see, oldest first, with validity
        intervals (``[]`` for a key that never had one)."""
        key = checks.text(key, what="the key")
        name = self._agent(agent)
        wanted = normalize_key(key)
        pool = only_visible(self.workspace.fact_history(name), self._reader(reader))
        pool += self.facts(agent=name, reader=reader)
        values = [f for f in pool if f.key and normalize_key(f.key) == wanted]
        return sorted(values, key=lambda f: f.valid_from or f.created_at)

    def load_all(
        self, *, agent: str | None = None, query: str | None = None, reader: Reader | None = None
    ) -> list[MemoryItem]:
        """All current facts below ``load_all_below`` of them; above, the relevant ones (R6)."""
        name = self._agent(agent)
        facts = self.facts(agent=name, reader=reader)
        limit = self.settings.load_all_below
        if len(facts) < limit:
            return facts
        if not query:
            brain = self._brain_facts(name, reader)
            return sorted(brain, key=lambda f: -f.importance)[:limit]
        result = self.recall(  # an automatic read: it records no access (docs/scoring.md)
            query,
            agent=name,
            k=min(limit, checks.MAX_K),
            types=[ItemType.FACT],
            reader=reader,
            record_access=False,
        )
        return [hit.item for hit in result.hits]

    def load_short_term(
        self,
        *,
        agent: str | None = None,
        session_id: str | None = None,
        limit: int = 20,
        reader: Reader | None = None,
    ) -> list[MemoryItem]:
        """The last ``limit`` turns of a session (the newest session ``reader`` may see
        when none is named)."""
        name = self._agent(agent)
        if session_id is None:
            latest = self.items(agent=name, types=[ItemType.MESSAGE], limit=1, reader=reader)
            if not latest or latest[0].provenance.session_id is None:
                return []
            session_id = latest[0].provenance.session_id
        return self.load_session(session_id, agent=name, reader=reader)[-limit:]

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
        name = self._agent(agent)
        static = self._brain_facts(name, reader, scopes)
        if not query:
            return static
        seen = {f.id for f in static}
        result = self.recall(  # an automatic read: it records no access (docs/scoring.md)
            query,
            agent=name,
            k=k or self.settings.long_term_top_k,
            types=[ItemType.FACT, ItemType.NOTE, ItemType.SUMMARY, ItemType.SEMANTIC],
            reader=reader,
            scopes=scopes,
            record_access=False,
        )
        return static + [hit.item for hit in result.hits if hit.item.id not in seen]

    def format_for_prompt(
        self,
        *,
        agent: str | None = None,
        query: str | None = None,
        reader: Reader | None = None,
        scopes: Sequence[Scope | str] = (),
    ) -> str:
        """The ``<memory>`` block (I6) and, for a query, the ``LONG_TERM_MEMORY`` block (R4),
        of what ``reader`` may see (of ``scopes``, when given). Returns ``""`` when there is
        nothing to show.
        """
        name = self._agent(agent)
        brain = self._brain_facts(name, reader, scopes)
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
        name = self._agent(agent)
        return render_brain(name, self._brain_facts(name, reader, scopes))

    def identity(self, *, agent: str | None = None) -> str:
        return self.workspace.read_identity(self._agent(agent))

    def active_context(self, *, agent: str | None = None, reader: Reader | None = None) -> str:
        """The summary of the last session, when ``reader`` may see that session ("" if not)."""
        who = self._reader(reader)
        item = self.workspace.active_context_item(self._agent(agent))
        if item is None or (who is not None and not visible(item, who)):
            return ""
        return item.content

    def audit(
        self, *, agent: str | None = None, limit: int | None = None, reader: Reader | None = None
    ) -> list[AuditEntry]:
        """The newest ``limit`` (1..1 000 000) entries of the audit trail, oldest first.

        Without a reader: every entry (the owner's trail). A reader gets the entries of
        its tenant's agents about an item it may see (:func:`visible`) and naming no
        other item it may not see (a link names both its ends); an entry about no item,
        or about one it may not see or that is gone, says what someone else's memory
        held, and is left out."""
        limit = checks.optional_count(limit, what="the limit", low=1, high=checks.MAX_LIMIT)
        who = self._reader(reader)
        if who is None:
            return self.audit_log.read(agent, limit)
        ours = [
            entry
            for entry in self.audit_log.read(agent)
            if self.workspace.tenant_of(entry.target_agent) == who.tenant and entry.item_id
        ]
        named = {
            id(entry): {str(entry.item_id), *_ITEM_ID.findall(entry.summary)} for entry in ours
        }
        ids = list(dict.fromkeys(i for names in named.values() for i in names))
        seen = {item.id for item in self.index.get_items(ids) if visible(item, who)}
        shown = [entry for entry in ours if named[id(entry)] <= seen]
        return shown[-limit:] if limit else shown

    def stats(self) -> dict[str, Any]:
        return self.index.stats()


def _of_scopes(items: list[MemoryItem], scopes: Sequence[Scope | str]) -> list[MemoryItem]:
    """``items`` of these scopes (all of them when none are named)."""
    if not scopes:
        return items
    try:
        wanted = {Scope(scope) for scope in scopes}
    except ValueError as exc:
        raise InvalidQuery(str(exc)) from exc
    return [item for item in items if item.scope in wanted]
