"""What the server does, once for REST and MCP: each call checks the caller's access
(:mod:`kronika.server.access`), then asks :class:`~kronika.memory.Memory`, under that
memory's lock, and answers with a JSON-ready dict (:mod:`kronika.wire`).

No memory logic lives here: writes go through Memory's one write path, with the
caller's ``source_agent``; reads pass the caller's reading context.

A service built with ``follow_config`` (``kronika serve``, ``kronika mcp``) looks at
that ``kronika.toml`` before every call that reads or writes an agent's memory
and applies its storage policies when they changed
(:mod:`kronika.engine.policy_follow`): an edit made through another worker, or by hand,
holds for every call that starts after it was written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from kronika import wire
from kronika.core.model import MemoryItem, Scope, Tier
from kronika.core.policies import StoragePolicies
from kronika.core.query import RecallQuery
from kronika.engine.policy_follow import PolicyFollower
from kronika.errors import Conflict, InvalidInput, InvalidQuery
from kronika.memory import Memory
from kronika.ports import ACTING, LLM, Embedder, Vector
from kronika.server.access import Caller, reading
from kronika.server.batching import QueryBatcher
from kronika.server.jobs import JobBook
from kronika.server.jobstore import open_job_records
from kronika.server.loop_recalls import LoopRecalls
from kronika.server.tenants import TenantMemories
from kronika.settings import Settings

LlmFactory = Callable[[Settings], LLM | None]
TIERS = {
    "short_term": Tier.SHORT,
    "mid_term": Tier.MID,
    "long_term": Tier.LONG,
    **{t.value: t for t in Tier},
}
_PAGE = 500


def _no_llm(settings: Settings) -> LLM | None:
    return None


class Service:
    """The memories a server holds, one per tenant, and the jobs it runs."""

    def __init__(
        self,
        memories: Mapping[str, Memory],
        *,
        llm: LlmFactory = _no_llm,
        jobs: JobBook | None = None,
        follow_config: Path | None = None,
    ) -> None:
        """``jobs``: where job records are kept; by default beside the first memory (its
        workspace folder, or its PostgreSQL database), shared by every server on it.
        ``follow_config``: the ``kronika.toml`` the memories' settings were loaded from;
        its storage policies are applied to every memory as the file has them, now and
        whenever it changes."""
        # a TenantMemories grows while serving (kronika.server.tenants): kept, not copied
        self.memories = memories if isinstance(memories, TenantMemories) else dict(memories)
        first = next(iter(self.memories.values()), None)
        self.jobs = jobs or JobBook(open_job_records(first.settings if first else None))
        self._llm = llm
        shared = {id(memory): threading.RLock() for memory in self.memories.values()}
        self._locks = {tenant: shared[id(memory)] for tenant, memory in self.memories.items()}
        self._locks_by_memory = shared
        self._batchers: dict[int, QueryBatcher] = {}
        self._loop_recalls = LoopRecalls()
        self._follower = PolicyFollower(follow_config) if follow_config else None
        self._policies: StoragePolicies | None = None  # the file's, once read
        if isinstance(self.memories, TenantMemories):
            self.memories.adopt = self._adopt
        self.follow_config()

    def follow_config(self) -> None:
        """Apply the storage policies of ``kronika.toml`` when the file changed (a stat
        when it did not). The follower's lock is held until they are applied: a call
        that finds the file unchanged may rely on its policies being in force. Called
        before a memory's lock is taken, never while it is held (the locks are taken in
        that order)."""
        follower = self._follower
        if follower is None:
            return
        with follower.lock:
            found = follower.poll()
            if found is None:
                return
            self._policies = found
            for memory in {id(m): m for m in dict.values(self.memories)}.values():
                with self._memory_lock(memory):
                    self._adopt(memory)

    def _adopt(self, memory: Memory) -> None:
        """``memory`` takes the policies in force: every memory when the file changes,
        and a tenant's built while serving (TenantMemories.adopt) before its first use."""
        if self._policies is not None and memory.settings.storage != self._policies:
            memory.use_storage_policies(self._policies)

    def _memory_lock(self, memory: Memory) -> threading.RLock:
        return self._locks_by_memory.setdefault(id(memory), threading.RLock())

    def _tenant_lock(self, caller: Caller) -> threading.RLock | None:
        # a Memory serves one caller at a time; memories of other tenants are independent
        lock = self._locks.get(caller.tenant)
        if lock is None and dict.__contains__(self.memories, caller.tenant):  # served since
            memory = dict.__getitem__(self.memories, caller.tenant)
            lock = self._locks.setdefault(caller.tenant, self._memory_lock(memory))
        return lock

    @contextmanager
    def _held(self, caller: Caller) -> Iterator[None]:
        lock = self._tenant_lock(caller)
        # every audit entry made meanwhile names the key and the user it acted for
        token = ACTING.set((caller.key.id, caller.user))
        try:
            if lock is None:
                yield
                return
            with lock:
                yield
        finally:
            ACTING.reset(token)

    def _read(self, caller: Caller, agent: str) -> Memory:
        """The memory as ``caller`` reads it, when the caller may read ``agent``."""
        self.follow_config()
        return reading(caller.readable(self.memories, agent), caller)

    @contextmanager
    def reading(self, caller: Caller, agent: str) -> Iterator[Memory]:
        """The memory as ``caller`` reads ``agent`` (when it may), held for the block:
        for reads that have no method here, such as the memory browser's charts and pages."""
        memory = self._read(caller, agent)
        with self._held(caller):
            yield memory

    def _write(self, caller: Caller, agent: str, channel: str | None = None) -> Memory:
        """The memory as ``caller`` writes to it, when the caller may write to ``agent``
        (in ``channel``, when the write names one: a key bound to channels names its own)."""
        caller.check_channel(channel)
        self.follow_config()
        return reading(caller.writable(self.memories, agent), caller)

    # -------------------------------------------------------------------- agents
    def agents(self, caller: Caller) -> dict[str, Any]:
        memory = self.memories.get(caller.tenant)
        if memory is None:
            return {"agents": []}
        with self._held(caller):
            return {"agents": caller.visible_agents(memory)}

    def create_agent(self, caller: Caller, agent: str) -> dict[str, Any]:
        caller.require_admin("creating an agent")
        caller.require_unrestricted("creating an agent")
        self.follow_config()
        memory = caller.memory(self.memories, agent)
        with self._held(caller):
            taken = [a for a in memory.agents() if a.casefold() == agent.casefold()]
            if taken or memory.workspace.has_agent(agent):
                raise Conflict(
                    f"an agent named {agent!r} already exists in this workspace; choose"
                    " another name"
                )
            caller.context.admit(memory, agent)
            memory.create_agent(agent)
        return {"agent": agent, "created": True, "tenant": caller.tenant}

    # -------------------------------------------------------------------- writes
    def remember(self, caller: Caller, agent: str, **fields: Any) -> dict[str, Any]:
        memory = self._write(caller, agent, fields.get("channel"))
        with self._held(caller):
            receipt = memory.remember(agent=agent, source_agent=caller.source_agent, **fields)
        return wire.write_receipt(receipt)

    def note(self, caller: Caller, agent: str, text: str, **fields: Any) -> dict[str, Any]:
        memory = self._write(caller, agent, fields.get("channel"))
        with self._held(caller):
            receipt = memory.note(text, agent=agent, source_agent=caller.source_agent, **fields)
        return wire.write_receipt(receipt)

    def outcome(self, caller: Caller, agent: str, **fields: Any) -> dict[str, Any]:
        """Record how an action went (Memory.record_outcome) as the caller, for the
        caller's audience; the server's background model, if any, writes the lesson."""
        from kronika.core.lessons import Evaluation

        memory = self._write(caller, agent, fields.get("channel"))
        given = fields.pop("evaluation", None)
        evaluation = Evaluation.from_dict(given) if given is not None else None
        with self._held(caller):
            report = memory.record_outcome(
                fields.pop("task"),
                fields.pop("action"),
                evaluation,
                agent=agent,
                llm=self._llm(memory.settings),
                source_agent=caller.source_agent,
                **fields,
            )
        return report.as_dict()

    def forget(
        self,
        caller: Caller,
        agent: str,
        *,
        item_id: str | None = None,
        key: str | None = None,
        value: str | None = None,
        topic: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        memory = self._write(caller, agent)
        with self._held(caller):
            receipt = memory.forget(
                item_id,
                key=key,
                value=value,
                topic=topic,
                agent=agent,
                source_agent=caller.source_agent,
                dry_run=dry_run,
            )
        return wire.forget_receipt(receipt)

    def save_turn(
        self,
        caller: Caller,
        agent: str,
        session_id: str,
        *,
        speaker: str,
        content: str,
        at: datetime | None = None,
        turn_id: str | None = None,
        scope: str | None = None,
        channel: str | None = None,
    ) -> dict[str, Any]:
        memory = self._write(caller, agent, channel)
        with self._held(caller):
            made = memory.save_turn(
                session_id,
                speaker,
                content,
                agent=agent,
                at=at,
                turn_id=turn_id,
                source_agent=caller.source_agent,
                scope=scope,
                channel=channel,
            )
        return wire.turn_receipt(session_id, made)

    def save_turns(
        self,
        caller: Caller,
        agent: str,
        session_id: str,
        turns: list[dict[str, Any]],
        *,
        scope: str | None = None,
        channel: str | None = None,
    ) -> dict[str, Any]:
        memory = self._write(caller, agent, channel)
        with self._held(caller):
            made = memory.save_turns(
                session_id,
                turns,
                agent=agent,
                source_agent=caller.source_agent,
                scope=scope,
                channel=channel,
            )
        return wire.turn_receipts(session_id, made)

    # --------------------------------------------------------------------- reads
    def recall(
        self,
        caller: Caller,
        asked: RecallQuery,
        *,
        explain: bool = False,
        query_vector: Vector | None = None,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """``asked`` (its ``agent``: the agent the request names) as the caller may read it
        (``now``: the memory's clock unless given)."""
        memory = self._recall_memory(caller, _named(asked), all_agents=asked.all_agents)
        return self._recall(caller, memory, asked, query_vector, explain, now)

    async def recall_batched(
        self,
        caller: Caller,
        asked: RecallQuery,
        *,
        explain: bool = False,
        now: datetime | None = None,
    ) -> dict[str, Any]:
        """:meth:`recall`, its query embedded, and its vector scored, together with those
        of the recalls that arrived with it (:mod:`kronika.server.batching`). Only the
        access check (a look at the agent's folder) and the embedding run on the event
        loop, so that the recalls read together reach the batcher together; applying
        changed storage policies (which may wait for a memory's lock) and the recall
        itself run in a worker thread, so a long recall never keeps the loop from
        answering other requests. A recall with nothing to wait for — the policies
        unchanged, its memory's lock free, every part of it in this process (no
        database, vector service or reranker to wait on) and the last recall of its
        memory quick since the last write (:mod:`kronika.server.loop_recalls`) — runs on
        the loop instead: it is work for this process alone, and a thread would only
        pass the interpreter back and forth with the loop."""
        from anyio import to_thread

        agent = _named(asked)
        memory = self._recall_memory(caller, agent, all_agents=asked.all_agents, follow=False)
        vector = None
        if asked.mode != "lexical" and asked.query.strip():
            batcher = self._batcher(memory.embedder)
            vector = await batcher.embed(asked.query, index=memory.index)

        loops = self._loop_recalls
        in_process = _in_process(memory.settings)
        mark, quick = (
            await loops.measured(memory, memory.admin.items_mark()) if in_process else (None, False)
        )
        if quick and self._policies_settled():
            lock = self._tenant_lock(caller)
            if lock is None or lock.acquire(blocking=False):
                try:
                    with loops.timed(memory, mark):
                        return self._recall(caller, memory, asked, vector, explain, now)
                finally:
                    if lock is not None:
                        lock.release()

        def recall() -> dict[str, Any]:
            self.follow_config()
            if not in_process:
                return self._recall(caller, memory, asked, vector, explain, now)
            with loops.timed(memory, mark):  # whether the next may run on the loop
                return self._recall(caller, memory, asked, vector, explain, now)

        if not in_process or quick:  # measured already: the policies or a lock in the way
            return await to_thread.run_sync(recall)
        with loops.measuring(memory):
            return await to_thread.run_sync(recall)

    def _policies_settled(self) -> bool:
        """Whether the policies in force are the file's (checked without waiting)."""
        follower = self._follower
        if follower is None:
            return True
        if not follower.lock.acquire(blocking=False):
            return False
        try:
            return follower.unchanged()
        finally:
            follower.lock.release()

    def _recall(
        self,
        caller: Caller,
        memory: Memory,
        asked: RecallQuery,
        vector: Vector | None,
        explain: bool,
        now: datetime | None,
    ) -> dict[str, Any]:
        with self._held(caller):
            result = memory.recall(asked, query_vector=vector, now=now)
        return wire.recall(result, explain=explain)

    def _recall_memory(
        self, caller: Caller, agent: str, *, all_agents: bool, follow: bool = True
    ) -> Memory:
        memory = caller.readable(self.memories, agent)  # the path names an agent it may read
        if all_agents:
            caller.require_unrestricted("recall across all agents")
            memory = caller.memory(self.memories, agent)
        if follow:
            self.follow_config()
        return reading(memory, caller)

    def _batcher(self, embedder: Embedder) -> QueryBatcher:
        found = self._batchers.get(id(embedder))
        if found is None:
            found = self._batchers[id(embedder)] = QueryBatcher(embedder)
        return found

    def close(self) -> None:
        """Close the job records and every memory (once, also when tenants share one)."""
        self.jobs.close()
        for memory in {id(m): m for m in self.memories.values()}.values():
            memory.close()

    def get(self, caller: Caller, agent: str, item_id: str) -> dict[str, Any]:
        memory = self._read(caller, agent)
        with self._held(caller):
            item = memory.get(item_id, agent=agent)
        return wire.item(item)

    def items(
        self,
        caller: Caller,
        agent: str,
        *,
        types: Sequence[str] = (),
        include_superseded: bool = False,
        limit: int = 50,
        offset: int = 0,
    ) -> dict[str, Any]:
        memory = self._read(caller, agent)
        with self._held(caller):
            found = memory.items(
                agent=agent,
                types=types,
                include_superseded=include_superseded,
                limit=limit,
                offset=offset,
            )
        return {"items": wire.items(found)}

    def agent_memory(
        self, caller: Caller, agent: str, *, scope: str | None, limit: int
    ) -> dict[str, Any]:
        """Newest first, only ``scope``: a tier (``short_term``, ``mid_term``,
        ``long_term``) or a sharing scope (``personal``, ``channel``, ``team``, ``global``)."""
        wanted = _scope_test(scope)
        memory = self._read(caller, agent)
        found: list[MemoryItem] = []
        offset = 0
        with self._held(caller):
            while len(found) < limit:
                page = memory.items(agent=agent, limit=_PAGE, offset=offset)
                found += [item for item in page if wanted(item)]
                if len(page) < _PAGE:
                    break
                offset += _PAGE
        return {"scope": scope, "items": wire.items(found[:limit])}

    def history(self, caller: Caller, agent: str, key: str) -> dict[str, Any]:
        memory = self._read(caller, agent)
        with self._held(caller):
            found = memory.history(key, agent=agent)
        return {"key": key, "values": wire.items(found)}

    def facts(self, caller: Caller, agent: str, *, include_archived: bool) -> dict[str, Any]:
        memory = self._read(caller, agent)
        with self._held(caller):
            found = memory.facts(agent=agent, include_archived=include_archived)
        return {"facts": wire.items(found)}

    def brain(self, caller: Caller, agent: str) -> dict[str, Any]:
        memory = self._read(caller, agent)
        with self._held(caller):
            return {"agent": agent, "brain": memory.brain(agent=agent)}

    def wake(self, caller: Caller, agent: str) -> dict[str, Any]:
        from kronika.workflows.session import wake_context

        memory = self._read(caller, agent)
        with self._held(caller):
            identity, block, active = wake_context(memory, agent, reader=memory.default_reader)
            parts = {
                "identity": memory.tokens.count(identity),
                "memory_block": memory.tokens.count(block),
                "active_context": memory.tokens.count(active),
            }
        s = memory.settings
        return {
            "agent": agent,
            "identity": identity,
            "memory_block": block,
            "active_context": active,
            "tokens": sum(parts.values()),
            "parts": parts,
            "budgets": {
                "identity": s.identity_budget,
                "memory_block": s.brain_max,
                "active_context": s.active_context_budget,
            },
        }

    def prompt(self, caller: Caller, agent: str, query: str | None) -> dict[str, Any]:
        memory = self._read(caller, agent)
        with self._held(caller):
            block = memory.format_for_prompt(agent=agent, query=query or None)
        return {"agent": agent, "block": block}

    def sessions(self, caller: Caller, agent: str) -> dict[str, Any]:
        memory = self._read(caller, agent)
        with self._held(caller):
            # a header (its summary, its user) is the session's: listed only to a
            # reader who may see the session's turns
            listed = [
                (h, turns)
                for h in memory.workspace.session_headers(agent)
                if (turns := memory.load_session(h.session_id, agent=agent))
            ]
        return {"sessions": [wire.session(h, turns) for h, turns in listed]}

    def session(self, caller: Caller, agent: str, session_id: str) -> dict[str, Any]:
        memory = self._read(caller, agent)
        with self._held(caller):
            turns = memory.load_session(session_id, agent=agent)
        return {"session_id": session_id, "turns": wire.items(turns)}

    def audit(self, caller: Caller, agent: str | None, limit: int | None) -> dict[str, Any]:
        """The audit trail of ``agent`` (or of every agent the caller may read): only
        the entries of the caller's tenant, and for anyone but an admin of the whole
        tenant reading for no user or channel (the owner, who gets a backup whole too)
        only those about items the caller's reader may see (:meth:`Memory.audit`)."""
        if agent is None:
            caller.require_unrestricted("the audit trail of every agent")
            if caller.tenant not in self.memories:
                return {"entries": []}
            self.follow_config()
            memory = caller.memory(self.memories)
        else:
            self.follow_config()
            memory = caller.readable(self.memories, agent)
        with self._held(caller):
            entries = caller.context.audit(memory, agent)
        return {"entries": wire.audit(entries[-limit:] if limit else entries)}

    def lessons(self, caller: Caller, agent: str, *, include_retired: bool) -> dict[str, Any]:
        memory = self._read(caller, agent)
        with self._held(caller):
            found = memory.lessons(agent=agent, include_retired=include_retired)
        return {"lessons": [x.as_dict() for x in found]}

    def stats(self, caller: Caller) -> dict[str, Any]:
        """Item counts of the caller's agents (the tenant's owner counts every item, any
        other key what its reader may see); for a key of the whole tenant the index's
        statistics too, but only the caller's agents' counts when the index holds other
        tenants' agents as well (one workspace serving several tenants)."""
        memory = self.memories.get(caller.tenant)
        if memory is None:
            return {"agents": {}}
        with self._held(caller):
            counts = caller.context.counts(memory)
            index = memory.stats() if caller.unrestricted else {}
        if index and self._shared(memory, caller.tenant):
            kept = ("embedding_model", "dim", "migrations")
            index = {k: index[k] for k in kept if k in index}
            index.update(items=sum(counts.values()), items_by_agent=counts)
        return {"agents": counts, "index": index}

    def _shared(self, memory: Memory, tenant: str) -> bool:
        """Whether ``memory`` also serves a tenant other than ``tenant``."""
        others = (m for t, m in dict.items(self.memories) if t != tenant)
        return any(m is memory for m in others) or bool(memory.settings.tenants())

    def edit_policies(self, caller: Caller, agent: str, toml: str | None) -> None:
        """Replace the storage policies of ``kronika.toml`` (an admin key of the whole
        tenant; :mod:`kronika.workflows.policy_edit`). Access is decided before ``toml``
        is looked at, as on every write."""
        from kronika.workflows import policy_edit

        caller.writable(self.memories, agent)
        caller.require_admin("changing the storage policies")
        caller.require_unrestricted("changing the storage policies")
        if toml is None:
            raise InvalidInput('send the policy tables as {"toml": "..."}')
        self.follow_config()
        memory = caller.memory(self.memories, agent)  # the memory itself, not a view
        with self._held(caller):
            policy_edit.rewrite_policies(memory, caller.tenant, agent, toml, caller.source_agent)

    def default_agent(self, caller: Caller) -> str:
        """The agent a call that names none is for: the key's own, else the tenant's
        memory's default agent."""
        if caller.key.agent:
            return caller.key.agent
        return caller.memory(self.memories).settings.default_agent

    # ----------------------------------------------------------------- proposals
    def proposals(self, caller: Caller, agent: str) -> dict[str, Any]:
        memory = self._read(caller, agent)
        with self._held(caller):
            found = memory.proposals(agent)
        return {"proposals": [wire.proposal(p) for p in found]}

    def settle(self, caller: Caller, agent: str, proposal_id: str, verb: str) -> dict[str, Any]:
        memory = self._write(caller, agent)
        caller.require_admin(f"to {verb} a proposal")
        with self._held(caller):
            if verb == "approve":
                return {"approved": wire.write_receipt(memory.approve(proposal_id, agent))}
            return {"rejected": wire.proposal(memory.reject(proposal_id, agent))}

    # ------------------------------------------------------------ export, import
    def export(self, caller: Caller, agent: str | None) -> dict[str, Any]:
        if agent is not None:
            memory = caller.readable(self.memories, agent)
            self.follow_config()
            names = [agent]
        else:
            if caller.tenant not in self.memories:
                return {"agents": {}, "audit": []}
            self.follow_config()
            memory = caller.memory(self.memories)
            names = caller.context.agents(memory)
        rules = _own_rules(memory, caller.tenant)
        with self._held(caller):
            return caller.context.export(memory, names, rules=rules)

    def import_export(self, caller: Caller, document: Any, *, replace: bool) -> dict[str, Any]:
        """Restore an export into the key's tenant (an admin key of the whole tenant):
        every agent of the document must be, or become, an agent of that tenant, and
        its audit entries must be about those agents."""
        from kronika.engine.backup_format import read_backup
        from kronika.workflows.portability import restore_backup

        caller.require_admin("importing")
        caller.require_unrestricted("importing")
        self.follow_config()
        memory = caller.memory(self.memories)
        backup = read_backup(document)
        with self._held(caller):
            names = set()
            for agent in backup.agents:
                names.add(agent.name)
                wanted = agent.policy.tenant if agent.policy is not None else None
                caller.context.admit(memory, agent.name, wanted)
            strays = sorted({e.target_agent for e in backup.audit} - names)
            if strays:
                raise InvalidInput(
                    f"the document's audit trail names agents it does not hold: {', '.join(strays)}"
                )
            rules = _own_rules(memory, caller.tenant)
            return restore_backup(memory, backup, replace_existing=replace, rules=rules).as_dict()

    # ---------------------------------------------------------------------- jobs
    def run_job(
        self,
        caller: Caller,
        agent: str,
        name: str,
        *,
        days: int = 7,
        mode: str = "full",
        clear: bool | None = None,
    ) -> dict[str, Any]:
        """Queue one memory job (``decay``, ``reflect``, ``dream``, ``summarize``,
        ``distill``) for ``agent``, as ``kronika jobs run`` does; returns the job.
        ``distill`` distils the sessions of the last ``days`` days (SPEC F5): sessions
        that went quiet are ended, every ended session is consolidated into facts and
        the Active Context, then the summaries that are due are written."""
        from kronika.workflows.jobs import JOBS, MODES

        if name not in JOBS:
            raise InvalidInput(f"unknown job {name!r}: one of {', '.join(JOBS)}")
        if mode not in MODES:
            raise InvalidInput(f"unknown mode {mode!r}: lite or full")
        memory = self._write(caller, agent)

        def work() -> tuple[str, str, dict[str, Any]]:
            from kronika.workflows.jobs import run_job

            minion = self._llm(memory.settings)
            self.follow_config()  # a queued job may start well after it was asked for
            with self._held(caller):
                report = run_job(
                    memory, name, agent=agent, days=days, mode=mode, llm=minion, clear=clear
                )
            result = report.as_counts()  # no step's wording: a record outlives a forget
            if report.waiting:
                why = "no language model is configured" if minion is None else "the model failed"
                waiting = f"{len(report.waiting)} step(s)"
                return "waiting", f"{why}: {waiting} stay queued for the next run", result
            return "done", f"{len(report.done)} done", result

        params: dict[str, Any] = {"days": days}
        if name != "distill" or mode != "full":
            params["mode"] = mode
        if clear is not None:
            params["clear"] = clear
        return self.jobs.submit(name, caller.tenant, agent, params, work).as_dict()

    def job(self, caller: Caller, job_id: str) -> dict[str, Any]:
        return self.jobs.get(job_id, caller.context).as_dict()

    def resume(self, caller: Caller, job_id: str) -> dict[str, Any]:
        """Start an interrupted job again with its parameters (a new job; the work it
        did before is kept, and each step it redoes changes nothing already done)."""
        old = self.jobs.get(job_id, caller.context)
        if not old.resumable:
            raise InvalidInput(
                f"job {job_id} is {old.status}: only an interrupted job can be resumed"
            )
        days, mode, clear = (old.params.get(k) for k in ("days", "mode", "clear"))
        return self.run_job(
            caller,
            old.agent,
            old.kind,
            days=days if isinstance(days, int) else 7,
            mode=mode if isinstance(mode, str) else "full",
            clear=clear if isinstance(clear, bool) else None,
        )

    def job_list(self, caller: Caller) -> dict[str, Any]:
        found = self.jobs.list(caller.context)
        return {"jobs": [j.as_dict() for j in found]}


def _scope_test(scope: str | None) -> Callable[[MemoryItem], bool]:
    if scope is None or not scope.strip():
        return lambda item: True
    name = scope.strip().lower()
    if name in TIERS:
        tier = TIERS[name]
        return lambda item: item.tier is tier
    try:
        sharing = Scope(name)
    except ValueError:
        tiers = ", ".join(k for k in TIERS if "_" in k)
        scopes = ", ".join(s.value for s in Scope)
        raise InvalidQuery(f"unknown scope {scope!r}: use {tiers} or {scopes}") from None
    return lambda item: item.scope is sharing


def _own_rules(memory: Memory, tenant: str) -> bool:
    """Whether ``tenant``'s export may carry (and its import add) the workspace's rules
    of ``kronika.toml``: only when they are that tenant's alone, as for editing them."""
    from kronika.workflows.policy_edit import why_not_editable

    return why_not_editable(memory, tenant) is None


def _named(asked: RecallQuery) -> str:
    """The agent a server's recall names (its path, or the caller's default agent)."""
    if asked.agent is None:
        raise InvalidQuery("a recall over the server names its agent")
    return asked.agent


def _in_process(settings: Settings) -> bool:
    """Whether a recall of a memory of ``settings`` waits on nothing outside this
    process: no database, vector service or reranker over the network."""
    return not (settings.database_url or settings.qdrant_url or settings.reranker_base_url)
