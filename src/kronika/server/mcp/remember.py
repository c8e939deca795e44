"""The ``remember`` tool: :meth:`kronika.Memory.remember` (a durable fact)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from kronika.server.mcp.common import Served, run


def tool(served: Served) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def remember(
        content: str,
        ctx: Context,
        key: str | None = None,
        agent: str | None = None,
        scope: str | None = None,
        channel: str | None = None,
    ) -> dict[str, Any]:
        """Remember a durable fact. With a `key` (e.g. "preferred language"), a new value
        replaces the old one, which is kept as history. Without a `scope` it is for the
        channel the request names (`X-Kronika-Channel`), else for its user alone."""
        who = served.caller(ctx)
        name = served.agent(who, agent)
        return await run(
            lambda: served.service.remember(
                who, name, content=content, key=key, scope=scope, channel=channel
            )
        )

    return remember


def register(server: MCPServer, served: Served) -> None:
    server.add_tool(tool(served))
