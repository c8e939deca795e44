"""The one reading context below the interfaces: who reads, and the only way the server,
the MCP tools and the command line get a read of a memory and of its tenant-wide records.

A :class:`ReadingContext` is the caller's tenant, user, channel and teams, the agent a
key is bound to (if any) and whether the caller is the tenant's *owner* (an admin of
the whole tenant reading for no user or channel). An interface builds it once per
request (the server from the API key and the ``X-Kronika-*`` headers, the command line
from ``--tenant``/``--user``/``--channel``/``--team``) and reads only through it:

* :meth:`ReadingContext.view` is the memory as this reader reads it: items, recall,
  the Brain, prompt blocks, sessions, lessons, proposals, the recall log, charts and
  pages are filtered by :func:`kronika.core.visibility.visible` inside every call of
  the view, so a route or a tool written tomorrow on top of it is filtered without
  knowing it;
* the tenant-wide records are kept per tenant here: :meth:`~ReadingContext.agents`
  (the agents of the tenant, or the key's one agent), :meth:`~ReadingContext.audit`,
  :meth:`~ReadingContext.counts`, :meth:`~ReadingContext.export`,
  :meth:`~ReadingContext.usage` (the model-usage ledger), :meth:`~ReadingContext.policies`
  (the storage rules that can apply, seen from this tenant) and
  :meth:`~ReadingContext.own` (any record that names a tenant and an agent, such as the
  server's jobs); only the owner reads the audit trail, counts and exports whole;
* :meth:`~ReadingContext.admit` says whether a new or imported agent would belong to
  this tenant.

Access itself (may this key read or write agent X at all) stays with the interface
(:class:`kronika.server.access.Caller`); what any read then returns is decided here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kronika.core.model import Reader
from kronika.errors import Conflict
from kronika.ports import AuditEntry

if TYPE_CHECKING:
    from kronika.core.usage import UsageEntry
    from kronika.memory import Memory


class TenantRecord(Protocol):
    """A record kept for a tenant's agent (a job, say)."""

    @property
    def tenant(self) -> str: ...

    @property
    def agent(self) -> str: ...


R = TypeVar("R", bound=TenantRecord)


@dataclass(frozen=True, slots=True)
class ReadingContext:
    """Who reads: the tenant, user, channel and teams, the one agent a key is bound to
    and whether this is the tenant's owner (see the module docstring)."""

    tenant: str
    user: str | None = None
    channel: str | None = None
    teams: tuple[str, ...] | None = None
    """The reader's teams; ``None``: those the config gives the user."""
    agent: str | None = None
    """The only agent this context reads (a key naming an agent); ``None``: any of the
    tenant's."""
    owner: bool = False
    """The tenant's owner reads the audit trail, counts and exports whole."""

    def reader(self, memory: Memory) -> Reader:
        return memory.reader(
            tenant=self.tenant, user=self.user, channel=self.channel, teams=self.teams
        )

    def view(self, memory: Memory) -> Memory:
        """``memory`` as this reader reads (and writes) it: every call of the view takes
        this reading context unless given its own."""
        return memory.as_reader(self.reader(memory))

    def _records(self, memory: Memory) -> Memory:
        return memory if self.owner else self.view(memory)

    # ------------------------------------------------------------------ agents
    def ours(self, memory: Memory, agent: str) -> bool:
        """``agent`` exists, belongs to this tenant and this context may read it."""
        if self.agent is not None and agent != self.agent:
            return False
        found = memory.workspace.has_agent(agent)
        return found and memory.workspace.tenant_of(agent) == self.tenant

    def agents(self, memory: Memory) -> list[str]:
        """The agents this context reads: the tenant's, or the key's one agent."""
        names = memory.agents() if self.agent is None else [self.agent]
        return [name for name in names if self.ours(memory, name)]

    def admit(self, memory: Memory, agent: str, declared: str | None = None) -> None:
        """:class:`~kronika.errors.Conflict` when ``agent``, created here or restored
        from an export, would belong to another tenant in this workspace: the tenant the
        config (or the agent's folder) gives it, else the one the export ``declared``."""
        known = agent in memory.settings.agents or memory.workspace.has_agent(agent)
        tenant = memory.workspace.tenant_of(agent) if known or declared is None else declared
        if tenant != self.tenant:
            raise Conflict(
                f"agent {agent!r} would belong to tenant {tenant!r} in this workspace,"
                f" not {self.tenant!r}: only agents of the key's tenant are made or"
                " restored here (declare it in kronika.toml first:"
                f' [agents.{agent}] tenant = "{self.tenant}")'
            )

    # ------------------------------------------------------- tenant-wide records
    def audit(self, memory: Memory, agent: str | None = None) -> list[AuditEntry]:
        """The audit trail of ``agent`` (or of every agent this context reads): only
        entries about this context's agents, and for anyone but the owner only those
        about items the reader may see (:meth:`Memory.audit`)."""
        names = set(self.agents(memory)) if agent is None else {agent} & set(self.agents(memory))
        return [e for e in self._records(memory).audit(agent=agent) if e.target_agent in names]

    def counts(self, memory: Memory) -> dict[str, int]:
        """Items per agent: every item for the owner, what the reader may see otherwise."""
        counting = self._records(memory)
        return {name: counting.count(agent=name) for name in self.agents(memory)}

    def export(self, memory: Memory, names: Sequence[str], *, rules: bool = True) -> dict[str, Any]:
        """The export of ``names`` (agents of this context): whole for the owner (a backup
        that import restores), the reader's view for anyone else. The workspace's rules
        go with it for the owner only, and only when ``rules`` (they are this tenant's
        alone)."""
        from kronika.workflows.portability import export_memory

        kept = [name for name in names if self.ours(memory, name)]
        if not kept:
            return {"agents": {}, "audit": []}
        return export_memory(self._records(memory), kept, rules=rules and self.owner)

    def usage(self, memory: Memory, agent: str, since: datetime | None) -> list[UsageEntry]:
        """The model-usage ledger's entries of ``agent`` since ``since`` (none for an
        agent this context does not read)."""
        from kronika.stores.usage import USAGE_FILE, JsonlUsageLedger

        if not self.ours(memory, agent):
            return []
        ledger = JsonlUsageLedger(memory.settings.home / USAGE_FILE)
        return [e for e in ledger.read(since) if e.agent == agent]

    def policies(self, memory: Memory, agent: str) -> list[dict[str, Any]]:
        """The ``[[policy]]`` rules that can apply to ``agent``, seen from this tenant:
        another tenant's or agent's rules are left out, and a rule's lists name this
        tenant and this agent only."""
        from kronika.core.policies import may_apply

        if not self.ours(memory, agent):
            return []
        rules = memory.settings.storage_policies.rules
        return [
            rule.seen_from(self.tenant, [agent]).as_dict()
            for rule in rules
            if may_apply(rule, self.tenant, agent)
        ]

    def own(self, records: Iterable[R]) -> list[R]:
        """The records (jobs, say) of this tenant, and of the key's agent when it names
        one."""
        return [
            r
            for r in records
            if r.tenant == self.tenant and (self.agent is None or r.agent == self.agent)
        ]
