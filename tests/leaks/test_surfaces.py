"""The leak fuzzer: every surface, as every party, leaks nothing.

It enumerates the surfaces itself: every route of the server's ``/openapi.json``, every
MCP tool, resource and resource template the server lists, every command of the CLI's
parser. Each is looked up in :mod:`leaks.surfaces` (a surface missing there fails the
test until it is classified) and called, over real HTTP on 127.0.0.1, the MCP SDK's
client and the command line in process, as each party of the workload (three tenants
in one workspace; keys of every role, bound and unbound; users, channels and teams),
with every agent of every tenant and ids of items of every audience. No answer, error
or not, may hold a byte of a party the caller may not see: the marker of a memory it
may not read, that memory's id, another tenant's name or agent, another key's secret
or id. Then every write surface, as every context, must store what it writes for the
caller's tenant, user and channel, with the storage policy of that channel applied,
and a write aimed at what the caller may not reach changes nothing.

Runs on the Markdown workspace with SQLite and on PostgreSQL (:mod:`leaks.conftest`).
"""

from __future__ import annotations

import itertools
import json
import re
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("fastapi", reason="the [server] extra (fastapi, uvicorn) is not installed")
pytest.importorskip("mcp", reason="the [mcp] extra (the official MCP SDK) is not installed")

import httpx2  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from tests.server.conftest import Running  # noqa: E402

from kronika.cli.main import build_parser  # noqa: E402
from kronika.core.model import MemoryItem, Reader, Scope, Tier  # noqa: E402
from kronika.core.policies import parse_policies  # noqa: E402
from kronika.core.visibility import visible  # noqa: E402
from kronika.errors import NotFound  # noqa: E402
from kronika.server.app import ServerConfig, create_app  # noqa: E402
from kronika.server.keys import KeyStore  # noqa: E402
from kronika.server.service import Service  # noqa: E402
from leaks.surfaces import CLI, FUZZ, MCP_RESOURCES, MCP_TOOLS, REST, Rest  # noqa: E402
from leaks.workload import AGENTS, PRIVATE, TEAMS, Backend, markers  # noqa: E402

TENANTS = sorted(set(AGENTS.values()))
pytestmark = pytest.mark.parametrize(
    "backend", ["markdown+sqlite", "postgres"], indirect=True, scope="module"
)
"""The Markdown workspace with SQLite, and PostgreSQL: three tenants in one database
either way (``postgres-shared`` adds a neighbour's database rows; the leak suite's
other modules run on it)."""
POLICIES = """
[[policy]]
name = "no DMs in long-term memory"
dm = true
max_tier = "mid"

[[policy]]
name = "never store #hr-private"
channels = ["hr-private"]
store = false
"""

KEYS: dict[str, dict[str, Any]] = {
    **{f"{t}-admin": {"tenant": t, "role": "admin"} for t in TENANTS},
    **{f"{t}-reader": {"tenant": t, "role": "reader"} for t in TENANTS},
    "acme-bot": {"tenant": "acme", "role": "agent", "agent": "acme-bot"},
    "acme-admin-bot": {"tenant": "acme", "role": "admin", "agent": "acme-bot"},
    "acme-anna": {
        "tenant": "acme",
        "role": "admin",
        "user": "anna",
        "channels": ("general", "dm-anna-bob"),
    },
    "globex-bob": {"tenant": "globex", "role": "reader", "user": "bob", "channels": ("random",)},
}


