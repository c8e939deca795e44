"""The resources: ``kronika://agents/{agent}/brain`` (the Brain as the agent sees it)
and ``kronika://agents/{agent}/wake`` (identity, the ``<memory>`` block, the Active
Context: what the agent wakes with)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from kronika.core.context import system_prompt
from kronika.server.mcp.common import Served, run


def register(server: MCPServer, served: Served) -> None:
    @server.resource("kronika://agents/{agent}/brain", mime_type="text/markdown")
    async def brain(agent: str, ctx: Context) -> str:
        """The agent's Brain (brain.md) as the agent sees it."""
        who = served.caller(ctx)
        found = await run(lambda: served.service.brain(who, agent), ResourceError)
        return str(found["brain"])

    @server.resource("kronika://agents/{agent}/wake", mime_type="text/markdown")
    async def wake(agent: str, ctx: Context) -> str:
        """What the agent wakes with: identity, the <memory> block, the Active Context."""
        who = served.caller(ctx)
        found = await run(lambda: served.service.wake(who, agent), ResourceError)
        return system_prompt(
            identity=found["identity"],
            memory_block=found["memory_block"],
            active_context=found["active_context"],
            recalled=(),
            lessons=(),
        )
