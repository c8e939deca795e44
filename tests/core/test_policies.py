"""Storage policies decide keep / shorten / refuse / expiry the way docs/policies.md says."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kronika.core.model import Scope, Tier
from kronika.core.policies import (
    Keep,
    Refuse,
    Shorten,
    StoragePolicies,
    StorageRule,
    Subject,
    decide,
    parse_dm_channels,
    parse_policies,
)
from kronika.errors import ConfigError

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _policies(text: str) -> StoragePolicies:
    data = tomllib.loads(text)
    return parse_policies(data.get("policy"), data.get("retention"), text=text)


def _subject(tier: Tier = Tier.LONG, channel: str | None = None, **kw: object) -> Subject:
    fields: dict[str, object] = {"tenant": "default", "agent": "default", "created_at": AT}
    fields.update(kw)
    return Subject(tier=tier, channel=channel, **fields)  # type: ignore[arg-type]


EXAMPLE = """
[retention]
short = 30
mid = 365

[[policy]]
name = "no DMs in long-term memory"
dm = true
max_tier = "mid"

[[policy]]
name = "never store hr"
channels = ["hr-*"]
store = false

[[policy]]
name = "acme keeps DMs a week"
tenants = "acme"
dm = true
retention_days = 7
"""


def test_a_dm_fact_is_kept_only_as_mid_term_memory_and_expires_with_that_tier() -> None:
    decision = decide(_policies(EXAMPLE), _subject(Tier.LONG, "dm:alice"))
    assert isinstance(decision, Shorten)
    assert decision.tier is Tier.MID
    assert decision.expires_at == AT + timedelta(days=365)
    assert "no DMs in long-term memory" in decision.reason


def test_a_never_stored_channel_is_refused_whatever_its_tier() -> None:
    for tier in Tier:
        decision = decide(_policies(EXAMPLE), _subject(tier, "hr-private"))
        assert isinstance(decision, Refuse)
        assert "never store hr" in decision.reason and "hr-private" in decision.reason


def test_retention_days_per_tier_and_the_shortest_matching_rule_wins() -> None:
    policies = _policies(EXAMPLE)
    assert decide(policies, _subject(Tier.SHORT)) == Keep(
        AT + timedelta(days=30), ("[retention] short = 30",)
    )
    assert decide(policies, _subject(Tier.LONG)) == Keep(None)
    acme_dm = decide(policies, _subject(Tier.MID, "dm-bob", tenant="acme"))
    assert isinstance(acme_dm, Keep) and acme_dm.expires_at == AT + timedelta(days=7)
    other_dm = decide(policies, _subject(Tier.MID, "dm-bob", tenant="other"))
    assert isinstance(other_dm, Keep) and other_dm.expires_at == AT + timedelta(days=365)


def test_what_a_dm_is_comes_from_the_dm_channels_patterns() -> None:
    policies = _policies(EXAMPLE)
    assert isinstance(decide(policies, _subject(Tier.LONG, "dm:alice")), Shorten)
    assert isinstance(decide(policies, _subject(Tier.LONG, "general")), Keep)
    assert isinstance(decide(policies, _subject(Tier.LONG, None)), Keep)
    own = StoragePolicies(policies.rules, policies.retention, parse_dm_channels("@*, private-*"))
    assert isinstance(decide(own, _subject(Tier.LONG, "@alice")), Shorten)
    assert isinstance(decide(own, _subject(Tier.LONG, "dm:alice")), Keep)


def test_a_rule_about_the_shorter_tier_applies_after_shortening() -> None:
    policies = _policies(
        """
[[policy]]
name = "DMs mid at most"
dm = true
max_tier = "mid"

[[policy]]
name = "no mid-term DMs"
dm = true
tiers = ["mid"]
store = false
"""
    )
    decision = decide(policies, _subject(Tier.LONG, "dm:x"))
    assert isinstance(decision, Refuse) and "no mid-term DMs" in decision.reason


def test_selectors_for_agent_user_and_scope() -> None:
    policies = _policies(
        """
