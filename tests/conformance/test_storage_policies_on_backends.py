"""Storage policies behave alike on every backend (``tests/backends.py``): a refused
write reaches no worker, a DM fact is kept as a note, and the purge job forgets what
expired for every worker reading the store of record."""

from __future__ import annotations

import tomllib

from backends import Backend
from kronika.core.model import FACT_TYPES, ItemType
from kronika.core.policies import StoragePolicies, parse_policies
from kronika.testing import FrozenClock

RULES = """
[retention]
short = 30

[[policy]]
name = "no DMs in long-term memory"
dm = true
max_tier = "mid"

[[policy]]
name = "never store hr"
channels = ["hr-*"]
store = false
"""


def _policies() -> StoragePolicies:
    data = tomllib.loads(RULES)
    return parse_policies(data.get("policy"), data.get("retention"), text=RULES)


def test_a_refused_write_reaches_no_worker(backend: Backend, clock: FrozenClock) -> None:
    memory = backend.open(clock=clock, storage=_policies())
    receipt = memory.remember("the bonus pool is 4 percent", channel="hr-pay", scope="channel")
    assert receipt.outcome == "refused" and receipt.policy is not None
    memory.remember("the office opens at nine", channel="general", scope="channel")
    other = backend.open("b", clock=clock, storage=_policies())
    assert [f.content for f in other.facts()] == ["the office opens at nine"]
    assert [e.outcome for e in other.audit() if e.action == "remember"] == [
        "refused",
        "applied",
    ]


def test_a_dm_fact_is_a_note_for_every_worker(backend: Backend, clock: FrozenClock) -> None:
    memory = backend.open(clock=clock, storage=_policies())
    receipt = memory.remember("Ann's cat is called Miso", channel="dm:ann", scope="channel")
    assert receipt.item is not None and receipt.item.type is ItemType.NOTE
    other = backend.open("b", clock=clock, storage=_policies())
    assert other.facts() == []
    assert [n.content for n in other.items(types=["note"])] == ["Ann's cat is called Miso"]


def test_purge_forgets_expired_turns_for_every_worker(backend: Backend, clock: FrozenClock) -> None:
    memory = backend.open(clock=clock, storage=_policies())
    memory.save_turn("s1", "user", "an old remark about walruses")
    memory.remember("likes walruses", key="animal")
    clock.advance(days=31)
    report = memory.purge()
    assert [p.item.type for p in report.found] == [ItemType.MESSAGE]
    assert report.forgotten == 1
    other = backend.open("b", clock=clock, storage=_policies())
    assert [it.type in FACT_TYPES for it in other.items()] == [True]
    assert other.purge().found == ()
