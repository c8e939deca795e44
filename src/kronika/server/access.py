"""Who is calling and what they may touch: the server's one authorization rule.

A request's key becomes a :class:`Caller`. Before any memory call the server asks
:meth:`Caller.readable` or :meth:`Caller.writable` for the agent named in the path:

* a key sees only its tenant: another tenant's agents do not exist for it;
* a key that names an agent reads that agent only; every other agent answers
  exactly as an agent that does not exist (404), so a key never learns which
  agents exist beyond its own;
* a reader key cannot write (403: its role is no secret to it);
* an agent key writes *as its agent* (``source_agent``) through the one write path,
  so autonomy levels and grants apply there; it may aim at another agent only when
  that agent's ``writers`` grant names it (otherwise 404, as above);
* an admin key writes as the person (``user``).

The reading context (:class:`~kronika.workflows.context.ReadingContext`) is built here,
once per request, from the key and the user and channel a request names
(:attr:`Caller.context`); every read the server makes of a memory, and of its
tenant-wide records (audit trail, counts, exports, model usage, policies, jobs), goes
through it. A workspace may hold agents of several tenants (``[agents.<name>]
tenant``): an agent of another tenant does not exist for a key either.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kronika import errors
from kronika.engine.write import USER
from kronika.memory import Memory
from kronika.server.keys import ApiKey, Role
from kronika.workflows.context import ReadingContext


class Unauthenticated(errors.KronikaError):
    """No API key, or one that is unknown, malformed or revoked (HTTP 401)."""


class Forbidden(errors.PermissionDenied):
    """The key's role does not allow this (HTTP 403)."""


STATUS: tuple[tuple[type[errors.KronikaError], int], ...] = (
    (Unauthenticated, 401),
    (errors.PermissionDenied, 403),
    (errors.UnknownAgent, 404),
    (errors.NotFound, 404),
    (errors.Conflict, 409),
    (errors.WorkspaceNotFound, 503),
    (errors.InvalidAgentName, 422),
    (errors.InvalidQuery, 422),
    (errors.InvalidInput, 422),
    (errors.ImportFormatError, 422),
    (errors.LLMError, 503),
    (errors.EmbedderError, 503),
    (errors.IndexError_, 503),
    (errors.CorruptFileError, 503),
    (errors.ConfigError, 500),
    (errors.KronikaError, 400),
)
"""The first class an error is an instance of decides the HTTP status (and the MCP
error); the same table for every route and tool."""


def status_for(exc: errors.KronikaError) -> int:
    for cls, status in STATUS:
        if isinstance(exc, cls):
            return status
    return 400


def no_agent(agent: str, usable: list[str]) -> errors.UnknownAgent:
    """What a key is told about an agent it may not see: the same as for none at all,
    with the agents it may use (what ``GET /v1/agents`` lists for it)."""
    return errors.UnknownAgent(agent, usable, for_key=True)


