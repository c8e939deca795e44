"""Every surface of kronika, classified: how the leak fuzzer calls it.

The fuzzer enumerates the surfaces itself (the server's ``/openapi.json``, the MCP
server's tools, resources and resource templates, the command line's parser) and
looks each one up here. A surface that is not here fails the fuzzer until it is
classified: a route written tomorrow is called as every party before it ships.

A REST entry is ``(method, path) -> Rest``: whether it reads or writes, its query and
body, and which ids fill its path (every ``{agent}`` is each agent of every tenant,
every ``{item_id}`` a sample of items of every audience and tenant…).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from leaks.workload import WORD

Kind = Literal["read", "write", "public"]

FUZZ = "fuzzwrite"
"""A word the fuzzer's own writes hold (no marker: the truth stays the workload's)."""


@dataclass(frozen=True, slots=True)
class Rest:
    kind: Kind
    query: dict[str, str] = field(default_factory=dict)
    body: Any = None
    audience: bool = False
    """A write whose stored item the fuzzer checks: for the caller's tenant, user and
    channel (the headers), with the storage policy applied."""


RECALL = {"query": WORD, "k": 1000, "budget_tokens": 10_000_000}

REST: dict[tuple[str, str], Rest] = {
    # ---------------------------------------------------------------- reads
    ("GET", "/agents/{agent}/memory"): Rest("read", {"limit": "1000"}),
    ("GET", "/v1/me"): Rest("read"),
    ("GET", "/v1/agents"): Rest("read"),
    ("GET", "/v1/agents/{agent}/memories"): Rest(
        "read", {"limit": "1000", "include_superseded": "true"}
    ),
    ("GET", "/v1/agents/{agent}/memories/{item_id}"): Rest("read"),
    ("POST", "/v1/agents/{agent}/recall"): Rest("read", body=RECALL),
    ("GET", "/v1/agents/{agent}/history"): Rest("read", {"key": "key1"}),
    ("GET", "/v1/agents/{agent}/facts"): Rest("read", {"include_archived": "true"}),
    ("GET", "/v1/agents/{agent}/brain"): Rest("read"),
    ("GET", "/v1/agents/{agent}/wake"): Rest("read"),
    ("GET", "/v1/agents/{agent}/prompt"): Rest("read", {"query": WORD}),
    ("GET", "/v1/agents/{agent}/sessions"): Rest("read"),
    ("GET", "/v1/agents/{agent}/sessions/{session_id}"): Rest("read"),
    ("GET", "/v1/agents/{agent}/proposals"): Rest("read"),
    ("GET", "/v1/agents/{agent}/audit"): Rest("read", {"limit": "100000"}),
    ("GET", "/v1/audit"): Rest("read", {"limit": "100000"}),
    ("GET", "/v1/jobs"): Rest("read"),
    ("GET", "/v1/jobs/{job_id}"): Rest("read"),
    ("GET", "/v1/export"): Rest("read", {"agent": "{agent}"}),
    ("GET", "/v1/export/markdown"): Rest("read", {"agent": "{agent}"}),
    ("GET", "/v1/stats"): Rest("read"),
    ("GET", "/v1/agents/{agent}/lessons"): Rest("read", {"include_retired": "true"}),
    ("GET", "/v1/agents/{agent}/charts/growth"): Rest("read", {"days": "365"}),
    ("GET", "/v1/agents/{agent}/charts/recalls"): Rest("read", {"days": "365"}),
    ("GET", "/v1/agents/{agent}/recall-log"): Rest("read"),
    ("GET", "/v1/agents/{agent}/charts/llm"): Rest("read", {"days": "365"}),
    ("GET", "/v1/agents/{agent}/policies"): Rest("read"),
    ("GET", "/v1/agents/{agent}/summaries"): Rest("read"),
    ("GET", "/v1/agents/{agent}/sessions/{session_id}/summary"): Rest("read"),
    ("GET", "/v1/agents/{agent}/entities"): Rest("read"),
    ("GET", "/v1/agents/{agent}/entities/{name}"): Rest("read"),
    ("GET", "/v1/agents/{agent}/opinions"): Rest("read"),
    ("GET", "/v1/agents/{agent}/explain/{item_id}"): Rest("read"),
    # a forget that only looks: what it would forget is a read of the caller's view
    ("POST", "/v1/agents/{agent}/forget"): Rest("read", body={"topic": WORD, "dry_run": True}),
    # --------------------------------------------------------------- writes
    ("POST", "/v1/agents/{agent}/memories"): Rest(
        "write", body={"content": f"{FUZZ} remembered"}, audience=True
    ),
    ("POST", "/v1/agents/{agent}/notes"): Rest(
        "write", body={"text": f"{FUZZ} noted"}, audience=True
    ),
    ("POST", "/v1/agents/{agent}/sessions/{session_id}/turns"): Rest(
        "write", body={"speaker": "user", "content": f"{FUZZ} said"}, audience=True
    ),
    ("POST", "/v1/agents/{agent}/sessions/{session_id}/turns/batch"): Rest(
        "write",
        body={"turns": [{"speaker": "user", "content": f"{FUZZ} said in a batch"}]},
        audience=True,
    ),
    ("POST", "/v1/agents/{agent}/outcomes"): Rest(
        "write", body={"task": f"{FUZZ} task", "action": "run", "ok": True}, audience=True
    ),
    ("DELETE", "/agents/{agent}/memory/{memory_id}"): Rest("write"),
    ("DELETE", "/v1/agents/{agent}/memories/{item_id}"): Rest("write"),
    ("POST", "/agents/{agent}/memory/distill"): Rest("write", body={"days": 1}),
    ("POST", "/v1/agents/{agent}/distill"): Rest("write", body={"days": 1}),
    ("POST", "/v1/agents/{agent}/jobs/{job}"): Rest("write", body={}),
    ("POST", "/v1/jobs/{job_id}/resume"): Rest("write"),
    ("POST", "/v1/agents/{agent}/proposals/{proposal_id}/approve"): Rest("write"),
    ("POST", "/v1/agents/{agent}/proposals/{proposal_id}/reject"): Rest("write"),
    ("POST", "/v1/agents"): Rest("write", body={"name": "{agent}"}),
    ("POST", "/v1/import"): Rest("write", body={"document": {"agents": {}}}),
    ("PUT", "/v1/agents/{agent}/policies"): Rest("write", body={"toml": ""}),
    # ---------------------------------------------------------------- public
    ("GET", "/healthz"): Rest("public"),
}


@dataclass(frozen=True, slots=True)
class Tool:
    kind: Kind
    arguments: dict[str, Any]
    audience: bool = False


MCP_TOOLS: dict[str, Tool] = {
    "recall": Tool("read", {"query": WORD, "k": 1000}),
    "what_do_you_know": Tool("read", {}),
    "remember": Tool("write", {"content": f"{FUZZ} remembered"}, audience=True),
    "memory_update": Tool("write", {"key": "fuzzkey", "value": f"{FUZZ} value"}, audience=True),
    "note": Tool("write", {"text": f"{FUZZ} noted", "kind": "W"}, audience=True),
    # the earlier names of `remember` with a key and of `note`, kept for one release
    "retain": Tool("write", {"text": f"{FUZZ} retained", "kind": "W"}, audience=True),
    "record_outcome": Tool(
        "write", {"task": f"{FUZZ} task", "action": "run", "ok": True}, audience=True
    ),
    # a topic nothing holds: its receipt must name nothing, and nothing is forgotten
    "forget": Tool("write", {"topic": "zzqxnothing"}),
}
"""Every tool is also called with ``what_do_you_know``'s topic and for every agent."""

