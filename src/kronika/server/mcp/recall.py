"""The ``recall`` tool: :meth:`kronika.Memory.recall`, each hit with its citation.

The tool offers an agent the few options it asks with (:data:`LEFT_OUT` names the
others of :class:`~kronika.core.query.RecallQuery` and why), and five hits by
default rather than the ``recall_k`` setting: a tool's answer fills the agent's
context."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from kronika.core.query import RecallQuery
from kronika.server.mcp.common import Served, run

LEFT_OUT: dict[str, str] = {
    "all_agents": "an agent reads its own memory",
    "mode": "the server's default (hybrid) suits every question",
    "types": "filters a person sets, not an agent's question",
    "keys": "filters a person sets, not an agent's question",
    "entities": "filters a person sets, not an agent's question",
    "speakers": "filters a person sets, not an agent's question",
    "scopes": "the API key decides what the agent may see",
    "channel": "the API key decides what the agent may see",
    "include_superseded": "`as_of` asks for what was true then",
    "budget_tokens": "`k` bounds the answer",
    "record_access": "an agent's recall is an access",
}
"""The options of :class:`~kronika.core.query.RecallQuery` the tool does not take."""


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
                who,
                RecallQuery(query, agent=name, k=k, since=since, until=until, as_of=as_of),
            )
        )

    return recall


def register(server: MCPServer, served: Served) -> None:
    server.add_tool(tool(served))
