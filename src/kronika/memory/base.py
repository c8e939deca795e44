"""What both sides of :class:`kronika.memory.Memory` share: its parts, the lock, and
keeping the index in step with the Markdown."""

from __future__ import annotations

import copy
import logging
import re
import secrets
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any, Self, TypeVar

from kronika.core.dedup import same_text
from kronika.core.model import MemoryItem, Reader, RecallFilter, Scope
from kronika.core.policies import StoragePolicies
from kronika.core.scoring import ScoreWeights
from kronika.core.visibility import Audience, audience, only_visible
from kronika.engine.derivation import mark_current
from kronika.engine.proposals import ProposalBook
from kronika.engine.recall import Recaller, RecallSettings
from kronika.engine.recall_log import RecallRecorder
from kronika.engine.sync import PENDING_FILE, Indexer, Progress, SyncReport
from kronika.engine.write import MemoryWriter
from kronika.errors import CorruptIndexError, InvalidAgentName, InvalidInput, PermissionDenied
from kronika.memory import checks
from kronika.ports import (
    AuditEntry,
    AuditLog,
    Clock,
    Embedder,
    ItemIndex,
    LinkStore,
    Reranker,
    TokenCounter,
    WriteLock,
    acting,
)
from kronika.settings import Settings, answer_floor, relevance_floor
from kronika.stores.durable import GroupCommit
from kronika.stores.lock import WorkspaceLock
from kronika.stores.markdown.links import MarkdownLinks
from kronika.stores.markdown.sessions import session_filename
from kronika.stores.markdown.workspace import MarkdownWorkspace

MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 20_000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
T = TypeVar("T")


def _clean(text: object, *, what: str, limit: int) -> str:
    cleaned = _CONTROL.sub("", checks.text(text, what=what)).strip()
    if not cleaned:
        raise InvalidInput(f"{what} is empty")
    if len(cleaned) > limit:
        raise InvalidInput(f"{what} is {len(cleaned)} characters long; the limit is {limit}")
    return cleaned


def _same_text(a: str, b: str) -> bool:
    return same_text(a, b)


log = logging.getLogger("kronika.recall")


