"""The ``recall`` tool: :meth:`kronika.Memory.recall`, each hit with its citation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from kronika.server.mcp.common import Served, run


def tool(served: Served) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def recall(
        query: str,
        ctx: Context,
        k: int = 5,
        agent: str | None = None,
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
    ) -> dict[str, Any]:
        """Find the memories that best match `query`, each with its citation. `since`,
        `until` and `as_of` take 30d, 2025-11-01, yesterday, last week…"""
        who = served.caller(ctx)
        name = served.agent(who, agent)
        return await run(
            lambda: served.service.recall(
                who, name, query, k=k, since=since, until=until, as_of=as_of
            )
        )

    return recall


def register(server: MCPServer, served: Served) -> None:
    server.add_tool(tool(served))