MCP_RESOURCES: dict[str, Kind] = {
    "kronika://agents/{agent}/brain": "read",
    "kronika://agents/{agent}/wake": "read",
}


@dataclass(frozen=True, slots=True)
class Command:
    kind: Literal["read", "write", "owner", "maintenance", "interactive"]
    argv: tuple[str, ...] = ()
    why: str = ""
    more: tuple[tuple[str, ...], ...] = ()
    """Further command lines of the same command (``show brain``, ``show context``…)."""

    def argvs(self) -> list[tuple[str, ...]]:
        return [self.argv, *self.more]


CLI: dict[str, Command] = {
    # reads that take a reading context (--tenant, --user, --channel, --team)
    "recall": Command("read", ("recall", WORD, "--limit", "1000")),
    "show": Command(
        "read",
        ("show", "brain"),
        more=(("show", "context"), ("show", "archive"), ("show", "prompt", "--query", WORD)),
    ),
    "list": Command("read", ("list", "--limit", "10000", "--include-superseded")),
    "get": Command("read", ("get", "{item_id}")),
    "history": Command("read", ("history", "key1")),
    "export": Command("read", ("export",)),
    "proposals list": Command("read", ("proposals", "list")),
    "links list": Command("read", ("links", "list")),
    "logs recalls": Command("read", ("logs", "recalls")),
    "lessons list": Command("read", ("lessons", "list", "--all")),
    "agents list": Command("read", ("agents", "list")),
    "logs audit": Command("read", ("logs", "audit", "--limit", "100000")),
    "logs usage": Command("read", ("logs", "usage", "--days", "3660")),
    "explain": Command("read", ("explain", "{item_id}")),
    # writes that take a reading context: their audience is checked
    "remember": Command("write", ("remember", f"{FUZZ} remembered")),
    "note": Command("write", ("note", f"{FUZZ} noted")),
    "lessons record": Command(
        "write", ("lessons", "record", f"{FUZZ} task", "--action", "run", "--ok")
    ),
    # the workspace's owner's alone: they refuse --tenant, --user, --channel and --team
    **{
        name: Command("owner", tuple(name.split()), why="reads the whole workspace as its owner")
        for name in ("index stats", "policies list", "doctor")
    },
    "jobs list": Command("owner", ("jobs", "list"), why="lists jobs as the workspace's owner"),
    "jobs run": Command("owner", ("jobs", "run", "decay"), why="runs jobs as the owner"),
    **{
        name: Command("maintenance", why="changes or rebuilds the workspace as its owner")
        for name in (
            "init",
            "forget",
            "index rebuild",
            "index sync",
            "index graph",
            "import",
            "jobs consolidate",
            "proposals approve",
            "proposals reject",
            "links add",
            "policies purge",
            "keys create",
            "keys list",
            "keys revoke",
            "agents create",
            "agents remove",
            "bench",
        )
    },
    "chat": Command("interactive", why="a terminal conversation; reads through the same view"),
    "serve": Command("interactive", why="the server: fuzzed through /openapi.json"),
    "mcp": Command("interactive", why="the MCP server: fuzzed through its tool list"),
}
