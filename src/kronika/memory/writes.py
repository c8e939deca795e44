"""The write side of :class:`kronika.memory.Memory`: every change goes through the
single write path (SPEC C5)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kronika.core.dedup import Add, Refresh, Replace, place_fact
from kronika.core.entities import extract_entities
from kronika.core.model import (
    Layer,
    MemoryItem,
    Provenance,
    Reader,
    RetainKind,
    Scope,
    SessionRecord,
    Source,
    Tier,
    TurnRecord,
    fact_type,
    note_type,
)
from kronika.core.prompt import (
    choose_archive,
    render_brain,
)
from kronika.core.screening import screen_item
from kronika.core.sections import guess_section, parse_section
from kronika.core.visibility import Audience, audience, only_visible, visible
from kronika.engine.proposals import Proposal, fact_of, items_of
from kronika.engine.redacting import plan_forget, snapshot
from kronika.engine.sync import Progress, SyncReport
from kronika.engine.write import (
    SYSTEM,
    USER,
    AddFact,
    AppendNote,
    AppendTurn,
    ArchiveFacts,
    Change,
    ForgetItems,
    SupersedeFact,
    TouchFact,
    WriteLessons,
    WriteReceipt,
    WriteSession,
)
from kronika.errors import InvalidInput, NotFound
from kronika.memory import checks
from kronika.memory.base import (
    MAX_KEY_CHARS,
    MAX_VALUE_CHARS,
    MemoryBase,
    _clean,
    _new_id,
)
from kronika.stores.markdown.lessons import lesson_items
from kronika.stores.markdown.sessions import audience_fields, session_filename

if TYPE_CHECKING:  # the forget path (and its phrase rules) loads when something is forgotten
    from kronika.engine.forgetting import ForgetReceipt
    from kronika.engine.purge import PurgeReport


_FACT_FIELDS = frozenset(
    {"content", "value", "key", "section", "source", "multi", "importance", "entities"}
    | {"tags", "scope", "channel", "user", "team", "at"}
)
"""The fields a fact given to :meth:`MemoryWrites.remember_many` may have."""


@dataclass(frozen=True, slots=True)
class ImportReport:
    agent: str
    sessions: int
    turns: int
    sync: SyncReport


class MemoryWrites(MemoryBase):
    """Remember, note, forget, save turns, import sessions, approve or reject proposals."""

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
        name = self._agent(agent)
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
        with self._commits.deferring(), self._lock, self.workspace.steady_facts():
            item, now = self._stamped(item, at)
            return self._write_fact(name, item.section or "", item, now, source_agent)

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
        (:class:`InvalidInput` names the first bad one). Each then goes through the one
        write path as :meth:`remember` would, under one hold of the workspace lock,
        deciding duplicates against the facts stored and the batch's own earlier facts;
        the index is brought up to date once, at the end. An agent whose autonomy denies
        the write raises :class:`PermissionDenied` before anything is written.
        """
        name = self._agent(agent)
        prepared: list[tuple[MemoryItem, datetime | None]] = []
        for n, fact in enumerate(facts, 1):
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
        with self._commits.deferring(), self._lock, self.workspace.steady_facts():
            self._healing(lambda: self._presync(name))
            with self._deferring(name) as paths:
                try:
                    with self.workspace.holding_brain(name):  # one Brain write at the end
                        for item, at in prepared:
                            item, now = self._stamped(item, at)
                            section = item.section or ""
                            receipts.append(
                                self._write_fact(
                                    name, section, item, now, source_agent, synced=True
                                )
                            )
                finally:
                    written = list(paths)
            if written:
                try:
                    self._after_write(name, written)
                except Exception as exc:  # the facts are stored; `kronika sync` catches up
                    note = f"the facts were stored but the index was not updated ({exc})"
                    receipts[-1] = replace(receipts[-1], notes=(*receipts[-1].notes, note))
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
        owners = self._audience(name, scope, user, channel, team, reader)
        now = at or self.clock.now()
        try:
            src = Source(source)
            section = checks.optional_text(section, what="the section")
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
            type=fact_type(sect.value),
            layer=Layer.LONG_TERM,
            tier=Tier.LONG,
            created_at=now,
            updated_at=now,
            provenance=Provenance(path="brain.md"),
            tenant=self.workspace.tenant_of(name),
            scope=owners.scope,
            channel=owners.channel,
            user=owners.user,
            team=owners.team,
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
        now = self.clock.now()
        return replace(item, created_at=now, updated_at=now, valid_from=now), now

    def _audience(
        self,
        agent: str,
        scope: Scope | str | None,
        user: str | None,
        channel: str | None,
        team: str | None,
        reader: Reader | None,
    ) -> Audience:
        """Who a write is for: what it names, else its reader's user and channel
        (:func:`kronika.core.visibility.audience`). A reader of another tenant may not
        write here."""
        who = self._reader(reader)
        self._check_tenant(agent, who)
        user, channel, team = (
            checks.optional_text(value, what=what)
            for value, what in ((user, "the user"), (channel, "the channel"), (team, "the team"))
        )
        if who is not None:
            user = user if user is not None else who.user
            if channel is None and scope in (Scope.CHANNEL, Scope.CHANNEL.value, None):
                channel = who.channel
            if team is None and scope in (Scope.TEAM, Scope.TEAM.value) and len(who.teams) == 1:
                team = who.teams[0]
        try:
            return audience(scope, user=user, channel=channel, team=team)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from exc

    def _presync(self, agent: str) -> SyncReport:
        """Pick up hand edits of the Brain and the archive before a fact is placed."""
        return self._indexer.sync_agent(
            agent, paths=["brain.md", "brain_archive.md"], defer_vectors=True
        )

    def _write_fact(
        self,
        agent: str,
        section: str,
        item: MemoryItem,
        now: datetime,
        source_agent: str,
        *,
        synced: bool = False,
    ) -> WriteReceipt:
        if not synced:
            self._presync(agent)
        # screened before the duplicate check, so a redacted fact said twice is one fact
        item = screen_item(item, self.settings.secrets)
        change = self._fact_change(agent, item, now)
        receipt = self._writer.memory_write(agent, section, change, source_agent)
        if receipt.outcome == "applied":
            try:
                self._keep_brain_in_budget(agent)
            except Exception as exc:  # the fact is stored; trimming the Brain can wait
                note = f"the Brain was not trimmed to its budget: {exc}"
                receipt = replace(receipt, notes=(*receipt.notes, note))
        return receipt

    def _fact_change(self, agent: str, item: MemoryItem, now: datetime) -> Change:
        """Which change remembering ``item`` makes (the rules of :mod:`kronika.core.dedup`)."""
        owners = Audience.of(item)  # one audience's facts never replace another's
        placed = place_fact(
            item,
            [f for f in self.workspace.brain_facts(agent) if Audience.of(f) == owners],
            [
                f
                for f in self.workspace.archived_facts_like(agent, item)
                if Audience.of(f) == owners
            ],
            near=self.settings.near_duplicate_similarity,
        )
        match placed:
            case Refresh(fact):
                return TouchFact(replace(fact, updated_at=now))
            case Replace(old, new):
                return SupersedeFact(old.id, new)
            case Add(new):
                return AddFact(new)

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
        kind: RetainKind | str | None = None,
        confidence: float | None = None,
        scope: Scope | str | None = None,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
        tags: Sequence[str] = (),
    ) -> WriteReceipt:
        """Retain a note in today's daily log (``memory/YYYY-MM-DD.md``, ``## Retain``),
        for the audience :meth:`remember` would give it.

        ``kind`` types it (SPEC M6): ``W`` world (semantic memory), ``B`` experience
        (first person), ``O`` opinion — with ``confidence`` from 0 to 1 —, ``S``
        observation. ``@Name`` mentions in the text are its entities. ``tags`` are kept
        with the note (consolidation tags a world note ``session:<id>``, the conversation
        it was learned in).
        """
        clean = _clean(text, what="the note", limit=MAX_VALUE_CHARS)
        at = checks.moment(at, what="at")
        retain = checks.retain_kind(kind)
        if confidence is not None:
            if retain is not RetainKind.OPINION:
                raise InvalidInput("a confidence belongs to an opinion: give kind O with it")
            confidence = checks.fraction(confidence, what="the confidence")
        name = self._agent(agent)
        owners = self._audience(name, scope, user, channel, team, reader)
        now = at or self.clock.now()
        item = MemoryItem(
            id=_new_id("n"),
            agent=name,
            content=clean,
            type=note_type(retain),
            layer=Layer.LONG_TERM,
            tier=Tier.MID,
            created_at=now,
            updated_at=now,
            provenance=Provenance(path=f"memory/{now.date().isoformat()}.md"),
            tenant=self.workspace.tenant_of(name),
            scope=owners.scope,
            user=owners.user,
            channel=owners.channel,
            team=owners.team,
            section="Retain",
            importance=self.settings.importance_auto,
            entities=extract_entities(clean),
            kind=retain,
            confidence=confidence,
            tags=tuple(checks.texts(tags, what="tags")),
        )
        with self._lock:
            return self._writer.memory_write(name, "Retain", AppendNote(item), source_agent)

    def forget(
        self,
        item_id: str | None = None,
        *,
        key: str | None = None,
        value: str | None = None,
        topic: str | None = None,
        agent: str | None = None,
        source_agent: str = USER,
        reader: Reader | None = None,
    ) -> ForgetReceipt:
        """Forget an item by id, every value of a fact key, one value (``key`` and
        ``value``, or ``value`` alone) or what a spoken ``topic`` names, and redact its
        text everywhere else it is written; see :mod:`kronika.engine.forgetting`.

        Returns a :class:`~kronika.engine.forgetting.ForgetReceipt` listing every place
        touched (``outcome="proposed"`` when the agent's autonomy makes it a proposal).
        """
        from kronika.engine.forgetting import find_items

        item_id, key, value, topic = (
            checks.optional_text(text, what=what)
            for text, what in ((item_id, "the item id"), (key, "the key"))
            + ((value, "the value"), (topic, "the topic"))
        )
        name = self._agent(agent)
        with self._lock:
            self._indexer.sync_agent(name)
            items = find_items(
                self.workspace,
                self.index,
                name,
                item_id=item_id,
                key=key,
                value=value,
                topic=topic,
            )
            who = self._reader(reader)
            if who is not None:  # a reader forgets only what they may see
                items = only_visible(items, who)
                if not items:
                    raise NotFound("nothing to forget that this reader may see")
            section = items[0].section or "" if len(items) == 1 else ""
            return self._forget_items(name, items, section, source_agent)

    def _forget_items(
        self, name: str, items: Sequence[MemoryItem], section: str, source_agent: str
    ) -> ForgetReceipt:
        """Forget ``items`` of agent ``name`` and redact their text everywhere (the one
        forget path: :meth:`forget`, and the purge of :mod:`kronika.engine.purge`)."""
        from kronika.engine.forgetting import ForgetReceipt, forgotten_phrases

        with self._lock:
            phrases = forgotten_phrases(self.workspace, name, items)
            plan = plan_forget(self.workspace, self.audit_log, name, items, phrases)
            touched = [e.path for e in plan.edits if e.place.action != "removed"]
            before = snapshot(self.workspace, name, touched)
            ids = [it.id for it in items]
            indexed = {it.id for it in self.index.get_items(ids)}
            change = ForgetItems(tuple(items), tuple(phrases))
            written = self._writer.memory_write(name, section, change, source_agent)
            if written.outcome != "applied":
                return ForgetReceipt(
                    written.outcome,
                    name,
                    tuple(items),
                    plan.places,
                    tuple(phrases),
                    proposal=written.proposal,
                )
            after = snapshot(self.workspace, name, touched)
            left = {it.id for it in self.index.get_items(ids)}
            self.link_store.remove_links(name, set(ids) - left)
        rewritten = sum(1 for i, text in after.items() if before.get(i) != text)
        gone = (indexed - left) | (set(before) - set(after))  # a rewritten id counts too
        return ForgetReceipt(
            "applied",
            name,
            tuple(items),
            plan.places,
            tuple(phrases),
            index_removed=len(gone),
            index_rewritten=rewritten,
            audit_redacted=plan.audit_entries,
        )

    def purge(
        self,
        *,
        agent: str | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> PurgeReport:
        """Forget what the storage policies no longer allow (expired, never to be stored,
        in too long a tier), every agent's unless ``agent``; see :mod:`kronika.engine.purge`."""
        from kronika.engine.purge import find_purgeable, purge

        agents = [self._agent(agent)] if agent is not None else self.agents()
        with self._lock:
            for name in agents:
                self._indexer.sync_agent(name)
            now = self.clock.now()
            policies = self.settings.storage_policies
            checked, found = find_purgeable(self.index, agents, policies, now)
            return purge(
                checked,
                found,
                lambda name, items: self._forget_items(name, items, "purge", SYSTEM),
                dry_run=dry_run,
                progress=progress,
            )

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
        scope: Scope | str | None = None,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
    ) -> str:
        """Append one turn to ``sessions/<session_id>.md`` (auto-save, SPEC L4); returns its id.

        The turn that starts a session records who it is for (as :meth:`remember`) in
        the file's header, and every turn of the session is for them; a later turn
        naming another audience is refused.
        """
        session_id = checks.text(session_id, what="the session id")
        text = _clean(content, what="the turn", limit=MAX_VALUE_CHARS * 5)
        who = _clean(speaker, what="the speaker", limit=100)
        at = checks.moment(at, what="at")
        name = self._agent(agent)
        owners = self._audience(name, scope, user, channel, team, reader)
        now = at or self.clock.now()
        # the turn and its audit line are synced after the lock is released, together
        # with those of other threads saving turns meanwhile (group commit)
        with self._commits.deferring(), self._lock:
            try:
                return self._append_turn(
                    name, session_id, who, text, now, turn_id, owners, source_agent
                )
            finally:
                self._indexer.forget_tail(name, session_filename(session_id))

    def _append_turn(
        self,
        name: str,
        session_id: str,
        who: str,
        text: str,
        now: datetime,
        turn_id: str | None,
        owners: Audience,
        source_agent: str,
    ) -> str:
        """:meth:`save_turn` under the lock; the index's tail of the session, read here,
        is kept for the sync of the turn (read once)."""
        count, last = self._turns_in(name, session_id)
        if count and last is not None and Audience.of(last) != owners:
            raise InvalidInput(
                f"session {session_id!r} is for {Audience.of(last)}; a turn for {owners}"
                " belongs in another session"
            )
        if turn_id is None:
            turn_id = f"{session_id}_{count + 1}"
        turn = TurnRecord(turn_id=turn_id, speaker=who, content=text, at=now)
        change = AppendTurn(
            session_id=session_id,
            turn=turn,
            started_at=now,
            header=audience_fields(owners),
        )
        self._writer.memory_write(name, "sessions", change, source_agent)
        return turn_id

    def _turns_in(self, agent: str, session_id: str) -> tuple[int, MemoryItem | None]:
        """How many turns the session's file holds — the index's count while it matches
        the file's size and modification time (no parse), else the file's own — and the
        last turn the index holds of it."""
        path = session_filename(session_id)
        try:
            stat = (self.workspace.agent_dir(agent) / path).stat()
        except FileNotFoundError:
            return 0, None
        tail = self._indexer.session_tail(agent, path)
        last = tail.items[-1] if tail is not None and tail.items else None
        if tail is not None and (tail.state.mtime_ns, tail.state.size) == (
            stat.st_mtime_ns,
            stat.st_size,
        ):
            return tail.count, last
        return len(self.workspace.parse_source(agent, path).items), last

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
        # each file is whole on disk before it is renamed into place; the folders and
        # the audit lines are synced once, when the import ends (group commit)
        with self._commits.deferring(), self._lock, self._deferring(agent) as paths:
            for session in sessions:
                self._writer.memory_write(agent, "sessions", WriteSession(session), source_agent)
                count += 1
                turns += len(session.turns)
            report = self._indexer.sync_agent(agent, paths=list(paths), progress=progress)
        return ImportReport(agent=agent, sessions=count, turns=turns, sync=report)

    # ----------------------------------------------------------------- proposals
    def proposals(
        self, agent: str | None = None, *, reader: Reader | None = None
    ) -> list[Proposal]:
        """Changes waiting for the person's approval; every agent's when ``agent`` is None.
        A reader sees those whose every item they may see (none that only keep books)."""
        found = [p for name in self._agents_or_all(agent) for p in self._proposals.pending(name)]
        who = self._reader(reader)
        if who is None:
            return found
        return [
            p
            for p in found
            if (its := self._proposed_items(p)) and all(visible(i, who) for i in its)
        ]

    def _proposed_items(self, proposal: Proposal) -> tuple[MemoryItem, ...]:
        """What ``proposal`` would store: its items, or the lessons it would write as
        the items they become (so a lesson's own audience sees its proposal)."""
        if isinstance(proposal.change, WriteLessons):
            tenant = self.workspace.tenant_of(proposal.agent)
            return tuple(lesson_items(proposal.change.lessons, {}, tenant=tenant))
        return items_of(proposal.change)

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
        """Drop a waiting proposal (audited as ``reject``); returns it, marked rejected."""
        with self._lock:
            found = self._proposals.find(self._agents_or_all(agent), proposal_id)
            self._proposals.settle(found, "reject")
        return replace(found, status="rejected")

    def _keep_brain_in_budget(self, agent: str) -> None:
        """Move the least-used facts to ``brain_archive.md`` when the Brain is over its limit."""
        facts = self.workspace.brain_facts(agent)
        text = render_brain(agent, facts)
        # a token is at least one byte (byte-pair encodings), so a Brain of no more
        # bytes than the limit fits without loading the tokenizer to count it
        if len(text.encode("utf-8")) <= self.settings.brain_max:
            return
        if self.tokens.count(text) <= self.settings.brain_max:
            return
        usage = {it.id: it for it in self.index.get_items([f.id for f in facts])}
        with_usage = [usage.get(f.id, f) for f in facts]
        ids = choose_archive(
            with_usage,
            budget=self.settings.brain_budget,
            count=lambda text: self.tokens.count(text),
            now=self.clock.now(),
            half_life_days=self.settings.decay_half_life_days,
        )
        if ids:
            self._writer.memory_write(agent, "Brain", ArchiveFacts(tuple(ids)), SYSTEM)