@dataclass(frozen=True, slots=True)
class Party:
    """A caller: a key and the user and channel its requests name."""

    key: str
    user: str | None = None
    channel: str | None = None

    @property
    def spec(self) -> dict[str, Any]:
        return KEYS[self.key]

    @property
    def tenant(self) -> str:
        return str(self.spec["tenant"])

    @property
    def who(self) -> tuple[str | None, str | None]:
        """The user and channel it reads as (a bound key's own when it names none)."""
        user = self.spec.get("user") or self.user
        channels = self.spec.get("channels", ())
        channel = self.channel or (channels[0] if len(channels) == 1 else None)
        return user, channel

    @property
    def owner(self) -> bool:
        spec = self.spec
        whole = spec["role"] == "admin" and not spec.get("agent") and not spec.get("user")
        return whole and self.who == (None, None)

    def reader(self) -> Reader:
        user, channel = self.who
        return Reader(self.tenant, user, channel, tuple(t for t, m in TEAMS.items() if user in m))

    def agents(self) -> set[str]:
        mine = {a for a, t in AGENTS.items() if t == self.tenant}
        return {self.spec["agent"]} & mine if self.spec.get("agent") else mine

    def headers(self) -> dict[str, str]:
        found = {}
        if self.user:
            found["X-Kronika-User"] = self.user
        if self.channel:
            found["X-Kronika-Channel"] = self.channel
        return found

    def __str__(self) -> str:
        return f"{self.key}[{self.user or '_'}@{self.channel or '_'}]"


PARTIES = [
    *(Party(f"{t}-admin") for t in TENANTS),
    Party("acme-admin", "anna"),
    Party("acme-reader", "bob", "dm-anna-bob"),
    Party("acme-reader", "carl", "general"),
    Party("globex-admin", "bob", "general"),
    Party("globex-reader", "anna", "random"),
    Party("default-reader", "carl", "dm-anna-bob"),
    Party("acme-bot", "anna", "general"),
    Party("acme-admin-bot", "bob"),
    Party("acme-anna", None, "dm-anna-bob"),
    Party("globex-bob"),
]
"""The tenants' owners, and readers of each tenant with users, channels and teams."""


@dataclass
class Truth:
    """What each party may see, from the owner's unrestricted listing."""

    items: list[MemoryItem]
    proposals: list[tuple[str, MemoryItem]]  # (marker, an item for its audience)
    neighbour: set[str]
    tokens: dict[str, tuple[str, str]]  # key name -> (key id, secret)
    records: dict[str, set[str]]  # tenant -> ids of its jobs and proposals
    _forbidden: dict[Party, tuple[set[str], set[str], set[str], set[str]]] = field(
        default_factory=dict
    )

    def allowed(self, party: Party) -> list[MemoryItem]:
        reader, agents = party.reader(), party.agents()
        return [
            i
            for i in self.items
            if i.agent in agents and (party.owner or visible(i, reader))
            and i.tenant == party.tenant
        ]  # fmt: skip

    def forbidden(self, party: Party) -> tuple[set[str], set[str], set[str], set[str]]:
        """The markers, item ids and names the party may not be shown, and the names it
        may be (a channel ``dm-anna-bob`` it sees names a user it may not see)."""
        if party not in self._forbidden:
            self._forbidden[party] = self._find_forbidden(party)
        return self._forbidden[party]

    def _find_forbidden(self, party: Party) -> tuple[set[str], set[str], set[str], set[str]]:
        allowed = self.allowed(party)
        seen = {m for i in allowed for m in markers(i.content)}
        ids = {i.id for i in allowed}
        hidden = {m for i in self.items if i.id not in ids for m in markers(i.content)}
        reader, agents = party.reader(), party.agents()
        for marker, shape in self.proposals:
            if not (shape.agent in agents and (party.owner or visible(shape, reader))):
                hidden.add(marker)
        hidden = (hidden - seen) | self.neighbour
        hidden_ids = {i.id for i in self.items if i.id not in ids}
        names = {t for t in TENANTS if t not in (party.tenant, "default")}
        names |= {a for a, t in AGENTS.items() if t != party.tenant and a != "default"}
        names |= {a for a in AGENTS if a not in party.agents() and a != "default"}
        names |= {part for k, pair in self.tokens.items() if k != party.key for part in pair}
        names |= {i for t, ids in self.records.items() if t != party.tenant for i in ids}
        # the users, channels and teams of memories it may not read, but for those it
        # is, is in or may read of
        user, channel = party.who
        shown = {user, channel, *reader.teams} | {n for i in allowed for n in _audience(i)}
        every = {n for i in self.items for n in _audience(i)}
        every |= {n for _, shape in self.proposals for n in _audience(shape)}
        names |= {n for n in every - shown if n is not None}
        return hidden, hidden_ids, names, {n for n in shown if n is not None}