class MemoryBase:
    """The parts a :class:`Memory` is built from, its lifecycle and its internal helpers."""

    default_reader: Reader | None = None
    """The reading context of reads and writes that are given none (see :meth:`as_reader`);
    ``None`` reads unrestricted, as the workspace's owner."""

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
        lock: WriteLock | None = None,
        links: LinkStore | None = None,
    ) -> None:
        self.settings = settings
        self.workspace = workspace
        self.index = index
        self.embedder = embedder
        self.tokens = tokens
        self.clock = clock
        self.audit_log = audit
        self._lock: WriteLock = lock or WorkspaceLock(settings.home / ".kronika.lock")
        self.link_store: LinkStore = links or MarkdownLinks(workspace)
        self._commits = GroupCommit()  # turns reach the disk after the lock is released
        self._indexer = Indexer(
            workspace=workspace,
            index=index,
            embedder=embedder,
            embed_batch=settings.embed_batch,
            context_words=settings.embed_context_words,
            pending=settings.home / PENDING_FILE,
        )
        self._proposals = ProposalBook(workspace=workspace, audit=audit, clock=clock)
        self._writer = MemoryWriter(
            workspace=workspace,
            audit=audit,
            settings=settings,
            clock=clock,
            on_written=self._after_write,
            on_proposed=self._proposals.record,
            on_facts=lambda agent: self._healing(lambda: self._indexer.catch_up_facts(agent)),
        )
        if settings.decay_base > 0:
            log.warning(
                "the decay_base setting is deprecated: recency now halves every %.3g days "
                "(ln 2 / decay_base); set recency_half_life instead",
                recall_settings(settings).weights.half_life / 86_400.0,
            )
        self._recaller = Recaller(
            index=index,
            embedder=embedder,
            tokens=tokens,
            clock=clock,
            settings=recall_settings(settings),
            reranker=reranker,
        )
        self.recalls = RecallRecorder(index.recall_log(), settings)
        self._deferred: dict[str, list[str]] | None = None
        self._synced_at: dict[str, datetime] = {}
        self._notes: list[str] = []
        self._healed = False
        self._forget_state = threading.local()  # see MemoryForgetting._outside_the_lock

    # ----------------------------------------------------------------- damage
    @property
    def notes(self) -> list[str]:
        """Damage this memory met and what it did about it (a damaged file read around,
        a copy kept, the index rebuilt, a torn audit line skipped), oldest first.

        Never raised: the agent goes on (SPEC S4); interfaces show these to the user.
        """
        found = [*self._notes, *self.workspace.notes, *getattr(self.audit_log, "notes", ())]
        return list(dict.fromkeys(found))

    @property
    def lock(self) -> WriteLock:
        """The workspace's write lock (re-entrant, shared with other processes): hold
        it while changing the workspace's files other than through this memory."""
        return self._lock

    def report_damage(self, text: str) -> None:
        """Add ``text`` to :attr:`notes` (damage found by whoever built this memory)."""
        self._notes.append(text)

    def heal_index(self, reason: str = "") -> str:
        """Move the damaged index aside, rebuild it from the Markdown, say so in
        :attr:`notes`; returns that note. The index is derived: nothing is lost but
        the embedding cache and access statistics."""
        with self._lock:
            note = self._replace_index(reason)
            self._indexer.rebuild()
        self._synced_at.clear()
        self._healed = True
        return note

    def _replace_index(self, reason: str) -> str:
        aside = self.index.recreate()
        mark_current(self.index)  # empty, and filled right away by this reading
        why = f" ({reason})" if reason else ""
        kept = f"; the damaged file was kept at {aside}" if aside else ""
        note = f"the index was damaged{why} and was rebuilt from the Markdown{kept}"
        self._notes.append(note)
        return note

    def _healing(self, run: Callable[[], T]) -> T:
        """``run()``; if it meets a damaged index, heal it once and run again."""
        try:
            return run()
        except CorruptIndexError as exc:
            if self._healed:  # healed once already: a second failure is not the file's
                raise
            self.heal_index(str(exc.__cause__ or exc))
            return run()

    # ----------------------------------------------------------------- lifecycle
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.recalls.close()
        self.index.close()
        self._lock.close()

    def agents(self) -> list[str]:
        self._refresh()
        return self.workspace.agents()

    def create_agent(self, agent: str) -> None:
        """Create ``agent``'s folder with empty memory files (no-op when it exists).

        :class:`InvalidAgentName` when another agent's name differs from it only in
        case: on macOS and Windows the two would share one folder.
        """
        twin = [a for a in self.agents() if a != agent and a.casefold() == str(agent).casefold()]
        if twin:
            raise InvalidAgentName(
                f"agent {agent!r} differs from the agent {twin[0]!r} only in case; on a file"
                " system that ignores case (macOS, Windows) they would share one folder"
            )
        if not self.workspace.has_agent(agent):
            with self._lock:
                self.workspace.create_agent(agent)

    def remove_agent(self, agent: str, *, source_agent: str = "user") -> SyncReport:
        """Delete ``agent``'s folder (its Brain, identity, sessions, logs, summaries) and
        drop its items from the index; the audit trail keeps a line saying so.

        Refused (:class:`InvalidInput`) for the workspace's default agent, and in team
        mode, where the folder is a working copy of the PostgreSQL record.
        """
        name = checks.text(agent, what="the agent")
        if self.settings.database_url:
            raise InvalidInput(
                "in team mode an agent's memory lives in PostgreSQL; removing it from one"
                " worker's working copy would not remove it"
            )
        if name == self.settings.default_agent:
            raise InvalidInput(
                f"agent {name!r} is the workspace's default agent (setting default_agent);"
                " choose another default first"
            )
        with self._lock:
            folder = self.workspace.require_agent(name)
            shutil.rmtree(folder)
            report = self._indexer.sync_all()
            self.audit_log.append(
                AuditEntry(
                    at=self.clock.now(),
                    action="remove_agent",
                    target_agent=name,
                    source_agent=source_agent,
                    section="agent",
                    item_id=None,
                    summary=f"removed agent {name} and its memory",
                    outcome="applied",
                    **acting(),
                )
            )
        self._synced_at.clear()
        return report

    def sync(
        self,
        agent: str | None = None,
        *,
        paths: Sequence[str] | None = None,
        progress: Progress | None = None,
    ) -> SyncReport:
        """Pick up changes made to the Markdown files (by hand or by another process);
        ``paths`` (of one ``agent``) are read again even if their size and time match."""
        with self._lock:
            if agent is None:
                report = self._healing(lambda: self._indexer.sync_all(progress=progress))
                report.texts_embedded += self._healing(self._indexer.fill_vectors)
                report.warnings.extend(self._notes)
                return report
            name = self._agent(agent)
            report = self._healing(
                lambda: self._indexer.sync_agent(name, paths=paths, progress=progress)
            )
            report.texts_embedded += self._healing(self._indexer.fill_vectors)
            report.warnings.extend(self._notes)
        self._synced_at[agent] = self.clock.now()
        return report

    def reindex(self, *, progress: Progress | None = None) -> SyncReport:
        """Throw the index away and rebuild it from the Markdown alone."""
        with self._lock:
            self.workspace.cleanup_temp()
            # A damaged file may still answer the pages a rebuild touches: look first,
            # and start on a fresh file rather than refill a broken one.
            problems = self.index.integrity_problems()
            if problems:
                self._replace_index(problems[0])
            try:
                report = self._indexer.rebuild(progress=progress)
            except CorruptIndexError as exc:
                self._replace_index(str(exc))
                report = self._indexer.rebuild(progress=progress)
            mark_current(self.index)  # built by this reading of the Markdown
        self._synced_at.clear()
        report.warnings.extend(self._notes)
        return report

    def load_session(
        self, session_id: str, *, agent: str | None = None, reader: Reader | None = None
    ) -> list[MemoryItem]:
        """Every turn of one stored session the reader may see, in order."""
        name = self._agent(agent)
        path = session_filename(checks.text(session_id, what="the session id"))
        if path not in {f.path for f in self.workspace.list_sources(name)}:
            return []
        return only_visible(self.workspace.parse_source(name, path).items, self._reader(reader))

    def _agents_or_all(self, agent: str | None) -> list[str]:
        return [self._agent(agent)] if agent else self.agents()

    # ------------------------------------------------------------ reading context
    def reader(
        self,
        *,
        user: str | None = None,
        channel: str | None = None,
        tenant: str | None = None,
        teams: Sequence[str] | None = None,
    ) -> Reader:
        """A reading context (docs/scopes.md): ``tenant`` defaults to the ``tenant``
        setting, ``teams`` to the teams ``[teams]`` of the config file lists ``user`` in."""
        user, channel, tenant = (
            checks.optional_text(value, what=what)
            for value, what in (
                (user, "the user"),
                (channel, "the channel"),
                (tenant, "the tenant"),
            )
        )
        chosen = (
            self.settings.teams_of(user) if teams is None else checks.texts(teams, what="teams")
        )
        return Reader(tenant or self.settings.tenant, user, channel, tuple(chosen))

    def as_reader(self, reader: Reader | None = None, **context: Any) -> Self:
        """This memory seen by one reader: every read and write of the returned view
        takes ``reader`` (or :meth:`reader` of ``context``) unless given its own. The
        view shares this memory's parts; close the original, not the view."""
        view = copy.copy(self)
        view.default_reader = reader if reader is not None else self.reader(**context)
        return view

    def follow_tenants(self) -> list[str]:
        """Read again the agents whose items the index holds under another tenant than
        the config now gives them (an agent moved to a tenant); returns their names."""
        moved = []
        for agent in self.agents():
            flt = RecallFilter(agents=(agent,), include_superseded=True)
            found = self.index.list_items(flt, limit=1)
            if found and found[0].tenant != self.workspace.tenant_of(agent):
                with self._lock:
                    for path in self.index.source_states(agent):
                        self.index.remove_source(agent, path)
                    self._healing(lambda a=agent: self._indexer.sync_agent(a))  # type: ignore[misc]
                moved.append(agent)
        return moved

    def use_storage_policies(self, storage: StoragePolicies) -> None:
        """Apply storage policies read anew (``kronika.toml`` was edited) to every write
        and purge from now on; a view made before (:meth:`as_reader`) keeps its own."""
        self.settings = replace(self.settings, storage=storage)
        self._writer.use_settings(self.settings)

    def _reader(self, reader: Reader | None) -> Reader | None:
        if reader is not None and not isinstance(reader, Reader):
            raise InvalidInput(f"reader must be a Reader, not {type(reader).__name__}")
        return reader if reader is not None else self.default_reader

    def _check_tenant(self, agent: str, reader: Reader | None) -> None:
        """A reader of another tenant may not write into ``agent``'s memory."""
        if reader is not None and reader.tenant != self.workspace.tenant_of(agent):
            raise PermissionDenied(
                f"agent {agent!r} belongs to tenant {self.workspace.tenant_of(agent)!r},"
                f" not {reader.tenant!r}"
            )

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
            # where it was said, whatever its scope: storage policies (no DMs in long-term
            # memory, never store #hr-private) look at it; who reads it is the scope's
            channel = channel if channel is not None else who.channel
            if team is None and scope in (Scope.TEAM, Scope.TEAM.value) and len(who.teams) == 1:
                team = who.teams[0]
        try:
            return audience(scope, user=user, channel=channel, team=team)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from exc

    # ----------------------------------------------------------------- internals
    def _agent(self, agent: str | None) -> str:
        name = agent or self.settings.default_agent
        self._refresh()
        self.workspace.require_agent(name)
        return name

    def _refresh(self) -> None:
        """See what other workers of a shared store wrote (a no-op on one workspace)."""
        if self._lock.refresh():
            self._synced_at.clear()

    def _fresh(self, agent: str) -> None:
        """Sync ``agent`` unless it was synced moments ago by this process."""
        now = self.clock.now()
        last = self._synced_at.get(agent)
        if last is not None and 0 <= (now - last).total_seconds() < self.settings.sync_interval:
            return
        with self._lock:
            self._healing(lambda: self._indexer.sync_agent(agent))
        self._synced_at[agent] = now

    def _vectors_ready(self) -> None:
        """Embed what writes made without the model left waiting (:mod:`kronika.engine.sync`),
        before stored vectors are compared with a query."""
        if self._indexer.waiting():
            with self._lock:
                self._healing(self._indexer.fill_vectors)

    def _after_write(self, agent: str, paths: Sequence[str]) -> None:
        if self._deferred is not None and agent in self._deferred:
            self._deferred[agent].extend(paths)
            return
        self._healing(lambda: self._indexer.sync_agent(agent, paths=paths, defer_vectors=True))

    @contextmanager
    def _deferring(self, agent: str) -> Iterator[list[str]]:
        self._deferred = {agent: []}
        try:
            yield self._deferred[agent]
        finally:
            self._deferred = None


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


def recall_settings(settings: Settings) -> RecallSettings:
    """What recall reads of ``settings`` (the weights of its score among them)."""
    weights = ScoreWeights.from_settings(
        settings.alpha,
        settings.beta,
        settings.gamma,
        settings.recency_half_life,
        settings.decay_base,
    )
    return RecallSettings(
        candidates=settings.recall_candidates,
        lexical_weight=settings.lexical_weight,
        fusion=settings.fusion,
        adaptive_shift=settings.adaptive_shift,
        skip_function_words=settings.skip_function_words,
        neighbour_weight=settings.neighbour_weight,
        neighbour_window=settings.neighbour_window,
        answer_focus=settings.answer_focus,
        speaker_focus=settings.speaker_focus,
        time_focus=settings.time_focus,
        when_focus=settings.when_focus,
        session_weight=settings.session_weight,
        hub_neighbours=settings.hub_neighbours,
        hub_scope=settings.hub_scope,
        fusion_z_ceiling=settings.fusion_z_ceiling,
        reranker_depth=settings.reranker_depth,
        reranker_weight=settings.reranker_weight,
        relevance_floor=relevance_floor(settings),
        answer_floor=answer_floor(settings),
        weights=weights,
    )