@dataclass(frozen=True, slots=True)
class Caller:
    """One authenticated request: its key and the user and channel it reads for
    (:func:`caller_for` builds it from a request)."""

    key: ApiKey
    user: str | None = None
    channel: str | None = None
    teams: tuple[str, ...] | None = None
    """The reader's teams; ``None``: those the config gives the user."""
    context: ReadingContext = field(init=False, repr=False, compare=False)
    """What every read made for this caller goes through (built once, from the above)."""

    def __post_init__(self) -> None:
        whole = self.key.role is Role.ADMIN and self.unrestricted
        context = ReadingContext(
            self.key.tenant,
            self.user,
            self.channel,
            self.teams,
            agent=self.key.agent,
            owner=whole and not (self.user or self.channel),
        )
        object.__setattr__(self, "context", context)

    def check_channel(self, channel: str | None) -> None:
        """:class:`Forbidden` when a key bound to channels names another one (in a
        write's body, say)."""
        if channel is not None and self.key.bound and channel not in self.key.channels:
            raise Forbidden(_outside(self.key, channel))

    @property
    def tenant(self) -> str:
        return self.key.tenant

    @property
    def source_agent(self) -> str:
        """Who the write path is told is writing."""
        if self.key.role is Role.AGENT and self.key.agent:
            return self.key.agent
        return USER

    @property
    def unrestricted(self) -> bool:
        """An admin or reader key of the whole tenant (no agent named)."""
        return self.key.agent is None and self.key.role is not Role.AGENT

    @property
    def owner(self) -> bool:
        """The tenant's owner: an admin key of the whole tenant reading for no user or
        channel. It reads the tenant's records whole (a backup export, the audit trail,
        every item's count); anyone else reads them as their reader."""
        return self.context.owner

    def memory(self, memories: dict[str, Memory], agent: str | None = None) -> Memory:
        found = memories.get(self.key.tenant)
        if found is None:  # a tenant this server does not hold has no agents
            raise no_agent(agent or "", [])
        return found

    def _ours(self, memory: Memory, agent: str) -> bool:
        """``agent`` exists and belongs to this key's tenant."""
        found = memory.workspace.has_agent(agent)
        return found and memory.workspace.tenant_of(agent) == self.key.tenant

    def visible_agents(self, memory: Memory) -> list[str]:
        return self.context.agents(memory)

    def readable(self, memories: dict[str, Memory], agent: str) -> Memory:
        """The tenant's memory when this key may read ``agent`` (which exists)."""
        memory = self.memory(memories, agent)
        if self.key.agent is not None and agent != self.key.agent:
            raise no_agent(agent, self.visible_agents(memory))
        if not self._ours(memory, agent):
            raise no_agent(agent, self.visible_agents(memory))
        return memory

    def writable(self, memories: dict[str, Memory], agent: str) -> Memory:
        """The tenant's memory when this key may write to ``agent`` (which exists)."""
        if self.key.role is Role.READER:
            raise Forbidden("this API key may only read")
        memory = self.memory(memories, agent)
        own = self.key.agent
        if own is not None and agent != own:
            granted = self.key.role is Role.AGENT and own in memory.settings.policy(agent).writers
            if not granted or not self._ours(memory, agent):
                raise no_agent(agent, self.visible_agents(memory))
        if not self._ours(memory, agent):
            raise no_agent(agent, self.visible_agents(memory))
        return memory

    def require_admin(self, what: str) -> None:
        if self.key.role is not Role.ADMIN:
            raise Forbidden(f"{what} needs an admin key")

    def require_unrestricted(self, what: str) -> None:
        if not self.unrestricted:
            raise Forbidden(f"{what} needs a key of the whole tenant (one that names no agent)")


def _outside(key: ApiKey, channel: str) -> str:
    allowed = ", ".join(key.channels) or "none"
    return f"this API key is bound to user {key.user!r} in channels {allowed}; not {channel!r}"


def caller_for(key: ApiKey, user: str | None, channel: str | None) -> Caller:
    """The caller a request with ``key`` and the ``X-Kronika-User`` and
    ``X-Kronika-Channel`` headers ``user`` and ``channel`` is.

    An unbound key (a trusted integration's) acts for whoever the headers name. A key
    bound to a user acts as that user: a header naming another user is refused (403);
    it may name one of the key's channels (without one: its only channel, if it has
    exactly one, else none), never another."""
    user = user[:200] if user else None
    channel = channel[:200] if channel else None
    if not key.bound:
        return Caller(key, user=user, channel=channel)
    if user is not None and user != key.user:
        raise Forbidden(f"this API key is bound to user {key.user!r}; it cannot act as {user!r}")
    if channel is None and len(key.channels) == 1:
        channel = key.channels[0]
    if channel is not None and channel not in key.channels:
        raise Forbidden(_outside(key, channel))
    return Caller(key, user=key.user, channel=channel, teams=key.teams)


def reading(memory: Memory, caller: Caller) -> Memory:
    """``memory`` as ``caller`` reads and writes it: every call of the view takes the
    reading context of the key's tenant and the request's user and channel (and the
    teams the config gives that user), so recall, lists, the Brain, prompt blocks and
    exports hold only what that reader may see (:meth:`ReadingContext.view`)."""
    return caller.context.view(memory)