def _audience(item: MemoryItem) -> tuple[str | None, ...]:
    return item.user, item.channel, item.team


@dataclass
class Fuzz:
    url: str
    keys: dict[str, str]
    truth: Truth
    backend: Backend
    service: Service
    samples: dict[str, list[str]]
    tried: dict[str, int]
    findings: list[str]

    def restart(self) -> None:
        """Count the calls and findings of one test from nothing."""
        self.tried.clear()
        self.findings.clear()

    def check(self, surface: str, party: Party, sent: str, text: str) -> None:
        """Nothing in ``text`` (an answer) that ``party`` may not see, beyond what it
        sent itself (``sent``: its path, query and body)."""
        self.tried[surface] = self.tried.get(surface, 0) + 1
        hidden, hidden_ids, names, shown = self.truth.forbidden(party)
        leaked = (markers(text) & hidden) | {i for i in hidden_ids if i in text and i not in sent}
        # what it named itself (echoed back) or may see, unless part of the name looked for
        echoed = {n for n in names if n in sent} | {n for n in shown if n in text}
        for name in names:
            if name not in text:
                continue
            scrubbed = text
            for other in sorted((e for e in echoed if e not in name), key=len, reverse=True):
                scrubbed = scrubbed.replace(other, "")
            if name not in echoed and re.search(rf"\b{re.escape(name)}\b", scrubbed):
                leaked.add(name)
        if leaked:
            self.findings.append(f"{surface} as {party}: {sorted(leaked)[:5]}")

    def call(self, party: Party, method: str, path: str, body: Any = None) -> tuple[int, str]:
        headers = {"Authorization": f"Bearer {self.keys[party.key]}", **party.headers()}
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.status, answer.read().decode("latin-1")
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, exc.read().decode("latin-1")


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def fuzz(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzz]:
    memory = backend.memory
    raw = tomllib.loads(POLICIES)
    memory.use_storage_policies(parse_policies(raw["policy"], None, text=POLICIES))
    with (memory.settings.home / "kronika.toml").open("a", encoding="utf-8") as config:
        config.write(POLICIES)  # for the command line, which reads the file
    store = KeyStore(Path(tmp_path_factory.mktemp("keys")) / "keys.sqlite")
    made = {name: store.create(**spec) for name, spec in KEYS.items()}
    keys = {name: new.token for name, new in made.items()}
    items = [i for a in AGENTS for i in memory.items(agent=a, include_superseded=True)]
    shapes = {w.token: w.owners for w in backend.workload.proposed}
    shape = replace(items[0], agent="acme-bot", tenant="acme")
    proposals = [
        (marker, shapes[marker].apply(shape))
        for proposal in memory.proposals("acme-bot")
        for marker in markers(f"{proposal.summary} {proposal.change}")
    ]
    neighbour = set()
    if backend.neighbour is not None:
        theirs = backend.neighbour
        neighbour = {
            m for i in theirs.items(agent="default", limit=10_000) for m in markers(i.content)
        }
    tokens = {n: (new.key.id, new.token) for n, new in made.items()}
    records: dict[str, set[str]] = {t: set() for t in TENANTS}
    records["acme"] |= {p.id for p in memory.proposals("acme-bot")}
    truth = Truth(items, proposals, neighbour, tokens, records)
    service = Service(dict.fromkeys(TENANTS, memory))
    samples = _samples(items, backend, memory)
    try:
        with Running(create_app(service, store, ServerConfig(rate_per_second=0))) as url:
            fuzz = Fuzz(url, keys, truth, backend, service, samples, {}, [])
            for tenant in TENANTS:  # a job of each tenant, for /v1/jobs/{job_id}
                agent = next(a for a, t in AGENTS.items() if t == tenant)
                status, text = fuzz.call(
                    Party(f"{tenant}-admin"), "POST", f"/v1/agents/{agent}/jobs/summarize", {}
                )
                assert status == 202, text
                samples["job_id"].append(json.loads(text)["id"])
                records[tenant].add(json.loads(text)["id"])
            service.jobs.wait(30)
            yield fuzz
    finally:
        service.jobs.wait(10)
        service.jobs.close()  # the memory is the backend's: closed by its fixture
        store.close()


