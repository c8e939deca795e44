"""Every interface asks a recall with the options of one :class:`RecallQuery`, by the
same names and with the same defaults and bounds; each option an interface leaves out
is named, with the reason, where the interface is written."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the [server] extra is not installed")
pytest.importorskip("mcp", reason="the [mcp] extra (the official MCP SDK) is not installed")

import anyio  # noqa: E402
from tests.server.conftest import Served  # noqa: E402
from tests.server.test_mcp import http_session  # noqa: E402

from kronika import Memory  # noqa: E402
from kronika.cli import recall as cli_recall  # noqa: E402
from kronika.cli.main import build_parser  # noqa: E402
from kronika.client import Client  # noqa: E402
from kronika.core import checks  # noqa: E402
from kronika.core.query import MODES, OPTIONS, RecallQuery  # noqa: E402
from kronika.server.mcp import recall as mcp_recall  # noqa: E402
from kronika.server.schemas import RecallBody  # noqa: E402

FULL = RecallQuery(
    "what does he drink",
    agent="alice",
    all_agents=True,
    k=7,
    mode="lexical",
    since="30d",
    until="yesterday",
    as_of="2025-11-01",
    types=["fact", "episodic"],
    keys=["drink"],
    entities=["Peter"],
    speakers=["user"],
    scopes=["team"],
    channel="general",
    include_superseded=True,
    budget_tokens=500,
    record_access=False,
)
"""A query that sets every option otherwise than its default."""


def _defaults() -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(RecallQuery) if f.name != "query"}


def test_the_full_query_sets_every_option() -> None:
    assert all(getattr(FULL, name) != default for name, default in _defaults().items())


def test_the_rest_body_has_the_query_s_options_defaults_and_bounds() -> None:
    fields = RecallBody.model_fields
    # the agent is the request's path; `explain` is how the answer is shown
    assert set(fields) == set(OPTIONS) - {"agent"} | {"explain"}
    for name, default in _defaults().items():
        if name == "agent":
            continue
        body_default = fields[name].get_default(call_default_factory=True)
        assert body_default == default or (list(default) == body_default == []), name
    bounds = {m.__class__.__name__: m for m in fields["k"].metadata}
    assert (bounds["Ge"].ge, bounds["Le"].le) == (1, checks.MAX_K)
    bounds = {m.__class__.__name__: m for m in fields["budget_tokens"].metadata}
    assert (bounds["Ge"].ge, bounds["Le"].le) == (1, checks.MAX_BUDGET_TOKENS)
    assert typing.get_args(fields["mode"].annotation) == MODES


def test_the_client_s_body_is_the_rest_body_of_the_same_query() -> None:
    body = {k: v for k, v in FULL.as_json().items() if k != "agent"}
    assert RecallBody(**body).recall_query("alice") == FULL
    assert RecallBody(query="tea").recall_query("bob") == RecallQuery("tea", agent="bob")


def test_the_client_and_memory_take_every_option_by_the_query_s_names() -> None:
    for method in (Memory.recall, Client.recall):
        params = inspect.signature(method).parameters
        assert set(OPTIONS) <= set(params), method
        for name, default in _defaults().items():
            assert params[name].default == default, (method, name)


def test_the_command_line_spells_every_option_but_the_channel_filter() -> None:
    assert set(cli_recall.OPTIONS) == set(OPTIONS) - {"channel"}
    words = ["recall", "what", "does", "he", "drink", "--agent", "alice", "--all-agents"]
    words += ["--limit", "7", "--mode", "lexical", "--since", "30d", "--until", "yesterday"]
    words += ["--as-of", "2025-11-01", "--type", "fact", "--type", "episodic", "--key"]
    words += ["drink", "--entity", "Peter", "--speaker", "user", "--scope", "team"]
    words += ["--include-superseded", "--budget", "500", "--no-record"]
    spelt = {w for w in words if w.startswith("--")}
    assert spelt == set(cli_recall.OPTIONS.values()) - {"query"}
    args = build_parser().parse_args(words)
    asked = cli_recall.recall_query(" ".join(args.query), args)
    assert asked == dataclasses.replace(FULL, channel=None)


def test_the_mcp_tool_offers_the_query_s_options_or_says_why_not(served: Served) -> None:
    async def listed() -> dict[str, Any]:
        async with http_session(served, "acme-admin") as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
        schema: dict[str, Any] = tools["recall"].input_schema
        return schema

    schema = anyio.run(listed)
    offered = set(schema["properties"])
    assert offered | set(mcp_recall.LEFT_OUT) == set(OPTIONS)
    assert not offered & set(mcp_recall.LEFT_OUT)
    assert all(reason.strip() for reason in mcp_recall.LEFT_OUT.values())


def test_the_browser_asks_only_options_the_rest_body_takes() -> None:
    import kronika.server.ui as ui

    script = (Path(ui.__path__[0]) / "app.js").read_text(encoding="utf-8")
    search = script[script.index("async function search(") :]
    search = search[: search.index("\n}\n")]
    asked = set(re.findall(r"payload\.(\w+) =", search))
    literal = re.search(r"const payload = \{([^}]*)\}", search)
    assert literal is not None
    asked |= set(re.findall(r"(\w+):", literal.group(1)))
    assert {"query", "k", "since", "types", "explain", "record_access"} <= asked
    assert asked <= set(RecallBody.model_fields)
