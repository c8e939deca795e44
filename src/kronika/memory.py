"""The facade every interface calls: :class:`Memory`.

The CLI, the future REST and MCP servers and user code all go through these
methods. Reads bring the index up to date with the Markdown first (hand edits
are picked up); writes go through the single write path.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from kronika.core.entities import extract_entities
from kronika.core.model import (
    ItemType,
    Layer,
    MemoryItem,
    Provenance,
    RecallFilter,
    RecallResult,
    Scope,
    SessionRecord,
    Source,
    Tier,
    TurnRecord,
)
from kronika.core.prompt import (
    choose_archive,
    render_brain,
    render_long_term_block,
    render_memory_block,
)
from kronika.core.scoring import ScoreWeights
from kronika.core.sections import guess_section, parse_section
from kronika.core.text import normalize_key
from kronika.core.timeexpr import parse_since, parse_until
from kronika.engine.proposals import Proposal, ProposalBook, fact_of
from kronika.engine.recall import Mode, Recaller, RecallSettings
from kronika.engine.sync import Indexer, Progress, SyncReport
from kronika.engine.write import (
    SYSTEM,
    USER,
    AddFact,
    AppendNote,
    AppendTurn,
    ArchiveFacts,
    Change,
    MemoryWriter,
    RemoveItem,
    SupersedeFact,
    TouchFact,
    WriteReceipt,
    WriteSession,
)
from kronika.errors import InvalidInput, InvalidQuery, NotFound
from kronika.ports import (
    AuditEntry,
    AuditLog,
    Clock,
    Embedder,
    ItemIndex,
    Reranker,
    TokenCounter,
    Vector,
)
from kronika.settings import Settings
from kronika.stores.lock import WorkspaceLock
from kronika.stores.markdown.workspace import MarkdownWorkspace

MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 20_000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class ImportReport:
    agent: str
    sessions: int
    turns: int
    sync: SyncReport


def _clean(text: str, *, what: str, limit: int) -> str:
    cleaned = _CONTROL.sub("", text).strip()
    if not cleaned:
        raise InvalidInput(f"{what} is empty")
    if len(cleaned) > limit:
        raise InvalidInput(f"{what} is {len(cleaned)} characters long; the limit is {limit}")
    return cleaned


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


class Memory:
    """Long-term memory of the agents in one workspace.

    Build one with :func:`kronika.app.build_memory` (or inject the parts yourself)::

        with build_memory(load_settings("./.kronika")) as memory:
            memory.remember("prefiere TypeScript", key="preferencia")
            memory.recall("what language does he like?", k=5)
    """

    def __init__(
        self,
        *,
        settings: Settings,
        workspace: MarkdownWorkspace,
        index: ItemIndex,
        embedder: Embedder,
        tokens: TokenCounter,
        clock: Clock,
        audit: AuditLog,
        reranker: Reranker | None = None,
    ) -> None:
        self.settings = settings
        self.workspace = workspace
        self.index = index
        self.embedder = embedder
        self.tokens = tokens
        self.clock = clock
        self.audit_log = audit
        self._lock = WorkspaceLock(settings.home / ".kronika.lock")
        self._indexer = Indexer(
            workspace=workspace,
            index=index,
            embedder=embedder,
            embed_batch=settings.embed_batch,
            context_words=settings.embed_context_words,
        )
        self._proposals = ProposalBook(workspace=workspace, audit=audit, clock=clock)
        self._writer = MemoryWriter(
            workspace=workspace,
            audit=audit,
            settings=settings,
            clock=clock,
            on_written=self._after_write,
            on_proposed=self._proposals.record,
        )
        weights = ScoreWeights(
            alpha=settings.alpha,
            beta=settings.beta,
            gamma=settings.gamma,
            decay_base=settings.decay_base,
        )
        self._recaller = Recaller(
            index=index,
            embedder=embedder,
            tokens=tokens,
            clock=clock,
            settings=RecallSettings(
                candidates=settings.recall_candidates,
                lexical_weight=settings.lexical_weight,
                fusion=settings.fusion,
                skip_function_words=settings.skip_function_words,
                neighbour_weight=settings.neighbour_weight,
                neighbour_window=settings.neighbour_window,
                answer_focus=settings.answer_focus,
                speaker_focus=settings.speaker_focus,
                time_focus=settings.time_focus,
                when_focus=settings.when_focus,
                session_weight=settings.session_weight,
                reranker_depth=settings.reranker_depth,
                reranker_weight=settings.reranker_weight,
                weights=weights,
            ),
            reranker=reranker,
        )
        self._deferred: dict[str, list[str]] | None = None
        self._synced_at: dict[str, datetime] = {}

    # ----------------------------------------------------------------- lifecycle
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.index.close()

    def agents(self) -> list[str]:
        return self.workspace.agents()

    def create_agent(self, agent: str) -> None:
        """Create ``agent``'s folder with empty memory files (no-op when it exists)."""
        if not self.workspace.has_agent(agent):
            with self._lock:
                self.workspace.create_agent(agent)

    def sync(self, agent: str | None = None, *, progress: Progress | None = None) -> SyncReport:
        """Pick up changes made to the Markdown files (by hand or by another process)."""
        with self._lock:
            if agent is None:
                return self._indexer.sync_all(progress=progress)
            report = self._indexer.sync_agent(self._agent(agent), progress=progress)
        self._synced_at[agent] = self.clock.now()
        return report

    def reindex(self, *, progress: Progress | None = None) -> SyncReport:
        """Throw the index away and rebuild it from the Markdown alone."""
        with self._lock:
            self.workspace.cleanup_temp()
            report = self._indexer.rebuild(progress=progress)
        self._synced_at.clear()
        return report

    # -------------------------------------------------------------------- writes
    def memory_write(
        self, target_agent: str, section: str, change: Change, source_agent: str = USER
    ) -> WriteReceipt:
        """The single write path (SPEC C5): permissions, autonomy, audit, then re-index."""
        with self._lock:
            return self._writer.memory_write(target_agent, section, change, source_agent)

    def remember(
        self,
        content: str | None = None,
        *,
        key: str | None = None,
        value: str | None = None,
        agent: str | None = None,
        section: str | None = None,
        source: Source | str = Source.EXPLICIT,
        multi: bool = False,
        importance: float | None = None,
        entities: Sequence[str] = (),
        tags: Sequence[str] = (),
        scope: Scope | str = Scope.PERSONAL,
        channel: str | None = None,
        source_agent: str = USER,
        at: datetime | None = None,
    ) -> WriteReceipt:
        """Remember a fact in the Brain (SPEC M3).

        With a ``key``, a new value *supersedes* the current one (kept as history)
        unless ``multi`` is set; remembering an exact duplicate only refreshes its
        ``updated_at``.
        """
        raw = value if value is not None else content
        if raw is None:
            raise InvalidInput("nothing to remember: give the content (and optionally a key)")
        text = _clean(raw, what="the value", limit=MAX_VALUE_CHARS)
        clean_key = _clean(key, what="the key", limit=MAX_KEY_CHARS) if key is not None else None
        if clean_key is not None and "\n" in clean_key:
            raise InvalidInput("a key must be one line")
        if importance is not None and not 0.0 <= importance <= 1.0:
            raise InvalidInput("importance must be between 0 and 1")
        name = self._agent(agent)
        now = at or self.clock.now()
        src = Source(source)
        try:
            sect = parse_section(section) if section else guess_section(clean_key, text)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from exc
        imp = importance
        if imp is None:
            explicit = src is Source.EXPLICIT
            imp = self.settings.importance_explicit if explicit else self.settings.importance_auto
        item = MemoryItem(
            id=_new_id("f"),
            agent=name,
            content=f"{clean_key}: {text}" if clean_key else text,
            type=ItemType.FACT,
            layer=Layer.LONG_TERM,
            tier=Tier.LONG,
            created_at=now,
            updated_at=now,
            provenance=Provenance(path="brain.md"),
            tenant=self.settings.tenant,
            scope=Scope(scope),
            channel=channel,
            key=clean_key,
            value=text,
            multi=multi,
            source=src,
            section=sect.value,
            importance=imp,
            valid_from=now,
            entities=tuple(dict.fromkeys([*extract_entities(text), *entities])),
            tags=tuple(tags),
        )
        with self._lock:
            return self._write_fact(name, sect.value, item, now, source_agent)

    def _write_fact(
        self, agent: str, section: str, item: MemoryItem, now: datetime, source_agent: str
    ) -> WriteReceipt:
        self._indexer.sync_agent(agent, paths=["brain.md", "brain_archive.md"])
        change = self._fact_change(agent, item, now)
        receipt = self._writer.memory_write(agent, section, change, source_agent)
        if receipt.outcome == "applied":
            self._keep_brain_in_budget(agent)
        return receipt

    def _fact_change(self, agent: str, item: MemoryItem, now: datetime) -> Change:
        facts = self.workspace.brain_facts(agent) + self.workspace.archived_facts(agent)
        wanted = normalize_key(item.key) if item.key else None
        for fact in facts:
            fact_key = normalize_key(fact.key) if fact.key else None
            if fact_key == wanted and _same_text(fact.value or fact.content, item.value or ""):
                return TouchFact(replace(fact, updated_at=now))
        if wanted is not None and not item.multi:
            for fact in facts:
                if fact.key and normalize_key(fact.key) == wanted and not fact.multi:
                    return SupersedeFact(fact.id, replace(item, section=fact.section))
        return AddFact(item)

    def append_fact(
        self, key: str, value: str, *, agent: str | None = None, source_agent: str = USER
    ) -> WriteReceipt:
        """Store an automatically learned fact (``source=auto``) — the adapter call of SPEC I1."""
        return self.remember(
            key=key, value=value, agent=agent, source=Source.AUTO, source_agent=source_agent
        )

    def note(
        self,
        text: str,
        *,
        agent: str | None = None,
        at: datetime | None = None,
        source_agent: str = USER,
    ) -> WriteReceipt:
        """Retain a note in today's daily log (``memory/YYYY-MM-DD.md``, ``## Retain``)."""
        clean = _clean(text, what="the note", limit=MAX_VALUE_CHARS)
        name = self._agent(agent)
        now = at or self.clock.now()
        item = MemoryItem(
            id=_new_id("n"),
            agent=name,
            content=clean,
            type=ItemType.NOTE,
            layer=Layer.LONG_TERM,
            tier=Tier.MID,
            created_at=now,
            updated_at=now,
            provenance=Provenance(path=f"memory/{now.date().isoformat()}.md"),
            tenant=self.settings.tenant,
            section="Retain",
            importance=self.settings.importance_auto,
            entities=extract_entities(clean),
        )
        with self._lock:
            return self._writer.memory_write(name, "Retain", AppendNote(item), source_agent)

    def forget(
        self,
        item_id: str | None = None,
        *,
        key: str | None = None,
        agent: str | None = None,
        source_agent: str = USER,
    ) -> list[MemoryItem]:
        """Forget one item by id, or every value (current and history) of a fact key."""
        if (item_id is None) == (key is None):
            raise InvalidInput("forget needs exactly one of an item id or a key")
        name = self._agent(agent)
        with self._lock:
            self._indexer.sync_agent(name)
            if item_id is not None:
                found = [it for it in self.index.get_items([item_id]) if it.agent == name]
                if not found:
                    raise NotFound(f"no memory item {item_id!r} for agent {name!r}")
            else:
                wanted = normalize_key(key or "")
                pool = (
                    self.workspace.brain_facts(name)
                    + self.workspace.archived_facts(name)
                    + self.workspace.fact_history(name)
                )
                found = [f for f in pool if f.key and normalize_key(f.key) == wanted]
                if not found:
                    raise NotFound(f"agent {name!r} has no fact with key {key!r}")
            for item in found:
                self._writer.memory_write(name, item.section or "", RemoveItem(item), source_agent)
        return found

    def save_turn(
        self,
        session_id: str,
        speaker: str,
        content: str,
        *,
        agent: str | None = None,
        at: datetime | None = None,
        turn_id: str | None = None,
        source_agent: str = USER,
    ) -> str:
        """Append one turn to ``sessions/<session_id>.md`` (auto-save, SPEC L4); returns its id."""
        text = _clean(content, what="the turn", limit=MAX_VALUE_CHARS * 5)
        who = _clean(speaker, what="the speaker", limit=100)
        name = self._agent(agent)
        now = at or self.clock.now()
        with self._lock:
            if turn_id is None:
                existing = self.load_session(session_id, agent=name)
                turn_id = f"{session_id}_{len(existing) + 1}"
            turn = TurnRecord(turn_id=turn_id, speaker=who, content=text, at=now)
            change = AppendTurn(session_id=session_id, turn=turn, started_at=now)
            self._writer.memory_write(name, "sessions", change, source_agent)
        return turn_id

    def import_sessions(
        self,
        agent: str,
        sessions: Iterable[SessionRecord],
        *,
        progress: Progress | None = None,
        source_agent: str = USER,
    ) -> ImportReport:
        """Store whole sessions (imports); indexing is batched at the end."""
        self.create_agent(agent)
        count = turns = 0
        with self._lock, self._deferring(agent) as paths:
            for session in sessions:
                self._writer.memory_write(agent, "sessions", WriteSession(session), source_agent)
                count += 1
                turns += len(session.turns)
            report = self._indexer.sync_agent(agent, paths=list(paths), progress=progress)
        return ImportReport(agent=agent, sessions=count, turns=turns, sync=report)

    # ----------------------------------------------------------------- proposals
    def proposals(self, agent: str | None = None) -> list[Proposal]:
        """Changes waiting for the person's approval; every agent's when ``agent`` is None."""
        return [p for name in self._agents_or_all(agent) for p in self._proposals.pending(name)]

    def approve(self, proposal_id: str, agent: str | None = None) -> WriteReceipt:
        """Apply a waiting proposal as the person, then remove it (see engine/proposals)."""
        with self._lock:
            found = self._proposals.find(self._agents_or_all(agent), proposal_id)
            fact = fact_of(found.change)
            if fact is None:
                receipt = self._writer.memory_write(found.agent, found.section, found.change, USER)
            else:
                receipt = self._write_fact(found.agent, found.section, fact, self.clock.now(), USER)
            self._proposals.settle(found, "approve")
        return receipt

    def reject(self, proposal_id: str, agent: str | None = None) -> Proposal:
        """Drop a waiting proposal (audited as ``reject``); returns it."""
        with self._lock:
            found = self._proposals.find(self._agents_or_all(agent), proposal_id)
            self._proposals.settle(found, "reject")
        return found

    def _agents_or_all(self, agent: str | None) -> list[str]:
        return [self._agent(agent)] if agent else self.agents()

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
    ) -> RecallResult:
        """Find the memories that best match ``query`` (SPEC R1-R3)."""
        moment = now or self.clock.now()
        if all_agents:
            agents: tuple[str, ...] = ()
            for name in self.agents():
                self._fresh(name)
        else:
            name = self._agent(agent)
            self._fresh(name)
            agents = (name,)
        try:
            flt = RecallFilter(
                agents=agents,
                tenant=self.settings.tenant,
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
            )
        except ValueError as exc:
            raise InvalidQuery(str(exc)) from exc
        return self._recaller.recall(
            query,
            flt,
            k=k or self.settings.recall_k,
            mode=mode,
            now=moment,
            budget_tokens=budget_tokens,
            record_access=record_access,
            query_vector=query_vector,
        )

    def get(self, item_id: str, *, agent: str | None = None) -> MemoryItem:
        name = self._agent(agent)
        self._fresh(name)
        found = [it for it in self.index.get_items([item_id]) if it.agent == name]
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
    ) -> list[MemoryItem]:
        """Stored items, newest first (``kronika list``)."""
        name = self._agent(agent)
        self._fresh(name)
        flt = RecallFilter(
            agents=(name,),
            types=tuple(ItemType(t) for t in types),
            include_superseded=include_superseded,
        )
        return self.index.list_items(flt, limit=limit, offset=offset)

    def count(self, *, agent: str | None = None) -> int:
        name = self._agent(agent)
        self._fresh(name)
        return self.index.count_items(RecallFilter(agents=(name,)))

    def facts(self, *, agent: str | None = None, include_archived: bool = True) -> list[MemoryItem]:
        """Current facts: the Brain, then (by default) the archive."""
        name = self._agent(agent)
        facts = self.workspace.brain_facts(name)
        return facts + self.workspace.archived_facts(name) if include_archived else facts

    def history(self, key: str, *, agent: str | None = None) -> list[MemoryItem]:
        """Every value a key has had, oldest first, with validity intervals."""
        name = self._agent(agent)
        wanted = normalize_key(key)
        pool = self.workspace.fact_history(name) + self.facts(agent=name)
        values = [f for f in pool if f.key and normalize_key(f.key) == wanted]
        return sorted(values, key=lambda f: f.valid_from or f.created_at)

    def load_all(self, *, agent: str | None = None, query: str | None = None) -> list[MemoryItem]:
        """All current facts below ``load_all_below`` of them; above, the relevant ones (R6)."""
        name = self._agent(agent)
        facts = self.facts(agent=name)
        limit = self.settings.load_all_below
        if len(facts) < limit:
            return facts
        if not query:
            brain = self.workspace.brain_facts(name)
            return sorted(brain, key=lambda f: -f.importance)[:limit]
        result = self.recall(query, agent=name, k=limit, types=[ItemType.FACT])
        return [hit.item for hit in result.hits]

    def load_short_term(
        self, *, agent: str | None = None, session_id: str | None = None, limit: int = 20
    ) -> list[MemoryItem]:
        """The last ``limit`` turns of a session (the newest session when none is named)."""
        name = self._agent(agent)
        if session_id is None:
            latest = self.items(agent=name, types=[ItemType.MESSAGE], limit=1)
            if not latest or latest[0].provenance.session_id is None:
                return []
            session_id = latest[0].provenance.session_id
        return self.load_session(session_id, agent=name)[-limit:]

    def load_session(self, session_id: str, *, agent: str | None = None) -> list[MemoryItem]:
        """Every turn of one stored session, in order."""
        name = self._agent(agent)
        path = f"sessions/{session_id}.md"
        if path not in {f.path for f in self.workspace.list_sources(name)}:
            return []
        return list(self.workspace.parse_source(name, path).items)

    def load_long_term(
        self, *, agent: str | None = None, query: str | None = None, k: int | None = None
    ) -> list[MemoryItem]:
        """Static Brain facts plus the top-K relevant long-term items for ``query`` (R4)."""
        name = self._agent(agent)
        static = self.workspace.brain_facts(name)
        if not query:
            return static
        seen = {f.id for f in static}
        result = self.recall(
            query,
            agent=name,
            k=k or self.settings.long_term_top_k,
            types=[ItemType.FACT, ItemType.NOTE, ItemType.SUMMARY, ItemType.SEMANTIC],
        )
        return static + [hit.item for hit in result.hits if hit.item.id not in seen]

    def format_for_prompt(self, *, agent: str | None = None, query: str | None = None) -> str:
        """The ``<memory>`` block (I6) and, for a query, the ``LONG_TERM_MEMORY`` block (R4).

        Returns ``""`` when there is nothing to show.
        """
        name = self._agent(agent)
        brain = self.workspace.brain_facts(name)
        parts = [render_memory_block(brain)]
        if query:
            relevant = [i for i in self.load_long_term(agent=name, query=query) if i not in brain]
            parts.append(render_long_term_block(relevant, []))
        return "\n\n".join(part for part in parts if part)

    def brain(self, *, agent: str | None = None) -> str:
        """The Brain as the agent sees it at wake-up."""
        name = self._agent(agent)
        return render_brain(name, self.workspace.brain_facts(name))

    def identity(self, *, agent: str | None = None) -> str:
        return self.workspace.read_identity(self._agent(agent))

    def active_context(self, *, agent: str | None = None) -> str:
        return self.workspace.read_active_context(self._agent(agent))

    def audit(self, *, agent: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        return self.audit_log.read(agent, limit)

    def stats(self) -> dict[str, Any]:
        return self.index.stats()

    # ----------------------------------------------------------------- internals
    def _agent(self, agent: str | None) -> str:
        name = agent or self.settings.default_agent
        self.workspace.require_agent(name)
        return name

    def _fresh(self, agent: str) -> None:
        """Sync ``agent`` unless it was synced moments ago by this process."""
        now = self.clock.now()
        last = self._synced_at.get(agent)
        if last is not None and 0 <= (now - last).total_seconds() < self.settings.sync_interval:
            return
        with self._lock:
            self._indexer.sync_agent(agent)
        self._synced_at[agent] = now

    def _after_write(self, agent: str, paths: Sequence[str]) -> None:
        if self._deferred is not None and agent in self._deferred:
            self._deferred[agent].extend(paths)
            return
        self._indexer.sync_agent(agent, paths=paths)

    @contextmanager
    def _deferring(self, agent: str) -> Iterator[list[str]]:
        self._deferred = {agent: []}
        try:
            yield self._deferred[agent]
        finally:
            self._deferred = None

    def _keep_brain_in_budget(self, agent: str) -> None:
        """Move the least-used facts to ``brain_archive.md`` when the Brain is over its limit."""
        facts = self.workspace.brain_facts(agent)
        if self.tokens.count(render_brain(agent, facts)) <= self.settings.brain_max:
            return
        usage = {it.id: it for it in self.index.get_items([f.id for f in facts])}
        with_usage = [usage.get(f.id, f) for f in facts]
        ids = choose_archive(
            with_usage,
            budget=self.settings.brain_budget,
            count=lambda text: self.tokens.count(text),
        )
        if ids:
            self._writer.memory_write(agent, "Brain", ArchiveFacts(tuple(ids)), SYSTEM)


def _new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


def _when(
    value: str | datetime | None,
    now: datetime,
    parse: Callable[[str, datetime], datetime],
) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return parse(value, now)


__all__ = ["ImportReport", "Memory"]