def _samples(items: list[MemoryItem], backend: Backend, memory: Any) -> dict[str, list[str]]:
    """Ids that fill a path: an item of every agent and scope and of each user no party
    is, sessions (one of such a user too), a proposal."""
    picked: dict[tuple[str, str], MemoryItem] = {}
    for item in items:
        picked.setdefault((item.agent, item.scope.value), item)
    for user, _, _ in PRIVATE.values():  # and an item of each user no party is
        item = next(i for i in items if i.user == user)
        picked.setdefault((item.agent, user), item)
    sessions = [ids[0] for ids in backend.workload.session_ids.values()]
    sessions += list(backend.workload.private.values())
    proposals = [p.id for p in memory.proposals("acme-bot")][:1]
    return {
        "item_id": [i.id for i in picked.values()],
        "session_id": sessions,
        "proposal_id": proposals,
        "job_id": [],
        "name": ["Lisbon"],
        "job": ["summarize"],
    }


def _item_agent(fuzz: Fuzz, item_id: str) -> str:
    return next(i.agent for i in fuzz.truth.items if i.id == item_id)


def _fills(fuzz: Fuzz, path: str) -> Iterator[dict[str, str]]:
    """Values for a path's parameters: every agent; ids of items of every audience,
    each with its own agent and with one of another tenant."""
    names = re.findall(r"{(\w+)}", path)
    ids = [n for n in names if n != "agent"]
    if not ids:
        yield from ({"agent": a} for a in AGENTS) if names else iter([{}])
        return
    for values in itertools.product(
        *(fuzz.samples[n if n != "memory_id" else "item_id"] for n in ids)
    ):
        fill = dict(zip(ids, values, strict=True))
        if "agent" not in names:
            yield fill
            continue
        own = fill.get("item_id") or fill.get("memory_id")
        home = _item_agent(fuzz, own) if own else None
        if fill.get("session_id"):
            home = next(a for a in AGENTS if fill["session_id"].startswith(a))
        for agent in AGENTS if home is None else (home, _other(home)):
            yield {**fill, "agent": agent}


def _calls(fuzz: Fuzz, path: str, rest: Rest) -> list[dict[str, str]]:
    """Every fill of a route: its path's, or each agent (and none) that its query or
    body names."""
    if "{" in path:
        return list(_fills(fuzz, path))
    if "{agent}" in json.dumps(rest.query) + json.dumps(rest.body):
        return [{}, *({"agent": a} for a in AGENTS)]
    return [{}]


def _other(agent: str) -> str:
    return next(a for a in AGENTS if AGENTS[a] != AGENTS[agent])


def _route_paths(fuzz: Fuzz) -> list[tuple[str, str, Rest]]:
    status, text = fuzz.call(Party("acme-admin"), "GET", "/openapi.json")
    assert status == 200
    found, unclassified = [], []
    for path, operations in json.loads(text)["paths"].items():
        for method in operations:
            rest = REST.get((method.upper(), path))
            if rest is None:
                unclassified.append(f"{method.upper()} {path}")
            else:
                found.append((method.upper(), path, rest))
    assert not unclassified, f"classify these routes in tests/leaks/surfaces.py: {unclassified}"
    stale = set(REST) - {(m, p) for m, p, _ in found}
    assert not stale, f"tests/leaks/surfaces.py classifies routes that are gone: {stale}"
    return found


