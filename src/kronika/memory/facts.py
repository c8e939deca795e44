"""Facts in the Brain (SPEC M3): :meth:`~Facts.remember` and
:meth:`~Facts.remember_many` check what they are given and hand each fact to the
write path's one fact use case (:meth:`~kronika.engine.write.MemoryWriter.remember_fact`:
screened for secrets, placed against the stored facts by the rules of
:mod:`kronika.core.dedup`, written), after which the Brain is kept within its budget."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from kronika.core import checks
from kronika.core.entities import extract_entities
from kronika.core.model import Layer, MemoryItem, Provenance, Reader, Scope, Source, Tier, fact_type
from kronika.core.prompt import choose_archive, render_brain
from kronika.core.sections import guess_section, parse_section
from kronika.engine.changes import ArchiveFacts
from kronika.engine.indexer import SyncReport
from kronika.engine.write import SYSTEM, USER, WriteReceipt
from kronika.errors import InvalidInput
from kronika.memory.base import MAX_KEY_CHARS, MAX_VALUE_CHARS, MemoryContext, _clean, _new_id

_FACT_FIELDS = frozenset(
    {"content", "value", "key", "section", "source", "multi", "importance", "entities"}
    | {"tags", "scope", "channel", "user", "team", "at"}
)
"""The fields a fact given to :meth:`Facts.remember_many` may have."""


class Facts:
    """Remember facts: one, many, or learned automatically."""

    def __init__(self, ctx: MemoryContext) -> None:
        self._ctx = ctx

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
        scope: Scope | str | None = None,
        channel: str | None = None,
        source_agent: str = USER,
        at: datetime | None = None,
        user: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
    ) -> WriteReceipt:
        """Remember a fact in the Brain (SPEC M3).

        With a ``key``, a new value *supersedes* the current one (kept as history)
        unless ``multi`` is set; remembering an exact duplicate only refreshes its
        ``updated_at``. Only facts of the same audience are compared: another user's
        ``name`` is never superseded. Who the fact is for (``scope``, ``user``,
        ``channel``, ``team``; the reader's user and channel by default) is described in
        docs/scopes.md.
        """
        ctx = self._ctx
        name = ctx.agent_to_write(agent)
        item, at = self._fact_item(
            name,
            content,
            key=key,
            value=value,
            section=section,
            source=source,
            multi=multi,
            importance=importance,
            entities=entities,
            tags=tags,
            scope=scope,
            channel=channel,
            at=at,
            user=user,
            team=team,
            reader=reader,
        )
        # the Brain's folder and the audit line reach the disk together once the lock
        # is released (group commit); the Brain's bytes and a move's destination first
        with ctx.commits.deferring(), ctx.lock.for_agent(name), ctx.workspace.steady_facts():
            ctx.workspace.require_agent(name)  # removed by another worker meanwhile?
            item, now = self._stamped(item, at)
            # indexed once the store of record holds it (team mode: the next writer of
            # the agent goes on meanwhile), before this returns
            with ctx.indexed_after_release(name) as notes:
                receipt = self.write_fact(name, item.section or "", item, now, source_agent)
        return receipt.noted(notes)

    def remember_many(
        self,
        facts: Iterable[str | Mapping[str, Any]],
        *,
        agent: str | None = None,
        source: Source | str = Source.EXPLICIT,
        source_agent: str = USER,
        reader: Reader | None = None,
    ) -> list[WriteReceipt]:
        """Remember many facts in one go: a receipt per fact, in order.

        Each fact is a string (its content) or a mapping of :meth:`remember`'s fields
        (``content`` or ``value``, ``key``, ``section``, ``source``, ``multi``,
        ``importance``, ``entities``, ``tags``, ``scope``, ``channel``, ``user``,
        ``team``, ``at``). Every fact is checked before any is written
        (:class:`InvalidInput` names the first bad one). The batch then goes through the
        one write path under one hold of the workspace lock, each fact placed as
        :meth:`remember` would place it, against the facts stored and the batch's own
        earlier facts (the same duplicate and history rules); the Brain is rewritten
        once, kept within its budget once, and the index brought up to date once, at
        the end. An agent whose autonomy denies the write raises
        :class:`PermissionDenied` before anything is written.

        The batch is all or nothing (:meth:`~kronika.ports.WriteLock.batch`): a kill or
        an error part way leaves none of its facts, and once it returns all are stored.
        """
        ctx = self._ctx
        if isinstance(facts, str | bytes | Mapping):
            raise InvalidInput(
                "remember_many takes a list of facts (strings or mappings), not one"
                f" {type(facts).__name__}: remember() keeps a single fact"
            )
        if not isinstance(facts, Iterable):
            raise InvalidInput(
                "remember_many takes a list of facts (strings or mappings),"
                f" not {type(facts).__name__}"
            )
        name = ctx.agent_to_write(agent)
        prepared: list[tuple[MemoryItem, datetime | None]] = []
        for n, fact in enumerate(facts, 1):
            if not isinstance(fact, str | Mapping):
                raise InvalidInput(
                    f"fact {n}: a fact is a string or a mapping of its fields (content, key,"
                    f" …), not a {type(fact).__name__}"
                )
            fields: dict[str, Any] = {"content": fact} if isinstance(fact, str) else dict(fact)
            unknown = sorted(set(fields) - _FACT_FIELDS)
            if unknown:
                raise InvalidInput(f"fact {n}: unknown field(s) {', '.join(unknown)}")
            fields.setdefault("source", source)
            try:
                prepared.append(self._fact_item(name, reader=reader, **fields))
            except (InvalidInput, TypeError) as exc:
                raise InvalidInput(f"fact {n}: {exc}") from exc
        receipts: list[WriteReceipt] = []
        # one round of fsyncs for the batch; each fact file checked against its parse once
        with ctx.commits.deferring(), ctx.lock.for_agent(name), ctx.workspace.steady_facts():
            ctx.workspace.require_agent(name)  # removed by another worker meanwhile?
            ctx.healing(lambda: self._presync(name))
            # whole or not at all; one Brain write, one audit write at the end; indexed
            # once, when the store of record holds it
            with (
                ctx.indexed_after_release(name) as notes,
                ctx.lock.batch(),
                ctx.workspace.holding_brain(name),
                ctx.held_audit.holding() as unaudited,
            ):
                entries = []
                for item, at in prepared:
                    item, now = self._stamped(item, at)
                    entries.append((item.section or "", item, now))
                receipts = ctx.writer.remember_facts(name, entries, source_agent)
                if any(receipt.outcome == "applied" for receipt in receipts):
                    receipts[-1] = receipts[-1].noted(self._trimmed(name))
            if unaudited and receipts:
                receipts[-1] = receipts[-1].noted(unaudited)
        if receipts:  # the facts are stored; `kronika index sync` catches up
            receipts[-1] = receipts[-1].noted(notes)
        return receipts

    def _fact_item(
        self,
        name: str,
        content: str | None = None,
        *,
        key: str | None = None,
        value: str | None = None,
        section: str | None = None,
        source: Source | str = Source.EXPLICIT,
        multi: bool = False,
        importance: float | None = None,
        entities: Sequence[str] = (),
        tags: Sequence[str] = (),
        scope: Scope | str | None = None,
        channel: str | None = None,
        at: datetime | None = None,
        user: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
    ) -> tuple[MemoryItem, datetime | None]:
        """The fact :meth:`remember` would store (checked), and its given time."""
        ctx = self._ctx
        raw = value if value is not None else content
        if raw is None:
            raise InvalidInput("nothing to remember: give the content (and optionally a key)")
        text = _clean(raw, what="the value", limit=MAX_VALUE_CHARS)
        clean_key = _clean(key, what="the key", limit=MAX_KEY_CHARS) if key is not None else None
        if clean_key is not None:
            checks.fact_key(clean_key)
        importance = checks.fraction(importance, what="importance")
        at = checks.moment(at, what="at")
        entities = checks.texts(entities, what="entities")
        tags = checks.texts(tags, what="tags")
        owners = ctx.audience(name, scope, user, channel, team, reader)
        now = at or ctx.clock.now()
        try:
            src = Source(source)
            section = checks.optional_text(section, what="the section")
            sect = parse_section(section) if section else guess_section(clean_key, text)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from exc
        imp = importance
        if imp is None:
            explicit = src is Source.EXPLICIT
            imp = ctx.settings.importance_explicit if explicit else ctx.settings.importance_auto
        item = MemoryItem(
            id=_new_id("f"),
            agent=name,
            content=f"{clean_key}: {text}" if clean_key else text,
            type=fact_type(sect.value),
            layer=Layer.LONG_TERM,
            tier=Tier.LONG,
            created_at=now,
            updated_at=now,
            provenance=Provenance(path="brain.md"),
            tenant=ctx.workspace.tenant_of(name),
            **owners.fields(),
            key=clean_key,
            value=text,
            multi=bool(multi),
            source=src,
            section=sect.value,
            importance=imp,
            valid_from=now,
            entities=tuple(dict.fromkeys([*extract_entities(text), *entities])),
            tags=tuple(tags),
        )
        return item, at

    def _stamped(self, item: MemoryItem, at: datetime | None) -> tuple[MemoryItem, datetime]:
        """``item`` timed now unless its time was given; taken under the lock, so racing
        writers' times follow their order."""
        if at is not None:
            return item, at
        now = self._ctx.clock.now()
        return replace(item, created_at=now, updated_at=now, valid_from=now), now

    def _presync(self, agent: str) -> SyncReport:
        """Pick up hand edits of the fact files (and damage to them, keeping the facts
        it lost) before a fact is placed."""
        return self._ctx.indexer.catch_up_facts(agent, defer_vectors=True)

    def write_fact(
        self,
        agent: str,
        section: str,
        item: MemoryItem,
        now: datetime,
        source_agent: str,
        *,
        synced: bool = False,
    ) -> WriteReceipt:
        """Remember ``item`` through the write path's one fact use case
        (:meth:`~kronika.engine.write.MemoryWriter.remember_fact`: screened, placed
        against the stored facts, written), then keep the Brain within its budget (what
        :meth:`remember` and an approved proposal do); ``synced``: the fact files were
        read moments ago."""
        if not synced:
            self._presync(agent)
        receipt = self._ctx.writer.remember_fact(agent, section, item, now, source_agent)
        if receipt.outcome == "applied":
            receipt = receipt.noted(self._trimmed(agent))
        return receipt

    def _trimmed(self, agent: str) -> list[str]:
        """Keep the Brain within its budget; what went wrong, if anything (the facts are
        stored: trimming the Brain can wait)."""
        try:
            self._keep_brain_in_budget(agent)
        except Exception as exc:
            return [f"the Brain was not trimmed to its budget: {exc}"]
        return []

    def append_fact(
        self, key: str, value: str, *, agent: str | None = None, source_agent: str = USER
    ) -> WriteReceipt:
        """Store an automatically learned fact (``source=auto``) — the adapter call of SPEC I1."""
        return self.remember(
            key=key, value=value, agent=agent, source=Source.AUTO, source_agent=source_agent
        )

    def _keep_brain_in_budget(self, agent: str) -> None:
        """Move the least-used facts to ``brain_archive.md`` when the Brain is over its limit."""
        ctx = self._ctx
        facts = ctx.workspace.brain_facts(agent)
        text = render_brain(agent, facts)
        # a token is at least one byte (byte-pair encodings), so a Brain of no more
        # bytes than the limit fits without loading the tokenizer to count it
        if len(text.encode("utf-8")) <= ctx.settings.brain_max:
            return
        if ctx.tokens.count(text) <= ctx.settings.brain_max:
            return
        usage = {it.id: it for it in ctx.index.get_items([f.id for f in facts])}
        with_usage = [usage.get(f.id, f) for f in facts]
        ids = choose_archive(
            with_usage,
            budget=ctx.settings.brain_budget,
            count=lambda text: ctx.tokens.count(text),
            now=ctx.clock.now(),
            half_life_days=ctx.settings.decay_half_life_days,
        )
        if ids:
            ctx.writer.memory_write(agent, "Brain", ArchiveFacts(tuple(ids)), SYSTEM)
