"""The tools' earlier names, kept for one release: ``retain`` (now ``note``) and
``memory_update`` (now ``remember`` with a ``key``). Each behaves exactly as before and
says in its description which tool to use instead; this module and its line in
:func:`kronika.server.mcp.build_mcp` go when the release after next drops them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from kronika.server.mcp import note
from kronika.server.mcp.common import Served, run

RENAMED = {"retain": "note", "memory_update": "remember"}
"""Old tool name -> the tool to use instead."""


def memory_update(served: Served) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def memory_update(
        key: str, value: str, ctx: Context, agent: str | None = None
    ) -> dict[str, Any]:
        who = served.caller(ctx)
        name = served.agent(who, agent)
        return await run(lambda: served.service.remember(who, name, key=key, value=value))

    return memory_update


def register(server: MCPServer, served: Served) -> None:
    retain = note.tool(served)
    server.add_tool(
        retain,
        name="retain",
        description="Deprecated, use `note` (the same arguments). " + _doc(retain),
    )
    server.add_tool(
        memory_update(served),
        description="Deprecated, use `remember` with `content` and `key`. Sets the value"
        " of a fact key; the previous value is kept as history.",
    )


def _doc(fn: Callable[..., Any]) -> str:
    return " ".join((fn.__doc__ or "").split())
