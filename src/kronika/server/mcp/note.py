"""The ``note`` tool: :meth:`kronika.Memory.note` (a typed note in today's log)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer

from kronika.server.mcp.common import Served, run


def tool(served: Served) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def note(
        text: str,
        kind: Literal["W", "B", "O", "S"],
        ctx: Context,
        confidence: float | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """Note in today's log what you learned or did, typed: W a fact about the world,
        B your own experience (first person), O an opinion with its `confidence` (0..1),
        S an observation or summary. Mention people and things as @Name."""
        who = served.caller(ctx)
        name = served.agent(who, agent)
        return await run(
            lambda: served.service.note(who, name, text=text, kind=kind, confidence=confidence)
        )

    return note


def register(server: MCPServer, served: Served) -> None:
    server.add_tool(tool(served))
