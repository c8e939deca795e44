"""The ``forget`` tool: :meth:`kronika.Memory.forget`, answered with its receipt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from kronika.server.mcp.common import Served, run


def tool(served: Served) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def forget(
        ctx: Context,
        id: str | None = None,
        key: str | None = None,
        value: str | None = None,
        topic: str | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """Forget one item by `id`, every value of a `key`, one `value`, or what a `topic`
        names; answers with a receipt of every place touched."""
        who = served.caller(ctx)
        name = served.agent(who, agent)
        return await run(
            lambda: served.service.forget(who, name, item_id=id, key=key, value=value, topic=topic)
        )

    return forget


def register(server: MCPServer, served: Served) -> None:
    server.add_tool(tool(served))
