"""A seeded workload of several tenants, teams, users and channels, in every scope.

Every memory holds a unique marker (``tok0042``), so any text a read path returns
can be checked for markers of memories its reader may not see.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime

from kronika import Memory
from kronika.core.lessons import exit_code
from kronika.core.model import Reader, Scope
from kronika.core.visibility import Audience
from kronika.engine.changes import SetActiveContext, WriteSummary
from kronika.stores.markdown.sessions import audience_fields
from kronika.testing import FrozenClock

AGENTS = {"acme-bot": "acme", "globex-bot": "globex", "default": "default"}
"""Agent -> tenant (three tenants in one workspace)."""
USERS = ("anna", "bob", "carl")
TEAMS = {
    "core": ("anna", "bob"),
    "sales": ("bob", "carl"),
    "ops": (),
    "falcons": ("zofia",),
    "otters": ("yusuf",),
    "badgers": ("wanda",),
}
PRIVATE = {
    "acme-bot": ("zofia", "boardroom", "falcons"),
    "globex-bot": ("yusuf", "backroom", "otters"),
    "default": ("wanda", "attic", "badgers"),
}
"""A user, a channel and a team each agent's memory names in a few memories no party
of the fuzzer may read (none of the parties is that user, in that channel or team):
names only that tenant's owner may be shown."""
CHANNELS = ("general", "dm-anna-bob", "random")
ENTITIES = ("Lisbon", "Kyiv", "Warsaw")
WORD = "marmalade"
"""A word every memory holds: a query for it may find any of them."""
MARKER = re.compile(r"tok\d{4}")
VOCABULARY = [
    "apple",
    "river",
    "stone",
    "cloud",
    "engine",
    "paper",
    "garden",
    "window",
    "violin",
    "harbor",
    "candle",
    "forest",
    "ladder",
    "mirror",
    "pepper",
    "rocket",
    "saddle",
    "tunnel",
    "velvet",
    "wagon",
    "yellow",
    "zebra",
    "anchor",
    "basket",
]

CONFIG = """
[agents.acme-bot]
tenant = "acme"
autonomy = 1

[agents.globex-bot]
tenant = "globex"

[teams]
core = ["anna", "bob"]
sales = ["bob", "carl"]
ops = []
falcons = ["zofia"]
otters = ["yusuf"]
badgers = ["wanda"]
"""


@dataclass(frozen=True, slots=True)
class Written:
    """One memory the workload wrote: its marker, agent and audience."""

    token: str
    agent: str
    kind: str
    owners: Audience


@dataclass
class Workload:
    written: list[Written]
    session_ids: dict[str, list[str]]
    keys: tuple[str, ...]
    middle: datetime  # between the two rounds of writes (for as-of reads)
    proposed: list[Written]  # facts acme-bot proposed to itself (autonomy 1)
    private: dict[str, str]  # agent -> a session of its user, channel and team no party is


@dataclass
class Backend:
    """What the leak tests read: a memory holding the workload, and on a database that
    two tenants share, the other tenant's memory holding its own (markers from
    :data:`NEIGHBOUR_FIRST` on)."""

    memory: Memory
    workload: Workload
    neighbour: Memory | None = None


NEIGHBOUR_FIRST = 5000


def readers() -> list[Reader]:
    """Every combination of tenant, user (or none) and channel (or none), teams from
    the config, and readers whose teams are given outright."""
    found = [
        Reader(tenant, user, channel, tuple(t for t, m in TEAMS.items() if user in m))
        for tenant in sorted(set(AGENTS.values()))
        for user in (*USERS, None)
        for channel in (*CHANNELS, None)
    ]
    found += [
        Reader("acme", "dora", None, ("ops", "core")),
        Reader("acme", None, "general", ("sales",)),
        Reader("nobody", "anna", "general", ("core",)),
    ]
    return found


def _audience(rng: random.Random) -> Audience:
    scope = rng.choice(list(Scope))
    user = rng.choice((*USERS, None))
    channel = rng.choice(CHANNELS) if scope is Scope.CHANNEL else rng.choice((*CHANNELS, None))
    team = rng.choice(tuple(TEAMS)) if scope is Scope.TEAM else None
    return Audience(scope, user, channel, team)


def _keywords(owners: Audience) -> dict[str, object]:
    return {
        "scope": owners.scope,
        "user": owners.user,
        "channel": owners.channel,
        "team": owners.team,
    }


