"""The one reading context: the routes and tools reach a memory only through the
service, which hands them the caller's view; the context keeps tenant-wide records
(jobs, agents, the tenant of a new agent) per tenant."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the [server] extra (fastapi, uvicorn) is not installed")

from tests.server.conftest import Served  # noqa: E402

import kronika.server  # noqa: E402
from kronika.errors import Conflict  # noqa: E402
from kronika.server.access import caller_for  # noqa: E402
from kronika.server.keys import ApiKey, Role  # noqa: E402
from kronika.workflows.context import ReadingContext  # noqa: E402

SERVER = Path(kronika.server.__file__).parent
HOLDERS = {"service.py", "access.py", "tenants.py", "run.py"}
"""The modules that hold the memories themselves: the service (which hands out views),
the access rules it asks, the tenants' map, and the process that builds them."""


def test_no_route_or_tool_reaches_a_memory_but_through_the_service() -> None:
    """A route, page or tool written tomorrow cannot read a memory unfiltered: only the
    service holds the memories (``memories``), and what it hands out is the caller's
    view (``Service.reading``) or a JSON answer made from it."""
    found = []
    for path in sorted(SERVER.rglob("*.py")):
        if path.name in HOLDERS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "memories":
                found.append(f"{path.name}:{node.lineno}")
    assert not found, f"read the memory through Service (its reading context): {found}"


@dataclass
class Record:
    tenant: str
    agent: str


def test_records_are_kept_per_tenant_and_per_bound_agent() -> None:
    records = [Record("acme", "alice"), Record("acme", "bob"), Record("globex", "alice")]
    whole = ReadingContext("acme")
    assert whole.own(records) == records[:2]
    assert ReadingContext("acme", agent="bob").own(records) == [records[1]]
    assert ReadingContext("initech").own(records) == []


def test_a_request_builds_its_context_once_from_the_key_and_headers() -> None:
    admin = ApiKey(id="a" * 12, tenant="acme", role=Role.ADMIN)
    assert caller_for(admin, None, None).context == ReadingContext("acme", owner=True)
    seen = caller_for(admin, "anna", "general").context
    assert seen == ReadingContext("acme", "anna", "general", owner=False)
    bound = ApiKey(
        id="b" * 12, tenant="acme", role=Role.READER, user="anna", channels=("dm",), teams=("x",)
    )
    assert caller_for(bound, None, None).context == ReadingContext("acme", "anna", "dm", ("x",))
    agent = ApiKey(id="c" * 12, tenant="acme", role=Role.AGENT, agent="alice")
    assert caller_for(agent, None, None).context.agent == "alice"


def test_the_context_lists_the_tenants_agents_and_admits_only_its_own(served: Served) -> None:
    acme = served.memories["acme"]
    assert ReadingContext("acme").agents(acme) == ["alice", "bob", "carol", "default"]
    assert ReadingContext("acme", agent="bob").agents(acme) == ["bob"]
    assert ReadingContext("globex").agents(acme) == []
    ReadingContext("acme").admit(acme, "newbot")  # the workspace's own tenant
    with pytest.raises(Conflict, match="tenant 'acme'"):
        ReadingContext("globex").admit(acme, "newbot")
    with pytest.raises(Conflict, match="tenant 'globex'"):
        ReadingContext("acme").admit(acme, "fresh", "globex")  # as an export declares it
    # the policies and the usage of an agent out of its reach are empty, not an error
    assert ReadingContext("globex").policies(acme, "alice") == []
    assert ReadingContext("globex").usage(acme, "alice", None) == []
