""":class:`Memory`: a small object of everyday verbs over named parts.

Every part is a plain class built over one :class:`~kronika.memory.base.MemoryContext`
(the stores, the settings, the reading context, the write lock); none inherits from
another. The parts users call by name:

* ``memory.proposals`` — :class:`~kronika.memory.proposals.Proposals`
* ``memory.sessions`` — :class:`~kronika.memory.sessions.Sessions`
* ``memory.links`` — :class:`~kronika.memory.links.Links`
* ``memory.lessons`` — :class:`~kronika.memory.lessons.Lessons`
* ``memory.prompt`` — :class:`~kronika.memory.prompt.Prompt`
* ``memory.admin`` — :class:`~kronika.memory.admin.Admin`

The everyday verbs' code lives in parts of their own (facts, notes, sensory, reads,
forgetting, the batch of turns), reached through the verbs. Every verb of a named part
also has a flat name on :class:`Memory` (``memory.approve`` is ``memory.proposals.approve``): the
table at the end of the class, one :class:`~kronika.core.alias.Alias` a line.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from kronika.core.alias import Alias
from kronika.core.model import MemoryItem, Reader, Scope
from kronika.engine.changes import Change, ForgetItems
from kronika.engine.recall_log import RecallRecorder
from kronika.engine.write import USER, WriteReceipt
from kronika.memory.admin import Admin
from kronika.memory.base import MemoryContext
from kronika.memory.facts import Facts
from kronika.memory.forgetting import Forgetting
from kronika.memory.lessons import Lessons
from kronika.memory.links import Links
from kronika.memory.notes import Notes
from kronika.memory.prompt import Prompt
from kronika.memory.proposals import Proposals
from kronika.memory.reads import Reads
from kronika.memory.sensory import Sensory
from kronika.memory.sessions import Sessions
from kronika.memory.turn_batch import TurnBatch
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
from kronika.stores.markdown.workspace import MarkdownWorkspace

if TYPE_CHECKING:
    from kronika.core.visibility import Audience
    from kronika.engine.forgetting import ForgetReceipt


class Memory:
    """Long-term memory of the agents in one workspace.

    Build one with :func:`kronika.app.build_memory` (or inject the parts yourself)::

        with build_memory(load_settings("./.kronika")) as memory:
            memory.remember("prefiere TypeScript", key="preferencia")
            memory.recall("what language does he like?", k=5)
            memory.proposals.list()
    """

    proposals: Proposals
    """Changes waiting for the person's approval: ``list``, ``approve``, ``reject``."""
    sessions: Sessions
    """Conversations: ``save_turn``, ``load``, ``last_turns``, ``import_records``."""
    links: Links
    """Links between items: ``add``, ``list``."""
    lessons: Lessons
    """Lessons from outcomes: ``record_outcome``, ``for_task``, ``list``."""
    prompt: Prompt
    """What an agent reads: ``brain``, ``identity``, ``active_context``, ``blocks``,
    ``load_all``, ``load_long_term``."""
    admin: Admin
    """The workspace and its index: ``sync``, ``reindex``, ``heal_index``, ``stats``,
    ``build_vector_graph``, ``audit``, ``remove_agent``, ``follow_tenants``,
    ``use_storage_policies``, ``purge``, ``finish_forgets``, ``report_damage``,
    ``notes``."""

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
        self._assemble(
            MemoryContext(
                settings=settings,
                workspace=workspace,
                index=index,
                embedder=embedder,
                tokens=tokens,
                clock=clock,
                audit=audit,
                reranker=reranker,
                lock=lock,
                links=links,
            )
        )

    def _assemble(self, ctx: MemoryContext) -> None:
        """Build the parts over ``ctx`` (a new memory, or a view of one)."""
        self._ctx = ctx
        self._facts = Facts(ctx)
        self._notebook = Notes(ctx)
        self._sensory = Sensory(ctx)
        self._reads = Reads(ctx)
        self._forgetting = Forgetting(ctx)
        self.sessions = Sessions(ctx, self._reads)
        self._turn_batch = TurnBatch(ctx, self.sessions)
        self.proposals = Proposals(ctx, self._facts, self.sessions, self._forgetting)
        self.links = Links(ctx)
        self.lessons = Lessons(ctx, self)
        self.prompt = Prompt(ctx, self._reads)
        self.admin = Admin(ctx, self._forgetting)

    # ------------------------------------------------------------ what it is over
    @property
    def settings(self) -> Settings:
        return self._ctx.settings

    @property
    def workspace(self) -> MarkdownWorkspace:
        return self._ctx.workspace

    @property
    def index(self) -> ItemIndex:
        return self._ctx.index

    @property
    def embedder(self) -> Embedder:
        return self._ctx.embedder

    @property
    def tokens(self) -> TokenCounter:
        return self._ctx.tokens

    @property
    def clock(self) -> Clock:
        return self._ctx.clock

    @property
    def audit_log(self) -> AuditLog:
        return self._ctx.audit_log

    @property
    def link_store(self) -> LinkStore:
        return self._ctx.link_store

    @property
    def recalls(self) -> RecallRecorder:
        """The recall log's writer (``memory.recalls.flush()`` writes what it holds)."""
        return self._ctx.recalls

    @property
    def lock(self) -> WriteLock:
        """The workspace's write lock (re-entrant, shared with other processes): hold
        it while changing the workspace's files other than through this memory."""
        return self._ctx.lock

    @property
    def notes(self) -> list[str]:
        """Damage this memory met and what it did about it (a damaged file read around,
        a copy kept, the index rebuilt, a torn audit line skipped), oldest first.

        Never raised: the agent goes on (SPEC S4); interfaces show these to the user.
        """
        return self._ctx.notes

    @property
    def default_reader(self) -> Reader | None:
        """The reading context of reads and writes given none (see :meth:`as_reader`);
        ``None`` reads unrestricted, as the workspace's owner."""
        return self._ctx.default_reader

    # ----------------------------------------------------------------- lifecycle
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._ctx.close()

    def as_reader(self, reader: Reader | None = None, **context: Any) -> Self:
        """This memory seen by one reader: every read and write of the returned view
        takes ``reader`` (or :meth:`reader` of ``context``) unless given its own. The
        view shares this memory's stores; close the original, not the view."""
        view = copy.copy(self)
        view._assemble(self._ctx.seen_by(reader if reader is not None else self.reader(**context)))
        return view

    # -------------------------------------------------------------- everyday verbs
    reader = Alias("_ctx", MemoryContext.reader)
    agents = Alias("_ctx", MemoryContext.agents)
    create_agent = Alias("_ctx", MemoryContext.create_agent)
    remember = Alias("_facts", Facts.remember)
    remember_many = Alias("_facts", Facts.remember_many)
    append_fact = Alias("_facts", Facts.append_fact)
    note = Alias("_notebook", Notes.note)
    observe = Alias("_sensory", Sensory.observe)
    recall = Alias("_reads", Reads.recall)
    get = Alias("_reads", Reads.get)
    items = Alias("_reads", Reads.items)
    count = Alias("_reads", Reads.count)
    facts = Alias("_reads", Reads.facts)
    history = Alias("_reads", Reads.history)
    forget = Alias("_forgetting", Forgetting.forget)
    forgets_together = Alias("_forgetting", Forgetting.outside_the_lock)

    # ------------------- flat names of the named parts' verbs (the part is the home)
    # memory.proposals(), memory.links() and memory.lessons() call the part: its list
    approve = Alias("proposals", Proposals.approve)
    reject = Alias("proposals", Proposals.reject)
    save_turn = Alias("sessions", Sessions.save_turn)
    save_turns = Alias("_turn_batch", TurnBatch.save_turns)
    load_session = Alias("sessions", Sessions.load)
    load_short_term = Alias("sessions", Sessions.last_turns)
    import_sessions = Alias("sessions", Sessions.import_records)
    link = Alias("links", Links.add)
    record_outcome = Alias("lessons", Lessons.record_outcome)
    lessons_for = Alias("lessons", Lessons.for_task)
    brain = Alias("prompt", Prompt.brain)
    identity = Alias("prompt", Prompt.identity)
    active_context = Alias("prompt", Prompt.active_context)
    format_for_prompt = Alias("prompt", Prompt.blocks)
    load_all = Alias("prompt", Prompt.load_all)
    load_long_term = Alias("prompt", Prompt.load_long_term)
    sync = Alias("admin", Admin.sync)
    reindex = Alias("admin", Admin.reindex)
    build_vector_graph = Alias("admin", Admin.build_vector_graph)
    heal_index = Alias("admin", Admin.heal_index)
    stats = Alias("admin", Admin.stats)
    audit = Alias("admin", Admin.audit)
    remove_agent = Alias("admin", Admin.remove_agent)
    follow_tenants = Alias("admin", Admin.follow_tenants)
    use_storage_policies = Alias("admin", Admin.use_storage_policies)
    purge = Alias("admin", Admin.purge)
    finish_forgets = Alias("admin", Admin.finish_forgets)
    report_damage = Alias("admin", Admin.report_damage)
    items_mark = Alias("admin", Admin.items_mark)
    vectors_waiting = Alias("admin", Admin.vectors_waiting)

    # ---------- what the workflows (:mod:`kronika.workflows`) use besides the verbs
    def resolve_agent(self, agent: str | None = None) -> str:
        """The agent a call names, or the ``default_agent`` setting for ``None``, after
        seeing what other workers of a shared store wrote; :class:`~kronika.errors.UnknownAgent`
        when that agent has no memory (the check every verb taking ``agent=`` makes)."""
        return self._ctx.agent(agent)

    def resolve_reader(self, reader: Reader | None = None) -> Reader | None:
        """The reader a call acts for: ``reader``, else :attr:`default_reader` (``None``
        reads unrestricted); :class:`~kronika.errors.InvalidInput` for anything else than
        a :class:`~kronika.core.model.Reader`."""
        return self._ctx.reading(reader)

    def write_audience(
        self,
        agent: str,
        scope: Scope | str | None = None,
        *,
        user: str | None = None,
        channel: str | None = None,
        team: str | None = None,
        reader: Reader | None = None,
    ) -> Audience:
        """Who a write to ``agent`` is for, as every write settles it: what it names, the
        rest from its reader's user and channel (:func:`kronika.core.visibility.audience`).
        :class:`~kronika.errors.PermissionDenied` for a reader of another tenant,
        :class:`~kronika.errors.InvalidInput` for a scope that lacks its user, channel or
        team."""
        return self._ctx.audience(agent, scope, user, channel, team, reader)

    def memory_write(
        self, target_agent: str, section: str, change: Change, source_agent: str = USER
    ) -> WriteReceipt:
        """The single write path (SPEC C5): permissions, autonomy, audit, then re-index.
        A forget (:class:`~kronika.engine.changes.ForgetItems`) is written as every forget
        is (:meth:`~kronika.memory.forgetting.Forgetting.write_forget`): the rewrite of
        the files that held it noted and run, the record's parts folded, its links
        removed."""
        if isinstance(change, ForgetItems):
            return self._forgetting.write_forget(target_agent, section, change, source_agent)
        return self._ctx.memory_write(target_agent, section, change, source_agent)

    def forget_items(
        self, agent: str, items: Sequence[MemoryItem], *, section: str = "", source_agent: str
    ) -> ForgetReceipt:
        """Forget ``items`` of ``agent`` (found by the caller, e.g. in :attr:`index`) at
        once, through the one forget path of :meth:`forget`: their text is redacted
        everywhere it is written and the change is audited as ``source_agent``'s.
        ``section`` names where they live (``""`` for more than one place)."""
        self.workspace.require_agent(agent)
        return self._forgetting.forget_items(agent, items, section, source_agent)

    @property
    def _lock(self) -> WriteLock:
        return self._ctx.lock
