"""The ``what_do_you_know`` tool: the Brain (:meth:`kronika.Memory.brain`), or with a
topic what :meth:`kronika.Memory.recall` finds about it, quoted as data."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from mcp.server.mcpserver import Context, MCPServer

from kronika.core.context import recalled_line
from kronika.core.prompt import MEMORY_NOTE, delimited, quote
from kronika.core.query import RecallQuery
from kronika.core.serialize import item_from_dict
from kronika.server.mcp.common import Served, run


def tool(served: Served) -> Callable[..., Awaitable[str]]:
    async def what_do_you_know(
        ctx: Context, topic: str | None = None, agent: str | None = None
    ) -> str:
        """Show the memory: the Brain, or with a `topic` what is remembered about it."""
        who = served.caller(ctx)
        name = served.agent(who, agent)
        if topic:
            found = await run(
                lambda: served.service.recall(who, RecallQuery(topic, agent=name, k=10))
            )
            lines = [recalled_line(item_from_dict(h["item"])) for h in found["hits"]]
            if not lines:
                return f"Nothing is remembered about {quote(topic)!r}."
            return MEMORY_NOTE + "\n\n" + delimited("recalled", lines)
        brain = await run(lambda: served.service.brain(who, name))
        return str(brain["brain"])

    return what_do_you_know


def register(server: MCPServer, served: Served) -> None:
    server.add_tool(tool(served))