def build(
    memory: Memory, clock: FrozenClock, *, seed: int = 21, scale: int = 1, first: int = 0
) -> Workload:
    """Write the workload into ``memory`` (about 170 memories per agent and ``scale``);
    markers count from ``first`` (another tenant's workload: the same agents, keys,
    audiences and words, told apart by the markers alone)."""
    rng = random.Random(seed)
    written: list[Written] = []
    sessions: dict[str, list[str]] = {}
    keys = tuple(f"key{n}" for n in range(6))
    counter = iter(range(first, 10_000))

    def token() -> str:  # the marker and words no other memory has
        return f"tok{next(counter):04d} " + " ".join(rng.sample(VOCABULARY, 4))

    middle = clock.now()
    for agent in AGENTS:
        memory.create_agent(agent)
    for round_ in range(2):  # two rounds, so as-of reads see a past state
        for agent in AGENTS:
            for _ in range(30 * scale):
                owners, tok = _audience(rng), token()
                key = rng.choice((*keys, None, None))
                entity = rng.choice(ENTITIES)
                memory.remember(
                    f"{tok} {WORD} near @{entity}", key=key, agent=agent, **_keywords(owners)
                )
                written.append(Written(tok[:7], agent, "fact", owners))
                clock.advance(minutes=7)
            for _ in range(20 * scale):
                owners, tok = _audience(rng), token()
                memory.note(
                    f"{tok} {WORD} noted about @{rng.choice(ENTITIES)}",
                    agent=agent,
                    **_keywords(owners),
                )
                written.append(Written(tok[:7], agent, "note", owners))
                clock.advance(minutes=5)
            for n in range(8 * scale):
                owners = _audience(rng)
                sid = f"{agent}-r{round_}-s{n}"
                sessions.setdefault(agent, []).append(sid)
                for turn in range(rng.randint(2, 5)):
                    tok = token()
                    memory.save_turn(
                        sid,
                        "user" if turn % 2 == 0 else "assistant",
                        f"{tok} {WORD} said in a session about @{rng.choice(ENTITIES)}",
                        agent=agent,
                        **_keywords(owners),  # type: ignore[arg-type]
                    )
                    written.append(Written(tok[:7], agent, "turn", owners))
                    clock.advance(minutes=1)
            for n in range(3 * scale):
                owners, tok = _audience(rng), token()
                fields = (("id", f"sum-{agent}-{round_}-{n}"), *audience_fields(owners))
                path = f"summaries/L1/L1_{round_}{n:02d}.md"
                text = f"{tok} {WORD} summarised"
                memory.memory_write(agent, "summaries", WriteSummary(path, text, fields))
                written.append(Written(tok[:7], agent, "summary", owners))
            owners, tok = _audience(rng), token()
            memory.memory_write(
                agent, "active_context", SetActiveContext(f"{tok} {WORD} lately", owners)
            )
            written.append(Written(tok[:7], agent, "context", owners))
            clock.advance(hours=1)
        if round_ == 0:
            middle = clock.now()
    proposed = []
    for _ in range(12 * scale):
        owners, tok = _audience(rng), token()
        memory.remember(
            f"{tok} {WORD} proposed", agent="acme-bot", source_agent="acme-bot", **_keywords(owners)
        )
        proposed.append(Written(tok[:7], "acme-bot", "proposal", owners))
    learner = random.Random(seed + 1)  # outcomes draw apart: the rest stays as it was
    for agent in ("globex-bot", "default"):  # acme-bot would only propose its lessons
        for _ in range(8 * scale):
            owners = _audience(learner)
            tok = f"tok{next(counter):04d} " + " ".join(learner.sample(VOCABULARY, 4))
            task = f"{tok} {WORD} task"
            failed = exit_code(1, f"error: {tok[:7]} broke")
            memory.record_outcome(task, "run it", failed, agent=agent, **_keywords(owners))
            if learner.random() < 0.5:  # the fix: a strategy too
                memory.record_outcome(
                    task, "run it twice", ok=True, agent=agent, **_keywords(owners)
                )
            written.append(Written(tok[:7], agent, "lesson", owners))
            clock.advance(minutes=3)
    for agent in AGENTS:
        ids = [i.id for i in memory.items(agent=agent, limit=10_000)]
        for _ in range(25 * scale):
            first, second = rng.sample(ids, 2)
            memory.link(first, second, "related", agent=agent)
    private: dict[str, str] = {}
    for agent, (user, channel, team) in PRIVATE.items():  # after the rest: it stays as it was
        for owners in (
            Audience(Scope.PERSONAL, user),
            Audience(Scope.CHANNEL, user, channel),
            Audience(Scope.CHANNEL, None, channel),
            Audience(Scope.TEAM, user, None, team),
        ):
            tok = f"tok{next(counter):04d}"
            memory.remember(f"{tok} {WORD} kept close", agent=agent, **_keywords(owners))
            memory.note(f"{tok}b {WORD} noted close", agent=agent, **_keywords(owners))
            written.append(Written(tok, agent, "fact", owners))
            sid = f"{agent}-p{len(written)}"
            private.setdefault(agent, sid)
            memory.save_turn(sid, "user", f"{tok}c {WORD} said close", agent=agent,
                             **_keywords(owners))  # type: ignore[arg-type]  # fmt: skip
            clock.advance(minutes=2)
    return Workload(written, sessions, keys, middle, proposed, private)


def markers(text: str) -> set[str]:
    return set(MARKER.findall(text))


def marker_of(content: str) -> str:
    found = MARKER.findall(content)
    assert found, f"no marker in {content!r}"
    return found[0]