def _url(path: str, fill: dict[str, str], query: dict[str, str]) -> str:
    url = path.format(**fill)
    given = {k: v.format(**fill) for k, v in query.items() if "{" not in v or fill.get("agent")}
    return url + ("?" + urllib.parse.urlencode(given) if given else "")


# ---------------------------------------------------------------------- REST reads
def test_the_fuzzer_tells_a_name_the_caller_may_not_see(fuzz: Fuzz) -> None:
    """Its check can fail: another user's, channel's or team's name is a finding, the
    caller's own and those of memories it may read are not."""
    fuzz.restart()
    reader, owner = Party("acme-reader", "bob", "dm-anna-bob"), Party("acme-admin")
    said = "zofia wrote in #boardroom for falcons; bob read dm-anna-bob"
    fuzz.check("probe", owner, "", said)
    assert fuzz.findings == []  # the tenant's owner may see every name of its tenant
    fuzz.check("probe", reader, "", said)
    assert fuzz.findings == [f"probe as {reader}: ['boardroom', 'falcons', 'zofia']"]
    fuzz.check("probe", Party("globex-admin"), "", "the owner's agent, no user")
    fuzz.check("probe", Party("globex-admin"), "", "yusuf in #backroom")
    assert len(fuzz.findings) == 1  # globex's own names, to globex's owner


def test_every_route_as_every_party_leaks_nothing(fuzz: Fuzz) -> None:
    fuzz.restart()
    routes = _route_paths(fuzz)
    reads = [(m, p, r) for m, p, r in routes if r.kind == "read"]
    for method, path, rest in reads:
        for party, fill in itertools.product(PARTIES, _calls(fuzz, path, rest)):
            url = _url(path, fill, rest.query)
            sent = url + json.dumps(rest.body)
            status, text = fuzz.call(party, method, url, rest.body)
            assert status < 500, (method, url, party, text)
            fuzz.check(f"{method} {path}", party, sent, text)
    assert not fuzz.findings, "\n".join(fuzz.findings)
    assert set(fuzz.tried) == {f"{m} {p}" for m, p, _ in reads}
    _report(fuzz, "REST reads")


# ---------------------------------------------------------------------- MCP
@asynccontextmanager
async def _session(fuzz: Fuzz, party: Party) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {fuzz.keys[party.key]}", **party.headers()}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as client,
        streamable_http_client(fuzz.url + "/mcp", http_client=client) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


def _text(result: Any) -> str:
    parts = [
        getattr(c, "text", "")
        for c in getattr(result, "content", None) or getattr(result, "contents", [])
    ]
    return json.dumps(getattr(result, "structured_content", None)) + "\n".join(parts)


def test_every_mcp_tool_and_resource_as_every_party_leaks_nothing(fuzz: Fuzz) -> None:
    fuzz.restart()

    async def scenario() -> None:
        async with _session(fuzz, PARTIES[0]) as session:
            tools = {t.name for t in (await session.list_tools()).tools}
            templates = {
                t.uri_template for t in (await session.list_resource_templates()).resource_templates
            }
            fixed = {str(r.uri) for r in (await session.list_resources()).resources}
        missing = (tools - MCP_TOOLS.keys()) | ((templates | fixed) - MCP_RESOURCES.keys())
        assert not missing, f"classify these MCP surfaces in tests/leaks/surfaces.py: {missing}"
        stale = (MCP_TOOLS.keys() - tools) | (MCP_RESOURCES.keys() - templates - fixed)
        assert not stale, f"tests/leaks/surfaces.py classifies MCP surfaces that are gone: {stale}"
        for party in PARTIES:
            async with _session(fuzz, party) as session:
                for name in sorted(tools):
                    tool = MCP_TOOLS[name]
                    if tool.kind != "read":
                        continue
                    for agent in AGENTS:
                        arguments = {**tool.arguments, "agent": agent}
                        result = await session.call_tool(name, arguments)
                        fuzz.check(f"mcp {name}", party, json.dumps(arguments), _text(result))
                    if name == "what_do_you_know":
                        result = await session.call_tool(name, {"topic": "marmalade"})
                        fuzz.check(f"mcp {name}", party, "", _text(result))
                for template in sorted(templates | fixed):
                    for agent in AGENTS:
                        uri = template.replace("{agent}", agent)
                        try:
                            found = await session.read_resource(uri)
                            text = _text(found)
                        except Exception as exc:  # an error answer: its message is checked
                            text = str(exc)
                        fuzz.check(f"mcp {template}", party, uri, text)

    anyio.run(scenario)
    assert not fuzz.findings, "\n".join(fuzz.findings)
    _report(fuzz, "MCP")


