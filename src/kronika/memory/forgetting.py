"""Forgetting through the facade: an item, a fact key or value, or a spoken topic
(:mod:`kronika.engine.forgetting`), and the purge of what the storage policies no
longer allow (:mod:`kronika.engine.purge`); both end in one forget path that redacts
the text everywhere it is written."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from kronika.core import checks
from kronika.core.model import MemoryItem, Reader
from kronika.core.visibility import only_visible, visible
from kronika.engine.changes import ForgetItems
from kronika.engine.indexer import Progress
from kronika.engine.redacting import ForgetPlan, plan_forget, snapshot
from kronika.engine.write import SYSTEM, USER, WriteReceipt
from kronika.errors import NotFound
from kronika.memory.base import MemoryContext

log = logging.getLogger("kronika.forget")

if TYPE_CHECKING:  # the forget path (and its phrase rules) loads when something is forgotten
    from kronika.engine.forgetting import ForgetReceipt
    from kronika.engine.purge import PurgeReport


class Forgetting:
    """Forget items and purge what the policies no longer allow."""

    def __init__(self, ctx: MemoryContext) -> None:
        self._ctx = ctx

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
        dry_run: bool = False,
    ) -> ForgetReceipt:
        """Forget an item by id, every value of a fact key, one value (``key`` and
        ``value``, or ``value`` alone) or what a spoken ``topic`` names, and redact its
        text everywhere else it is written; see :mod:`kronika.engine.forgetting`.

        Returns a :class:`~kronika.engine.forgetting.ForgetReceipt` listing every place
        touched (``outcome="proposed"`` when the agent's autonomy makes it a proposal).
        ``dry_run`` changes nothing: ``outcome="preview"``, with the items that would be
        forgotten and the places that would be touched (to confirm before forgetting);
        none when nothing matches (where forgetting raises :class:`NotFound`).
        """
        from kronika.engine.forgetting import (
            ForgetReceipt,
            Mentions,
            find_items,
            find_mentions,
            forgotten_phrases,
            topic_subject,
        )

        ctx = self._ctx
        item_id, key, value, topic = (
            checks.optional_text(text, what=what)
            for text, what in ((item_id, "the item id"), (key, "the key"))
            + ((value, "the value"), (topic, "the topic"))
        )
        name = ctx.agent(agent)
        with self.outside_the_lock(), ctx.lock:
            ctx.indexer.sync_agent(name)
            who = ctx.reading(reader)
            about = None
            if topic is not None and item_id is None and key is None and value is None:
                pool = ctx.workspace.brain_facts(name) + ctx.workspace.archived_facts(name)
                about = topic_subject(topic, pool + ctx.workspace.fact_history(name))
            try:
                items = find_items(
                    ctx.workspace,
                    ctx.index,
                    name,
                    item_id=item_id,
                    key=key,
                    value=value,
                    topic=topic,
                    may_see=lambda it: who is None or visible(it, who),
                )
            except NotFound:
                if about is None and dry_run:  # a preview of nothing: nothing would be forgotten
                    return ForgetReceipt("preview", name, (), ())
                if about is None:
                    raise
                items = []
            if who is not None:  # a reader forgets only what they may see
                items = only_visible(items, who)
            found = Mentions()
            if about is not None:
                found = find_mentions(
                    ctx.workspace, name, about, lambda it: who is None or visible(it, who)
                )
                have = {it.id for it in items}
                items += [it for it in found.items if it.id not in have]
            if not items and not found.found:
                if dry_run:
                    return ForgetReceipt("preview", name, (), ())
                if topic is not None:
                    seen = "" if who is None else " that this reader may see"
                    raise NotFound(f"agent {name!r} has nothing stored about {topic!r}{seen}")
                raise NotFound("nothing to forget that this reader may see")
            keep = self._hidden(name, who)
            if dry_run:
                phrases = forgotten_phrases(ctx.workspace, name, items) + found.phrases
                plan = plan_forget(ctx.workspace, ctx.audit_log, name, items, phrases, keep)
                return ForgetReceipt("preview", name, tuple(items), plan.places)
            section = items[0].section or "" if len(items) == 1 else ""
            return self.forget_items(name, items, section, source_agent, found.phrases, keep)

    def _hidden(self, name: str, who: Reader | None) -> frozenset[str]:
        """The ids of ``name``'s items ``who`` may not see (a forget leaves them as they
        are); none without a reader."""
        if who is None:
            return frozenset()
        hidden: set[str] = set()
        for source in self._ctx.workspace.list_sources(name):
            items = self._ctx.workspace.parse_source(name, source.path).items
            hidden.update(it.id for it in items if not visible(it, who))
        return frozenset(hidden)

    def forget_items(
        self,
        name: str,
        items: Sequence[MemoryItem],
        section: str,
        source_agent: str,
        also: Sequence[str] = (),
        keep: frozenset[str] = frozenset(),
    ) -> ForgetReceipt:
        """Forget ``items`` of agent ``name`` and redact their text, and the phrases
        ``also``, everywhere but in the items ``keep`` names (the one forget path:
        :meth:`forget`, and the purge of :mod:`kronika.engine.purge`)."""
        from kronika.engine.forgetting import ForgetReceipt, forgotten_phrases

        ctx = self._ctx
        with self.outside_the_lock(), ctx.lock:
            phrases = list(dict.fromkeys(forgotten_phrases(ctx.workspace, name, items) + [*also]))
            plan = plan_forget(ctx.workspace, ctx.audit_log, name, items, phrases, keep)
            touched = [e.path for e in plan.edits if e.place.action != "removed"]
            before = snapshot(ctx.workspace, name, touched)
            ids = [it.id for it in items]
            indexed = {it.id for it in ctx.index.get_items(ids)}
            change = ForgetItems(tuple(items), tuple(phrases), tuple(sorted(keep)))
            written, left = self._write_forget(name, section, change, source_agent, plan)
            if written.outcome != "applied":
                return ForgetReceipt(
                    written.outcome,
                    name,
                    tuple(items),
                    plan.places,
                    tuple(phrases),
                    proposal=written.proposal,
                )
            after = snapshot(ctx.workspace, name, touched)
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

    def write_forget(
        self, name: str, section: str, change: ForgetItems, source_agent: str
    ) -> WriteReceipt:
        """Write the forget ``change`` of agent ``name`` through the write path with what
        every forget needs around it: the rewrite noted as due and the record's parts
        folded (:meth:`_before_edits`), the links of the items gone removed, and the
        files that held them rewritten (:meth:`_compact`). The one way a forget is
        written: :meth:`forget_items`, and the approval of a forget proposal."""
        return self._write_forget(name, section, change, source_agent)[0]

    def _write_forget(
        self,
        name: str,
        section: str,
        change: ForgetItems,
        source_agent: str,
        planned: ForgetPlan | None = None,
    ) -> tuple[WriteReceipt, set[str]]:
        """:meth:`write_forget`, and the ids of the change's items the index still
        holds after it (all of them when it was not applied). ``planned``: the plan of
        the change made under the same lock (for the receipt), whose look at each file
        still as it was is not made again."""
        ctx = self._ctx
        ids = [it.id for it in change.items]
        with self.outside_the_lock(), ctx.lock:
            due = self._before_edits(name)
            written = ctx.writer.memory_write(name, section, change, source_agent, planned=planned)
            self._after_edits(due, written.outcome == "applied")
            if written.outcome != "applied":
                return written, set(ids)
            left = {it.id for it in ctx.index.get_items(ids)}
            ctx.link_store.remove_links(name, set(ids) - left)
            self._compact()
        return written, left

    def finish_forgets(self) -> int:
        """Finish every forget a kill cut short (:mod:`kronika.engine.forget_journal`):
        the same edits again through the write path, the index synced, the journal
        removed. Returns how many were finished; ``build_memory`` calls it on opening."""
        from kronika.engine import forget_journal

        ctx = self._ctx
        finished = 0
        for name in ctx.agents():
            folder = ctx.workspace.agent_dir(name)
            if not (folder / forget_journal.JOURNAL).exists():
                continue  # the common case: no lock taken
            # another process may be inside that very forget
            with self.outside_the_lock(), ctx.lock:
                found = forget_journal.pending(folder)
                if found is None:  # finished meanwhile, or unreadable: nothing was edited
                    forget_journal.finish(folder)
                    continue
                # what the cut-short forget already wrote, indexed while its journal
                # says those facts are being forgotten (not lost)
                ctx.indexer.sync_agent(name)
                change = ForgetItems(found.items, found.phrases, found.keep)
                due = self._before_edits(name)
                ctx.writer.memory_write(name, "forget", change, SYSTEM)
                self._after_edits(due, True)
                self._compact()
            finished += 1
            log.warning("%s: a forget cut short by a crash was finished", name)
        left = getattr(self._index(), "rewrites_left", None)
        if callable(left) and left():  # a worker gone before the rewrite after its forget
            with self.outside_the_lock(), ctx.lock:
                self._compact()
            log.warning("the rewrite after a forget cut short by a crash was run")
        return finished

    def _index(self) -> object:
        """The index under any wrapper (what its own upkeep verbs are asked of)."""
        return getattr(self._ctx.index, "inner", self._ctx.index)

    def _before_edits(self, name: str) -> str | None:
        """Before a forget edits anything: an index that rewrites its files after a
        forget notes the rewrite as due until it is done (its token, if it does:
        :mod:`kronika.stores.postgres.forget_due`); in team mode, the push that sends
        the edits folds the record's parts in the same transaction
        (:meth:`~kronika.stores.working_copy.WorkingCopy.fold_with_push`), so no text
        the forget removes stays under a part. Either holds when a kill comes between."""
        from kronika.stores.working_copy import WorkingCopy

        note = getattr(self._index(), "rewrite_due", None)
        token = note() if callable(note) else None
        if isinstance(self._ctx.lock, WorkingCopy):
            self._ctx.lock.fold_with_push(name)
        return str(token) if token is not None else None

    def _after_edits(self, token: str | None, applied: bool) -> None:
        """The forget noted by :meth:`_before_edits` wrote its edits (``applied``): the
        next rewrite covers it; else it edited nothing (a proposal, or refused) and no
        rewrite is due for it."""
        if token is None:
            return
        index = self._index()
        verb = getattr(index, "rewrite_written" if applied else "rewrites_done", None)
        if callable(verb):
            verb(token if applied else [token])

    def _compact(self) -> None:
        """A database that keeps deleted rows in its files until they are rewritten
        (PostgreSQL) rewrites them once the write lock is released; see
        ``compact_after_forget`` there. In team mode the redacted files go into the
        record first (a working copy's ``push``, under the lock, which folds the
        documents whose parts went over a span of them into one body), so the rows
        they replace are among the rewritten."""
        ctx = self._ctx
        compact = getattr(self._index(), "compact_after_forget", None)
        if callable(compact):
            from kronika.stores.working_copy import WorkingCopy

            if isinstance(ctx.lock, WorkingCopy):
                ctx.lock.push()
            ctx.shared.forget_state.due = compact
            if getattr(ctx.shared.forget_state, "depth", 0) == 0:  # not inside a forget
                self._compact_due()

    @contextmanager
    def outside_the_lock(self) -> Iterator[None]:
        """Enter before the write lock: when this thread's outermost forget is done and
        the lock released, run the rewrite it asked for (:meth:`_compact`), so other
        workers' recalls and writes wait only for the table being rewritten, not for the
        whole rewrite and the WAL rounds. The forget returns after it, as before."""
        state = self._ctx.shared.forget_state
        state.depth = getattr(state, "depth", 0) + 1
        try:
            yield
        finally:
            state.depth -= 1
            if state.depth == 0:
                self._compact_due()

    def _compact_due(self) -> None:
        compact: Callable[[], list[str]] | None = getattr(
            self._ctx.shared.forget_state, "due", None
        )
        self._ctx.shared.forget_state.due = None
        if compact is not None:
            for skipped in compact():
                log.warning("after a forget: %s", skipped)

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

        ctx = self._ctx
        agents = [ctx.agent(agent)] if agent is not None else ctx.agents()
        with self.outside_the_lock(), ctx.lock:
            for name in agents:
                ctx.indexer.sync_agent(name)
            now = ctx.clock.now()
            policies = ctx.settings.storage_policies
            checked, found = find_purgeable(ctx.index, agents, policies, now)
            return purge(
                checked,
                found,
                lambda name, items: self.forget_items(name, items, "purge", SYSTEM),
                dry_run=dry_run,
                progress=progress,
            )
