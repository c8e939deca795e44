"""The ``record_outcome`` tool: :meth:`kronika.Memory.record_outcome` (how an action
went; a failure becomes a lesson)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from kronika.server.mcp.common import Served, run


def tool(served: Served) -> Callable[..., Awaitable[dict[str, Any]]]:
    async def record_outcome(
        task: str,
        action: str,
        ctx: Context,
        ok: bool | None = None,
        reasons: list[str] | None = None,
        exit_code: int | None = None,
        stderr: str | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """Say how something you did went: `ok` true/false with `reasons`, or a command's
        `exit_code` (and `stderr`). A failure becomes a lesson that `recall` later finds
        for the same task; lessons that keep helping rise, contradicted ones retire."""
        from kronika.core.lessons import exit_code as by_exit_code

        who = served.caller(ctx)
        name = served.agent(who, agent)
        said = list(reasons or ())
        fields: dict[str, Any] = {"ok": ok, "reasons": said}
        if exit_code is not None:
            judged = by_exit_code(exit_code, stderr or "").as_dict()
            fields = {"evaluation": {**judged, "reasons": [*judged["reasons"], *said]}}
        return await run(
            lambda: served.service.outcome(who, name, task=task, action=action, **fields)
        )

    return record_outcome


def register(server: MCPServer, served: Served) -> None:
    server.add_tool(tool(served))