# ---------------------------------------------------------------------- CLI
def _cli_commands() -> dict[str, Any]:
    """Every command by its whole name: ``recall``, ``proposals approve``…"""
    import argparse

    found: dict[str, Any] = {}

    def walk(parser: Any, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    grouped = any(isinstance(a, argparse._SubParsersAction) for a in sub._actions)
                    if grouped:
                        walk(sub, f"{path}{name} ")
                    else:
                        found[f"{path}{name}"] = sub

    walk(build_parser(), "")
    return found


CLI_PARTIES = list({(p.tenant, *p.who): p for p in PARTIES}.values())
"""Every party as the command line names it (a tenant, user and channel: keys are the
server's), each once."""


def test_every_cli_read_command_as_every_reading_context_leaks_nothing(
    fuzz: Fuzz, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every read command as every party, for its own tenant's agent or another's
    (taken in turn: both for every command), with ids of items of every audience in
    turn; the owner's commands refuse the reading context, saying why."""
    from kronika.cli import main

    fuzz.restart()
    commands = _cli_commands()
    missing = set(commands) - set(CLI)
    assert not missing, f"classify these commands in tests/leaks/surfaces.py: {sorted(missing)}"
    assert not set(CLI) - set(commands), set(CLI) - set(commands)
    for name, parser in commands.items():  # a command that reads for a reader says so
        options = {o for a in parser._actions for o in a.option_strings}
        if CLI[name].kind in ("read", "write", "owner"):
            assert {"--tenant", "--user", "--channel", "--team"} <= options, name
    home = _cli_env(fuzz, monkeypatch)
    items = itertools.cycle(fuzz.samples["item_id"])
    turn = itertools.count()
    for name, command in sorted(CLI.items()):
        if command.kind not in ("read", "owner"):
            continue
        for party, argv in itertools.product(CLI_PARTIES, command.argvs()):
            own = min(party.agents())
            agent = own if next(turn) % 2 == 0 else _other(own)
            filled = [a.replace("{item_id}", next(items)) for a in argv]
            args = [*filled, "--agent", agent, *_context(party)]
            code = main([*args, "--home", home, "--json"])
            out = capsys.readouterr()
            assert "Traceback" not in out.err, out.err
            fuzz.check(f"kronika {name}", party, " ".join(args), out.out + out.err)
            if command.kind == "owner":  # refused before the workspace is opened
                assert code == 2 and out.out == "", (args, out)
                assert f"`kronika {name}` reads the whole workspace as its owner" in out.err
            else:
                assert code in (0, 4, 5), (args, out.err)  # 4, 5: no such agent or item
    assert not fuzz.findings, "\n".join(fuzz.findings)
    _report(fuzz, "CLI", len(CLI_PARTIES))


def _context(party: Party) -> list[str]:
    """The reading-context options of ``party`` on the command line."""
    user, channel = party.who
    found = ["--tenant", party.tenant]
    found += ["--user", user] if user else []
    return found + (["--channel", channel] if channel else [])


# ---------------------------------------------------------------------- writes
def _stored(fuzz: Fuzz, token: str) -> list[MemoryItem]:
    """The items of any agent that hold ``token`` (the owner's unrestricted search)."""
    memory, found = fuzz.backend.memory, []
    for agent in AGENTS:
        result = memory.recall(
            token, agent=agent, mode="lexical", k=50, include_superseded=True, record_access=False
        )
        found += [hit.item for hit in result.hits if token in hit.item.content]
    return found


def _current(fuzz: Fuzz, item_id: str) -> MemoryItem | None:
    """The item as it is now (a job may have rewritten it), or None when it is gone."""
    try:
        return fuzz.backend.memory.get(item_id, agent=_item_agent(fuzz, item_id))
    except NotFound:
        return None


def _expect(fuzz: Fuzz, surface: str, party: Party, agent: str, token: str, answer: str) -> None:
    """What a write as ``party`` to ``agent`` stored: nothing when the agent is out of
    its reach or its channel is never stored; else items for its tenant, user and
    channel, kept out of long-term memory when said in a DM."""
    fuzz.tried[f"write {surface}"] = fuzz.tried.get(f"write {surface}", 0) + 1
    stored = _stored(fuzz, token)
    user, channel = party.who
    reachable = agent in party.agents() and party.spec["role"] != "reader"
    if not reachable or channel == "hr-private":
        if stored:
            fuzz.findings.append(f"{surface} as {party} to {agent} stored {stored[0].id}")
        return
    if not stored:  # waiting for approval, or a session of another audience
        waiting = fuzz.backend.memory.proposals(agent)
        proposed = any(token in f"{p.summary} {p.change}" for p in waiting)
        assert proposed or "a session of its own" in answer, (surface, party, agent, answer)
        return
    for item in stored:
        want_scope = Scope.CHANNEL if channel else Scope.PERSONAL
        got = (item.tenant, item.agent, item.user, item.channel, item.scope)
        if got != (party.tenant, agent, user, channel, want_scope):
            fuzz.findings.append(f"{surface} as {party} stored {got}")
        if channel and channel.startswith("dm-") and item.tier is Tier.LONG:
            fuzz.findings.append(f"{surface} as {party}: a DM stored in long-term memory")


WRITERS = [
    Party("acme-admin", "anna", "general"),
    Party("acme-admin", "bob", "dm-anna-bob"),
    Party("acme-admin", "carl", "hr-private"),
    Party("acme-bot", "anna"),
    Party("acme-reader", "bob", "general"),
    Party("globex-admin", "carl", "general"),
    Party("default-admin", "anna", "dm-anna-bob"),
    Party("acme-anna", None, "dm-anna-bob"),
]


def test_every_write_surface_stores_for_its_caller_and_nothing_out_of_reach(
    fuzz: Fuzz, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fuzz.restart()
    counter = itertools.count()
    routes = [(m, p, r) for m, p, r in _route_paths(fuzz) if r.kind == "write"]
    routes.sort(key=lambda route: not route[2].audience)  # the stores first, then the rest
    for method, path, rest in routes:
        for party in WRITERS:
            fills = _calls(fuzz, path, rest)
            if "{session_id}" in path:  # a new session of each agent, too
                fills += [{"agent": a, "session_id": f"fuzz-{next(counter)}"} for a in AGENTS]
            for fill in fills:
                target = fill.get("item_id") or fill.get("memory_id")
                now = _current(fuzz, target) if target else None
                if now is not None and _sees(party, now):
                    continue  # only what it may not see
                token = f"{FUZZ}{next(counter):05d}"
                given = json.dumps(rest.body).replace(FUZZ, token)
                body = json.loads(given.replace("{agent}", fill.get("agent", "")))
                url = _url(path, fill, rest.query)
                there = method == "DELETE" and now is not None
                status, text = fuzz.call(party, method, url, body)
                assert status < 500, (method, url, party, text)
                fuzz.check(f"{method} {path}", party, url + json.dumps(body), text)
                if rest.audience:
                    _expect(fuzz, path, party, fill["agent"], token, text)
                if there:  # what its caller may not see is never forgotten
                    fuzz.tried[f"write {path}"] = fuzz.tried.get(f"write {path}", 0) + 1
                    if target and _current(fuzz, target) is None:
                        fuzz.findings.append(
                            f"{method} {url} as {party} forgot {target}: {status} {text[:300]}"
                        )
    _mcp_writes(fuzz, counter)
    _cli_writes(fuzz, counter, capsys, monkeypatch)
    assert not fuzz.findings, "\n".join(fuzz.findings)
    _report(fuzz, "writes", len(WRITERS))


def _sees(party: Party, item: MemoryItem) -> bool:
    ours = item.agent in party.agents() and item.tenant == party.tenant
    return ours and (party.owner or visible(item, party.reader()))


def _cli_writes(
    fuzz: Fuzz,
    counter: Iterator[int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CLI's write commands with each writing context's --tenant, --user and
    --channel (the person at the workspace writes: a tenant's admin)."""
    from kronika.cli import main

    home = _cli_env(fuzz, monkeypatch)
    writers = {(p.tenant, *p.who) for p in WRITERS}
    for (tenant, user, channel), (name, command) in itertools.product(
        sorted(writers, key=str), sorted(CLI.items())
    ):
        if command.kind != "write":
            continue
        party = Party(f"{tenant}-admin", user, channel)
        own = min(party.agents())
        for agent in (own, _other(own)):
            token = f"{FUZZ}{next(counter):05d}"
            argv = [a.replace(FUZZ, token) for a in command.argv]
            context = ["--tenant", tenant, *(["--user", user] if user else [])]
            context += ["--channel", channel] if channel else []
            args = [*argv, "--agent", agent, *context]
            code = main([*args, "--home", home, "--json"])
            out = capsys.readouterr()
            assert "Traceback" not in out.err, out.err
            fuzz.check(f"kronika {name}", party, " ".join(args), out.out + out.err)
            _expect(fuzz, f"kronika {name}", party, agent, token, f"{code} {out.out}")


def _cli_env(fuzz: Fuzz, monkeypatch: pytest.MonkeyPatch) -> str:
    """The environment the CLI needs for the backend's workspace; its folder."""
    memory = fuzz.backend.memory
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    if memory.settings.database_url:
        monkeypatch.setenv("KRONIKA_DATABASE_URL", memory.settings.database_url)
    return str(memory.settings.home)


def _mcp_writes(fuzz: Fuzz, counter: Iterator[int]) -> None:
    async def scenario() -> None:
        for party in WRITERS:
            async with _session(fuzz, party) as session:
                for name, tool in sorted(MCP_TOOLS.items()):
                    if tool.kind != "write":
                        continue
                    for agent in AGENTS:
                        token = f"{FUZZ}{next(counter):05d}"
                        arguments = json.loads(json.dumps(tool.arguments).replace(FUZZ, token))
                        result = await session.call_tool(name, {**arguments, "agent": agent})
                        text = _text(result)
                        fuzz.check(f"mcp {name}", party, f"{arguments} {agent}", text)
                        if tool.audience:
                            _expect(fuzz, f"mcp {name}", party, agent, token, text)

    anyio.run(scenario)


def _report(fuzz: Fuzz, what: str, parties: int = len(PARTIES)) -> None:
    """One line for the record (``pytest -s``): surfaces, calls, what was wrong."""
    calls = {k: n for k, n in fuzz.tried.items() if not k.startswith("write ")}
    stored = sum(n for k, n in fuzz.tried.items() if k.startswith("write "))
    print(
        f"{what}: {len(calls)} surfaces, {sum(calls.values())} calls as"
        f" {parties} parties, {stored} writes checked, {len(fuzz.findings)} findings"
    )