[[policy]]
name = "scratch keeps nothing long"
agents = ["scratch*"]
users = ["guest-*"]
scopes = ["personal"]
max_tier = "short"
"""
    )
    hit = _subject(Tier.MID, agent="scratchpad", user="guest-1")
    assert isinstance(decide(policies, hit), Shorten)
    for miss in (
        _subject(Tier.MID, agent="main", user="guest-1"),
        _subject(Tier.MID, agent="scratch", user=None),
        _subject(Tier.MID, agent="scratch", user="guest-1", scope=Scope.TEAM),
        _subject(Tier.SHORT, agent="scratch", user="guest-1"),
    ):
        assert isinstance(decide(policies, miss), Keep), miss


_RULES = st.lists(
    st.builds(
        StorageRule,
        name=st.sampled_from(["a", "b", "c", "d"]),
        channels=st.sampled_from([(), ("dm:*",), ("ops",)]),
        tiers=st.sampled_from([(), (Tier.SHORT,), (Tier.MID, Tier.LONG)]),
        dm=st.sampled_from([None, True, False]),
        store=st.booleans(),
        max_tier=st.sampled_from([None, Tier.SHORT, Tier.MID]),
        retention_days=st.sampled_from([None, 1, 30, 400]),
    ),
    max_size=5,
)
_SUBJECTS = st.builds(
    _subject,
    tier=st.sampled_from(list(Tier)),
    channel=st.sampled_from([None, "dm:alice", "ops", "general"]),
)


@given(_RULES, _SUBJECTS, st.randoms())
def test_the_order_of_the_rules_never_matters(
    rules: list[StorageRule], subject: Subject, rnd: object
) -> None:
    shuffled = list(rules)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    a = decide(StoragePolicies(tuple(rules)), subject)
    b = decide(StoragePolicies(tuple(shuffled)), subject)
    assert type(a) is type(b)
    if isinstance(a, Keep | Shorten) and isinstance(b, Keep | Shorten):
        assert a.expires_at == b.expires_at
    if isinstance(a, Shorten) and isinstance(b, Shorten):
        assert a.tier == b.tier


@given(_RULES, _RULES, _SUBJECTS)
def test_adding_rules_never_keeps_more(
    rules: list[StorageRule], more: list[StorageRule], subject: Subject
) -> None:
    """Any rule only narrows what is stored: refusal stays refusal, a tier never grows,
    an expiry never moves later."""
    before = decide(StoragePolicies(tuple(rules)), subject)
    after = decide(StoragePolicies(tuple(rules + more)), subject)
    if isinstance(before, Refuse):
        assert isinstance(after, Refuse)
        return
    if isinstance(after, Refuse):
        return
    tier_before = before.tier if isinstance(before, Shorten) else subject.tier
    tier_after = after.tier if isinstance(after, Shorten) else subject.tier
    order = list(Tier)
    assert order.index(tier_after) <= order.index(tier_before)
    if before.expires_at is not None:
        assert after.expires_at is not None and after.expires_at <= before.expires_at


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('[[policy]]\nname = "x"\ndm = true\nmax_tier = "long"\n', 4, "max_tier must be"),
        ('[[policy]]\nname = "x"\nretention_days = 0\n', 3, "retention_days must be"),
        ('[[policy]]\nname = "x"\nretention_days = 1.5\n', 3, "whole number"),
        ('[[policy]]\nname = "x"\nchanels = ["a"]\nstore = false\n', 3, "no setting 'chanels'"),
        ('[[policy]]\nname = "x"\nscopes = ["private"]\nstore = false\n', 3, "scopes must be"),
        ('[[policy]]\nname = "x"\nchannels = []\nstore = false\n', 3, "list of texts"),
        ('[[policy]]\nname = "x"\ndm = true\n', 1, "does nothing"),
        ('[[policy]]\nname = "x"\nstore = false\nretention_days = 3\n', 3, "never stores"),
        ("[retention]\nshort = 1\nforever = 3\n", 3, "no tier 'forever'"),
        ("[retention]\nlong = -1\n", 2, "from 0 to"),
        ("retention = 5\n", 1, "table of days"),
        ('policy = "x"\n', 1, "[[policy]] table"),
        (
            '[[policy]]\nname = "x"\nstore = false\n\n[[policy]]\nname = "x"\nstore = false\n',
            6,
            "two policies are named 'x'",
        ),
    ],
)
def test_a_bad_policy_names_its_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _policies(text)
    message = str(caught.value)
    assert f"kronika.toml line {line}:" in message
    assert words in message


def test_the_second_policy_table_is_the_one_named() -> None:
    text = '[[policy]]\nname = "a"\nmax_tier = "mid"\n\n[[policy]]\nname = "b"\nmax_tier = "huge"\n'
    with pytest.raises(ConfigError, match=r"line 7: policy 'b' max_tier"):
        _policies(text)


def test_a_rule_seen_from_a_tenant_names_no_other_tenant_or_agent() -> None:
    rule = StorageRule(
        "shared",
        tenants=("acme", "globex"),
        agents=("bot-*", "secret-agent"),
        channels=("ops",),
        retention_days=5,
    )
    seen = rule.seen_from("acme", ["bot-1", "alice"])
    assert seen.tenants == ("acme",) and seen.agents == ("bot-1",)
    assert seen.selection() == "tenant acme; agent bot-1; channel ops"
    assert "globex" not in str(seen.as_dict()) and "secret" not in str(seen.as_dict())
    assert StorageRule("any", store=False).seen_from("acme", ["a"]).selection() == "every item"
