"""The earlier import path of the MCP server, kept for one release: use
:mod:`kronika.server.mcp`."""

from __future__ import annotations

from kronika.server.mcp import CALLER, INSTRUCTIONS, build_mcp

__all__ = ["CALLER", "INSTRUCTIONS", "build_mcp"]
