"""What every part of :class:`kronika.memory.Memory` is built over: the
:class:`MemoryContext` — the stores and settings, the reading context, the write lock,
the single write path, and keeping the index in step with the Markdown.

Each part (:mod:`.facts`, :mod:`.reads`, :mod:`.proposals`, …) takes the context in its
constructor and holds it; none inherits from it. A view of the memory for one reader
(:meth:`Memory.as_reader`) is the same context with another :attr:`default_reader`:
the stores, the lock and what this process remembers of the index are shared.
"""

from __future__ import annotations

import copy
import logging
import re
import secrets
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from kronika.core import checks
from kronika.core.model import Reader, Scope
from kronika.core.visibility import Audience, audience
from kronika.engine.changes import Change
from kronika.engine.derivation import mark_current
from kronika.engine.held_audit import HeldAudit
from kronika.engine.indexer import PENDING_FILE, Indexer
from kronika.engine.proposals import ProposalBook
from kronika.engine.recall import Recaller, RecallSettings
from kronika.engine.recall_log import RecallRecorder
from kronika.engine.undone import auditing_undone
from kronika.engine.write import USER, MemoryWriter, WriteReceipt
from kronika.errors import (
    CorruptIndexError,
    InvalidAgentName,
    InvalidInput,
    PermissionDenied,
    UnknownAgent,
)
from kronika.ports import (
    AuditLog,
    Clock,
    Embedder,
    ItemIndex,
    LinkStore,
    Reranker,
    TokenCounter,
    WriteLock,
)
from kronika.settings import Settings
from kronika.stores.durable import GroupCommit
from kronika.stores.lock import WorkspaceLock
from kronika.stores.markdown.layout import validate_agent_name
from kronika.stores.markdown.links import MarkdownLinks
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


log = logging.getLogger("kronika.recall")


@dataclass(slots=True)
class _Shared:
    """What a memory and every view of it share besides the stores."""

    synced_at: dict[str, datetime] = field(default_factory=dict)
    """When this process last synced each agent (see :meth:`MemoryContext.fresh`)."""
    notes: list[str] = field(default_factory=list)
    healed: bool = False
    deferred: dict[str, list[str]] | None = None
    """While a batch write runs: the paths written, indexed once at its end."""
    forget_state: threading.local = field(default_factory=threading.local)
    """Per thread: how deep in forgets it is, and the rewrite due after them."""


