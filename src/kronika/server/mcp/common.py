"""What every MCP tool and resource shares: who calls, which agent, and running a
:class:`~kronika.server.service.Service` call off the event loop with kronika's errors
turned into MCP errors (the class and the HTTP status the REST API would answer)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from kronika import errors
from kronika.server.access import Caller, Unauthenticated, status_for
from kronika.server.service import Service

CALLER = "kronika.caller"
"""Where the HTTP server leaves the authenticated caller in the ASGI scope."""
T = TypeVar("T")


@dataclass(frozen=True)
class Served:
    """The service the tools call, and the caller of requests that carry no key
    (stdio: the local user's agent; ``None`` over HTTP, where every request has one)."""

    service: Service
    fixed: Caller | None = None

    def caller(self, ctx: Context) -> Caller:
        """The request's caller: the API key the HTTP server put on it, else the fixed one."""
        request = ctx.request_context.request
        scope = getattr(request, "scope", None)
        if isinstance(scope, dict) and isinstance(scope.get(CALLER), Caller):
            found: Caller = scope[CALLER]
            return found
        if self.fixed is not None:
            return self.fixed
        raise Unauthenticated("a valid API key is needed")

    def agent(self, caller: Caller, agent: str | None) -> str:
        """The agent named, else the caller's default agent."""
        return agent or self.service.default_agent(caller)


async def run(call: Callable[[], T], error: type[Exception] = ToolError) -> T:
    """``call()`` in a worker thread; a :class:`~kronika.errors.KronikaError` becomes
    ``error`` naming its class and status, e.g. ``InvalidInput (422): …``."""
    try:
        return await anyio.to_thread.run_sync(call)
    except errors.KronikaError as exc:
        raise error(f"{type(exc).__name__} ({status_for(exc)}): {exc}") from exc
