"""``memory.admin``: keeping the workspace and its index in order — sync and rebuild
the index, heal it, the audit trail and the index's figures, remove an agent, apply
storage policies read anew, purge what they no longer allow, finish forgets a crash
cut short."""

from __future__ import annotations

import re
import shutil
from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from kronika.core import checks
from kronika.core.model import RecallFilter
from kronika.core.policies import StoragePolicies
from kronika.core.visibility import visible
from kronika.engine.derivation import mark_current
from kronika.engine.indexer import Progress, SyncReport
from kronika.errors import CorruptIndexError, InvalidInput
from kronika.memory.base import MemoryContext
from kronika.memory.forgetting import Forgetting
from kronika.ports import AuditEntry, ItemsMark, VectorGraph, acting

if TYPE_CHECKING:
    from kronika.core.model import Reader
    from kronika.engine.purge import PurgeReport

_ITEM_ID = re.compile(r"\b[a-z]+-[0-9a-f]{12}\b")
"""An item's id (``f-62acd0de3b06``) where an audit entry's summary names one."""


class Admin:
    """Sync, reindex, heal, audit, stats, remove agents, policies, purge."""

    def __init__(self, ctx: MemoryContext, forgetting: Forgetting) -> None:
        self._ctx = ctx
        self._forgetting = forgetting

    @property
    def notes(self) -> list[str]:
        """The damage this memory met and what it did about it (``memory.notes``)."""
        return self._ctx.notes

    def report_damage(self, text: str) -> None:
        """Add ``text`` to :attr:`notes` (damage found by whoever built this memory)."""
        self._ctx.report_damage(text)

    def heal_index(self, reason: str = "") -> str:
        """Move the damaged index aside, rebuild it from the Markdown, say so in
        :attr:`notes`; returns that note. The index is derived: nothing is lost but
        the embedding cache and access statistics."""
        return self._ctx.heal_index(reason)

    def sync(
        self,
        agent: str | None = None,
        *,
        paths: Sequence[str] | None = None,
        progress: Progress | None = None,
    ) -> SyncReport:
        """Pick up changes made to the Markdown files (by hand or by another process);
        ``paths`` (of one ``agent``) are read again even if their size and time match."""
        ctx = self._ctx
        with ctx.lock:
            if agent is None:
                report = ctx.healing(lambda: ctx.indexer.sync_all(progress=progress))
                report.texts_embedded += ctx.healing(ctx.indexer.fill_vectors)
                report.warnings.extend(ctx.shared.notes)
                return report
            name = ctx.agent(agent)
            report = ctx.healing(
                lambda: ctx.indexer.sync_agent(name, paths=paths, progress=progress)
            )
            report.texts_embedded += ctx.healing(ctx.indexer.fill_vectors)
            report.warnings.extend(ctx.shared.notes)
        ctx.shared.synced_at[agent] = ctx.clock.now()
        return report

    def reindex(self, *, progress: Progress | None = None) -> SyncReport:
        """Throw the index away and rebuild it from the Markdown alone."""
        ctx = self._ctx
        with ctx.lock:
            ctx.workspace.cleanup_temp()
            # A damaged file may still answer the pages a rebuild touches: look first,
            # and start on a fresh file rather than refill a broken one.
            problems = ctx.index.integrity_problems()
            if problems:
                ctx.replace_index(problems[0])
            try:
                report = ctx.indexer.rebuild(progress=progress)
            except CorruptIndexError as exc:
                ctx.replace_index(str(exc))
                report = ctx.indexer.rebuild(progress=progress)
            mark_current(ctx.index)  # built by this reading of the Markdown
        ctx.shared.synced_at.clear()
        report.warnings.extend(ctx.shared.notes)
        return report

    def build_vector_graph(self) -> bool:
        """Build the index's vector graph now, when the index is large enough for one,
        and wait for it (saved beside the index: later processes load it): True once a
        graph serves the searches, False when the index is too small for one or keeps
        none. Searches never wait for the graph and a process that closes first stops
        its build, so a large workspace used by short commands gets its graph here
        (``kronika index graph``)."""
        index = self._ctx.index
        return isinstance(index, VectorGraph) and index.wait_for_vector_graph(None)

    def vectors_waiting(self) -> bool:
        """Whether writes left texts to embed that the next recall comparing vectors
        embeds first (a recall over items just written costs that embedding too)."""
        return self._ctx.indexer.waiting()

    def items_mark(self) -> Hashable | None:
        """A value that differs after any write that adds, replaces or removes an item
        of the index, by this process or another (:class:`~kronika.ports.ItemsMark`);
        ``None`` for an index that cannot say."""
        index = self._ctx.index
        return index.items_mark() if isinstance(index, ItemsMark) else None

    def stats(self) -> dict[str, Any]:
        return self._ctx.index.stats()

    def audit(
        self, *, agent: str | None = None, limit: int | None = None, reader: Reader | None = None
    ) -> list[AuditEntry]:
        """The newest ``limit`` (1..1 000 000) entries of the audit trail, oldest first.

        Without a reader: every entry (the owner's trail). A reader gets the entries of
        its tenant's agents about an item it may see (:func:`visible`) and naming no
        other item it may not see (a link names both its ends); an entry about no item,
        or about one it may not see or that is gone, says what someone else's memory
        held, and is left out."""
        ctx = self._ctx
        limit = checks.optional_count(limit, what="the limit", low=1, high=checks.MAX_LIMIT)
        who = ctx.reading(reader)
        if who is None:
            return ctx.audit_log.read(agent, limit)
        ours = [
            entry
            for entry in ctx.audit_log.read(agent)
            if ctx.workspace.tenant_of(entry.target_agent) == who.tenant and entry.item_id
        ]
        named = {
            id(entry): {str(entry.item_id), *_ITEM_ID.findall(entry.summary)} for entry in ours
        }
        ids = list(dict.fromkeys(i for names in named.values() for i in names))
        seen = {item.id for item in ctx.index.get_items(ids) if visible(item, who)}
        shown = [entry for entry in ours if named[id(entry)] <= seen]
        return shown[-limit:] if limit else shown

    def remove_agent(self, agent: str, *, source_agent: str = "user") -> SyncReport:
        """Delete ``agent``'s folder (its Brain, identity, sessions, logs, summaries) and
        drop its items from the index; the audit trail keeps a line saying so.

        Refused (:class:`InvalidInput`) for the workspace's default agent, and in team
        mode, where the folder is a working copy of the PostgreSQL record.
        """
        ctx = self._ctx
        name = checks.text(agent, what="the agent")
        if ctx.settings.database_url:
            raise InvalidInput(
                "in team mode an agent's memory lives in PostgreSQL; removing it from one"
                " worker's working copy would not remove it"
            )
        if name == ctx.settings.default_agent:
            raise InvalidInput(
                f"agent {name!r} is the workspace's default agent (setting default_agent);"
                " choose another default first"
            )
        with ctx.lock:
            folder = ctx.workspace.require_agent(name)
            shutil.rmtree(folder)
            report = ctx.indexer.sync_all()
            ctx.audit_log.append(
                AuditEntry(
                    at=ctx.clock.now(),
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
        ctx.shared.synced_at.clear()
        return report

    def follow_tenants(self) -> list[str]:
        """Read again the agents whose items the index holds under another tenant than
        the config now gives them (an agent moved to a tenant); returns their names."""
        ctx = self._ctx
        moved = []
        for agent in ctx.agents():
            flt = RecallFilter(agents=(agent,), include_superseded=True)
            found = ctx.index.list_items(flt, limit=1)
            if found and found[0].tenant != ctx.workspace.tenant_of(agent):
                with ctx.lock:
                    for path in ctx.index.source_states(agent):
                        ctx.index.remove_source(agent, path)
                    ctx.healing(lambda a=agent: ctx.indexer.sync_agent(a))  # type: ignore[misc]
                moved.append(agent)
        return moved

    def use_storage_policies(self, storage: StoragePolicies) -> None:
        """Apply storage policies read anew (``kronika.toml`` was edited) to every write
        and purge from now on; a view made before (:meth:`Memory.as_reader`) keeps its own."""
        self._ctx.settings = replace(self._ctx.settings, storage=storage)
        self._ctx.writer.use_settings(self._ctx.settings)

    def purge(
        self,
        *,
        agent: str | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> PurgeReport:
        """Forget what the storage policies no longer allow (expired, never to be stored,
        in too long a tier), every agent's unless ``agent``; see :mod:`kronika.engine.purge`."""
        return self._forgetting.purge(agent=agent, dry_run=dry_run, progress=progress)

    def finish_forgets(self) -> int:
        """Finish every forget a kill cut short (:mod:`kronika.engine.forget_journal`);
        returns how many were finished. ``build_memory`` calls it on opening."""
        return self._forgetting.finish_forgets()