class MemoryContext:
    """The stores, settings and reading context the parts of a :class:`Memory` share."""

    default_reader: Reader | None = None
    """The reading context of reads and writes that are given none; ``None`` reads
    unrestricted, as the workspace's owner."""

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
        if lock is None:  # a lock given is told where to report a batch put back
            lock = WorkspaceLock(settings.home / ".kronika.lock")
            lock.on_undone(auditing_undone(audit, clock))
        self.lock: WriteLock = lock
        self.link_store: LinkStore = links or MarkdownLinks(workspace)
        self.commits = GroupCommit()  # turns reach the disk after the lock is released
        self.shared = _Shared()
        self.indexer = Indexer(
            workspace=workspace,
            index=index,
            embedder=embedder,
            embedding=settings.embedding,
            pending=settings.home / PENDING_FILE,
            from_record=lock.from_record,
        )
        self.proposal_book = ProposalBook(workspace=workspace, audit=audit, clock=clock)
        self.held_audit = HeldAudit(audit)  # a batch's entries appended together
        self.writer = MemoryWriter(
            workspace=workspace,
            audit=self.held_audit,
            settings=settings,
            clock=clock,
            on_written=self.after_write,
            on_proposed=self.proposal_book.record,
            on_facts=self._catch_up_facts,
        )
        self._recall = RecallSettings.of(settings.recall, settings.reranker, settings.embedder)
        if settings.recall.decay_base > 0:
            log.warning(
                "the decay_base setting is deprecated: recency now halves every %.3g days "
                "(ln 2 / decay_base); set recency_half_life instead",
                self._recall.weights.half_life / 86_400.0,
            )
        self.recaller = Recaller(
            index=index,
            embedder=embedder,
            tokens=tokens,
            clock=clock,
            settings=self._recall,
            reranker=reranker,
        )
        self.recalls = RecallRecorder(index.recall_log(), settings.recall, secrets=settings.secrets)

    def _catch_up_facts(self, agent: str) -> None:
        """Before a change moves facts: index the fact files changed since they were
        indexed (hand edits). Not inside a batch: it read them as it began, and its own
        writes are indexed once it is whole (a kill puts them back, never indexed)."""
        if self.shared.deferred is None:
            self.healing(lambda: self.indexer.catch_up_facts(agent))

    def seen_by(self, reader: Reader) -> MemoryContext:
        """This context with ``reader`` as its default reader; everything else shared."""
        view = copy.copy(self)
        view.default_reader = reader
        return view

    def close(self) -> None:
        self.recalls.close()
        self.index.close()
        self.lock.close()
        self.workspace.close()

    def memory_write(
        self, target_agent: str, section: str, change: Change, source_agent: str = USER
    ) -> WriteReceipt:
        """The single write path (SPEC C5): permissions, autonomy, audit, then re-index."""
        with self.lock:
            return self.writer.memory_write(target_agent, section, change, source_agent)

    # ----------------------------------------------------------------- damage
    @property
    def notes(self) -> list[str]:
        """Damage this memory met and what it did about it (a damaged file read around,
        a copy kept, the index rebuilt, a torn audit line skipped), oldest first.

        Never raised: the agent goes on (SPEC S4); interfaces show these to the user.
        """
        found = [*self.shared.notes, *self.workspace.notes, *getattr(self.audit_log, "notes", ())]
        return list(dict.fromkeys(found))

    def report_damage(self, text: str) -> None:
        """Add ``text`` to :attr:`notes` (damage found by whoever built this memory)."""
        self.shared.notes.append(text)

    def heal_index(self, reason: str = "") -> str:
        """Move the damaged index aside, rebuild it from the Markdown, say so in
        :attr:`notes`; returns that note. The index is derived: nothing is lost but
        the embedding cache and access statistics."""
        with self.lock:
            note = self.replace_index(reason)
            self.indexer.rebuild()
        self.shared.synced_at.clear()
        self.shared.healed = True
        return note

    def replace_index(self, reason: str) -> str:
        """Move the damaged index aside for an empty one, and say so in :attr:`notes`."""
        aside = self.index.recreate()
        mark_current(self.index)  # empty, and filled right away by this reading
        why = f" ({reason})" if reason else ""
        kept = f"; the damaged file was kept at {aside}" if aside else ""
        note = f"the index was damaged{why} and was rebuilt from the Markdown{kept}"
        self.shared.notes.append(note)
        return note

    def healing(self, run: Callable[[], T]) -> T:
        """``run()``; if it meets a damaged index, heal it once and run again."""
        try:
            return run()
        except CorruptIndexError as exc:
            if self.shared.healed:  # healed once already: a second failure is not the file's
                raise
            self.heal_index(str(exc.__cause__ or exc))
            return run()

    # ----------------------------------------------------------------- agents
    def agents(self) -> list[str]:
        self.refresh()
        return self.workspace.agents()

    def agent(self, agent: str | None) -> str:
        """``agent`` (the default agent when ``None``), which must exist."""
        name = agent or self.settings.default_agent
        if not isinstance(name, str):
            validate_agent_name(name)  # InvalidAgentName, not a TypeError from inside
        self.refresh()
        self.workspace.require_agent(name)
        return name

    def agent_to_write(self, agent: str | None) -> str:
        """:meth:`agent` for a write, which checks it again holding the lock: the
        store of record is not asked first when the folder has the agent (the lock
        brings the folder up to date before the write)."""
        name = agent or self.settings.default_agent
        if not isinstance(name, str):
            validate_agent_name(name)
        try:
            self.workspace.require_agent(name)
        except UnknownAgent:
            return self.agent(name)
        return name

    def agents_or_all(self, agent: str | None) -> list[str]:
        return [self.agent(agent)] if agent else self.agents()

    def create_agent(self, agent: str) -> None:
        """Create ``agent``'s folder with empty memory files (no-op when it exists).

        :class:`InvalidAgentName` when another agent's name differs from it only in
        case: on macOS and Windows the two would share one folder.
        """
        if not isinstance(agent, str):
            validate_agent_name(agent)
        twin = [a for a in self.agents() if a != agent and a.casefold() == agent.casefold()]
        if twin:
            raise InvalidAgentName(
                f"agent {agent!r} differs from the agent {twin[0]!r} only in case; on a file"
                " system that ignores case (macOS, Windows) they would share one folder"
            )
        if not self.workspace.has_agent(agent):
            with self.lock:
                self.workspace.create_agent(agent)

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

    def reading(self, reader: Reader | None) -> Reader | None:
        """Who reads: ``reader``, else :attr:`default_reader`."""
        if reader is not None and not isinstance(reader, Reader):
            raise InvalidInput(f"reader must be a Reader, not {type(reader).__name__}")
        return reader if reader is not None else self.default_reader

    def check_tenant(self, agent: str, reader: Reader | None) -> None:
        """A reader of another tenant may not write into ``agent``'s memory."""
        if reader is not None and reader.tenant != self.workspace.tenant_of(agent):
            raise PermissionDenied(
                f"agent {agent!r} belongs to tenant {self.workspace.tenant_of(agent)!r},"
                f" not {reader.tenant!r}"
            )

    def audience(
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
        who = self.reading(reader)
        self.check_tenant(agent, who)
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

    # ------------------------------------------------------- index in step
    def refresh(self) -> None:
        """See what other workers of a shared store wrote (a no-op on one workspace)."""
        if self.lock.refresh():
            self.shared.synced_at.clear()

    def fresh(self, agent: str) -> None:
        """Sync ``agent`` unless it was synced moments ago by this process."""
        now = self.clock.now()
        last = self.shared.synced_at.get(agent)
        if last is not None and 0 <= (now - last).total_seconds() < self.settings.sync_interval:
            return
        with self.lock.for_agent(agent):  # in team mode, writers of other agents go on
            self.healing(lambda: self.indexer.sync_agent(agent))
        self.shared.synced_at[agent] = now

    def vectors_ready(self) -> None:
        """Embed what writes made without the model left waiting (:mod:`kronika.engine.indexer`),
        before stored vectors are compared with a query."""
        if self.indexer.waiting():
            with self.lock:
                self.healing(self.indexer.fill_vectors)

    def after_write(self, agent: str, paths: Sequence[str]) -> None:
        deferred = self.shared.deferred
        if deferred is not None and agent in deferred:
            deferred[agent].extend(paths)
            return
        self.healing(lambda: self.indexer.sync_agent(agent, paths=paths, defer_vectors=True))

    @contextmanager
    def indexed_after_release(self, agent: str) -> Iterator[list[str]]:
        """Hold back the indexing of ``agent``'s writes made in the block (called holding
        the lock), then index them once the lock lets go of the store of record
        (:meth:`~kronika.ports.WriteLock.after_release`; at once without one): in team
        mode the next writer of the agent goes on meanwhile. Yields a list that gets why
        the index was not brought up to date, if it was not, by the time the lock is let
        go (the change is stored; ``kronika index sync`` catches up)."""
        notes: list[str] = []
        with self.deferring(agent) as written:
            yield notes
            paths = list(dict.fromkeys(written))
        if not paths:
            return
        stale = "the change was stored but the index was not updated"
        # said until it runs: a failed hand-over of the record's lock leaves it said
        notes.append(f"{stale} (the database went away as the write ended)")
        at_once = True

        def run() -> None:
            notes.pop()

            def sync() -> object:
                return self.indexer.sync_agent(agent, paths=paths, defer_vectors=True)

            try:  # healing takes the lock: only inside it (else the next read heals)
                self.healing(sync) if at_once else sync()
            except Exception as exc:  # noqa: BLE001 - the change is stored
                notes.append(
                    f"{stale} ({exc}); `kronika index sync` or `kronika index rebuild` catches up"
                )

        self.lock.after_release(run)
        at_once = False

    @contextmanager
    def deferring(self, agent: str) -> Iterator[list[str]]:
        """Hold back the indexing of ``agent``'s writes; yields the paths written."""
        self.shared.deferred = {agent: []}
        try:
            yield self.shared.deferred[agent]
        finally:
            self.shared.deferred = None


def _new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"
