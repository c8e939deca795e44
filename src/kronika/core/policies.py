"""Storage policies (SPEC C4): what memory may keep, in which tier, and for how long.

A policy is a list of rules read from ``kronika.toml`` (see ``docs/policies.md``)::

    [retention]                 # days each tier is kept; absent or 0: for ever
    short = 30
    mid = 365

    [[policy]]
    name = "no DMs in long-term memory"
    dm = true                   # channels matching the dm_channels setting
    max_tier = "mid"

    [[policy]]
    name = "never store #hr-private"
    channels = ["hr-private"]
    store = false

A rule *matches* an item when every selector it gives does (``tenants``, ``agents``,
``users`` and ``channels`` are shell-style patterns, ``scopes`` and ``tiers`` names,
``dm`` true or false; a selector left out matches anything, and an item without a
channel or user never matches a ``channels`` or ``users`` selector). Of the rules that
match, the strictest wins, so their order does not matter:

* any ``store = false``                    → :class:`Refuse`;
* else its tier above ``min(max_tier)``    → one tier shorter, and the rules are
  matched again there; ending in a shorter tier than asked → :class:`Shorten`;
* else                                    → :class:`Keep`.

A kept or shortened item expires at ``created_at + min(retention_days)`` over the
matching rules and the ``[retention]`` days of every tier it passed through; ``None``
means it never expires. An item is *purged* (:func:`purge_reason`) when it is refused, sits
in a tier above what it may, or has expired at ``now``.

A *direct message* (DM) is an item whose channel matches one of the ``dm_channels``
patterns (by default ``dm:*`` and ``dm-*``); an item without a channel is no DM.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any

from kronika.core.model import MemoryItem, Scope, Tier
from kronika.errors import ConfigError

TIER_ORDER: tuple[Tier, ...] = (Tier.SHORT, Tier.MID, Tier.LONG)
"""Shortest first: a rule's ``max_tier`` keeps an item in its tier or a shorter one."""
MAX_RETENTION_DAYS = 1_000_000
_PATTERN_KEYS = ("tenants", "agents", "users", "channels")
_SELECTOR_KEYS = (*_PATTERN_KEYS, "scopes", "tiers", "dm")
_EFFECT_KEYS = ("store", "max_tier", "retention_days")
RULE_KEYS = ("name", *_SELECTOR_KEYS, *_EFFECT_KEYS)
DEFAULT_DM_CHANNELS = ("dm:*", "dm-*")


@dataclass(frozen=True, slots=True)
class StorageRule:
    """One ``[[policy]]`` table: its selectors (empty: any) and its effects."""

    name: str
    tenants: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    scopes: tuple[Scope, ...] = ()
    tiers: tuple[Tier, ...] = ()
    dm: bool | None = None
    store: bool = True
    max_tier: Tier | None = None
    retention_days: int | None = None

    def effect(self) -> str:
        """What the rule does, in words (``kronika policies``)."""
        if not self.store:
            return "never store"
        said = []
        if self.max_tier is not None:
            said.append(f"keep at most in {self.max_tier.value}-term")
        if self.retention_days is not None:
            said.append(f"keep {self.retention_days} day(s)")
        return ", ".join(said)

    def selection(self) -> str:
        """Which items the rule is about, in words (``kronika policies``)."""
        said = [
            f"{label} {', '.join(map(str, values))}"
            for label, values in (
                ("tenant", self.tenants),
                ("agent", self.agents),
                ("user", self.users),
                ("channel", self.channels),
                ("scope", self.scopes),
                ("tier", self.tiers),
            )
            if values
        ]
        if self.dm is not None:
            said.append("direct messages" if self.dm else "not direct messages")
        return "; ".join(said) or "every item"

    def seen_from(self, tenant: str, agents: Sequence[str]) -> StorageRule:
        """The rule as a caller of ``tenant`` who may see ``agents`` is shown it: its
        ``tenants`` selector narrowed to ``tenant`` and its ``agents`` selector to those
        of ``agents`` it matches, so neither its fields nor its words (:meth:`selection`)
        name another tenant or agent. The rule is meant to :func:`may_apply` there."""
        return replace(
            self,
            tenants=(tenant,) if self.tenants else (),
            agents=tuple(a for a in agents if any(fnmatchcase(a, p) for p in self.agents))
            if self.agents
            else (),
        )

    def as_dict(self) -> dict[str, Any]:
        """The rule as ``kronika policies --json`` shows it, with its words."""
        return {
            "name": self.name,
            "tenants": list(self.tenants),
            "agents": list(self.agents),
            "users": list(self.users),
            "channels": list(self.channels),
            "scopes": [s.value for s in self.scopes],
            "tiers": [t.value for t in self.tiers],
            "dm": self.dm,
            "store": self.store,
            "max_tier": self.max_tier.value if self.max_tier else None,
            "retention_days": self.retention_days,
            "applies_to": self.selection(),
            "effect": self.effect(),
        }


@dataclass(frozen=True, slots=True)
class StoragePolicies:
    """Every storage rule of a workspace, the days each tier is kept, and what a DM is."""

    rules: tuple[StorageRule, ...] = ()
    retention: Mapping[Tier, int] = field(default_factory=dict)
    dm_channels: tuple[str, ...] = DEFAULT_DM_CHANNELS

    def is_dm(self, channel: str | None) -> bool:
        return channel is not None and any(fnmatchcase(channel, p) for p in self.dm_channels)

    @property
    def empty(self) -> bool:
        return not self.rules and not self.retention


@dataclass(frozen=True, slots=True)
class Subject:
    """What a decision looks at: an item, or a turn or summary about to be written."""

    tenant: str
    agent: str
    tier: Tier
    created_at: datetime
    scope: Scope = Scope.PERSONAL
    channel: str | None = None
    user: str | None = None

    @classmethod
    def of(cls, item: MemoryItem) -> Subject:
        return cls(
            tenant=item.tenant,
            agent=item.agent,
            tier=item.tier,
            created_at=item.created_at,
            scope=item.scope,
            channel=item.channel,
            user=item.user,
        )


@dataclass(frozen=True, slots=True)
class Keep:
    """Store it as it is; ``expires_at`` ``None`` means for ever."""

    expires_at: datetime | None
    because: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Shorten:
    """Store it only in ``tier`` (a shorter one than asked), expiring at ``expires_at``."""

    tier: Tier
    expires_at: datetime | None
    reason: str


@dataclass(frozen=True, slots=True)
class Refuse:
    """Do not store it at all."""

    reason: str


Decision = Keep | Shorten | Refuse


# --------------------------------------------------------------------------- deciding
def matches(rule: StorageRule, subject: Subject, policies: StoragePolicies) -> bool:
    """Whether every selector ``rule`` gives holds for ``subject`` (module docstring)."""
    for patterns, value in (
        (rule.tenants, subject.tenant),
        (rule.agents, subject.agent),
        (rule.users, subject.user),
        (rule.channels, subject.channel),
    ):
        if patterns and (value is None or not any(fnmatchcase(value, p) for p in patterns)):
            return False
    if rule.scopes and subject.scope not in rule.scopes:
        return False
    if rule.tiers and subject.tier not in rule.tiers:
        return False
    return rule.dm is None or rule.dm == policies.is_dm(subject.channel)


def may_apply(rule: StorageRule, tenant: str, agent: str) -> bool:
    """Whether ``rule`` can match an item of ``agent`` of ``tenant``: its ``tenants`` and
    ``agents`` patterns, when given, match them (its other selectors depend on the item)."""
    return all(
        not patterns or any(fnmatchcase(value, p) for p in patterns)
        for patterns, value in ((rule.tenants, tenant), (rule.agents, agent))
    )


def decide(policies: StoragePolicies, subject: Subject) -> Decision:
    """Keep, shorten or refuse ``subject``: the strictest matching rule wins
    (module docstring); ``expires_at = created_at + min(retention days)``.

    A shortened item steps down one tier at a time, and the rules are matched at every
    tier it passes: a refusal or a retention met on the way holds, so adding a rule
    never keeps an item longer, in a longer tier, or at all when it was refused."""
    asked = subject.tier
    shortened_by: StorageRule | None = None
    spans: list[tuple[int, str]] = []
    while True:
        found = [r for r in policies.rules if matches(r, subject, policies)]
        refusing = next((r for r in found if not r.store), None)
        if refusing is not None:
            return Refuse(_refusal(refusing, subject, policies))
        spans += _retention(policies, found, subject.tier)
        caps = [_rank(r.max_tier) for r in found if r.max_tier is not None]
        rank = _rank(subject.tier)
        if caps and min(caps) < rank:
            shortened_by = next(r for r in found if _rank(r.max_tier) == min(caps))
            subject = replace(subject, tier=TIER_ORDER[rank - 1])
            continue
        break
    days = min((d for d, _ in spans), default=None)
    expires = None if days is None else subject.created_at + timedelta(days=days)
    because = tuple(dict.fromkeys(why for d, why in spans if d == days))
    if shortened_by is None:
        return Keep(expires, because)
    reason = (
        f"policy {shortened_by.name!r} keeps {_what(subject, policies)} at most in "
        f"{subject.tier.value}-term memory, not {asked.value}-term"
    )
    return Shorten(subject.tier, expires, reason)


def purge_reason(policies: StoragePolicies, item: MemoryItem, now: datetime) -> str | None:
    """Why ``item`` may no longer be kept at ``now`` (``None``: it may): it is refused,
    stored in a tier longer than allowed, or past its expiry."""
    match decide(policies, Subject.of(item)):
        case Refuse(reason):
            return reason
        case Shorten(_, _, reason):
            return reason
        case Keep(expires_at, because) if expires_at is not None and expires_at <= now:
            return f"expired {expires_at.date().isoformat()} ({'; '.join(because)})"
    return None


def _rank(tier: Tier | None) -> int:
    return TIER_ORDER.index(tier) if tier is not None else len(TIER_ORDER)


def _retention(
    policies: StoragePolicies, found: Sequence[StorageRule], tier: Tier
) -> list[tuple[int, str]]:
    """(days, why) of every retention that applies at ``tier``."""
    spans = [(r.retention_days, f"policy {r.name!r}") for r in found if r.retention_days]
    days = policies.retention.get(tier)
    if days:
        spans.append((days, f"[retention] {tier.value} = {days}"))
    return spans


def _what(subject: Subject, policies: StoragePolicies) -> str:
    if subject.channel is None:
        return f"this {subject.scope.value} memory"
    kind = "direct message channel" if policies.is_dm(subject.channel) else "channel"
    return f"memory of {kind} {subject.channel!r}"


def _refusal(rule: StorageRule, subject: Subject, policies: StoragePolicies) -> str:
    return f"policy {rule.name!r} never stores {_what(subject, policies)}"


# --------------------------------------------------------------------------- reading the config
def parse_policies(
    raw_rules: Any,
    raw_retention: Any,
    *,
    text: str = "",
    source: str = "kronika.toml",
) -> StoragePolicies:
    """``[[policy]]`` tables and the ``[retention]`` table of a config file, checked:
    a bad one raises :class:`ConfigError` naming its line in ``text`` (the file's own
    text) when it can be found."""
    where = _Locator(text, source)
    retention = _parse_retention(raw_retention, where)
    if raw_rules is None:
        return StoragePolicies(retention=retention)
    if not isinstance(raw_rules, list) or not all(isinstance(t, dict) for t in raw_rules):
        raise ConfigError(f"{where.at('policy')}: write each policy as a [[policy]] table")
    rules = tuple(_parse_rule(n, table, where) for n, table in enumerate(raw_rules))
    names = [r.name for r in rules]
    for n, name in enumerate(names):
        if name in names[:n]:
            raise ConfigError(f"{where.at('policy', n, 'name')}: two policies are named {name!r}")
    return StoragePolicies(rules=rules, retention=retention)


def parse_dm_channels(value: str) -> tuple[str, ...]:
    """The ``dm_channels`` setting: comma-separated channel name patterns."""
    return tuple(p.strip() for p in value.split(",") if p.strip())


def _parse_retention(raw: Any, where: _Locator) -> dict[Tier, int]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where.at('retention')}: [retention] must be a table of days per tier")
    found: dict[Tier, int] = {}
    for name, days in raw.items():
        line = where.at("retention", None, name)
        if name not in {t.value for t in TIER_ORDER}:
            raise ConfigError(f"{line}: [retention] has no tier {name!r} (tiers: short, mid, long)")
        found[Tier(name)] = _days(days, line, f"[retention] {name}", zero_ok=True)
    return {tier: days for tier, days in found.items() if days}


def _parse_rule(n: int, table: dict[str, Any], where: _Locator) -> StorageRule:
    name = table.get("name", f"#{n + 1}")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where.at('policy', n, 'name')}: a policy's name must be a text")
    label = f"policy {name!r}"
    for key in table:
        if key not in RULE_KEYS:
            raise ConfigError(
                f"{where.at('policy', n, key)}: {label} has no setting {key!r} "
                f"(known: {', '.join(RULE_KEYS)})"
            )
    values: dict[str, Any] = {"name": name.strip()}
    for key in _PATTERN_KEYS:
        if key in table:
            values[key] = _texts(table[key], where.at("policy", n, key), f"{label} {key}")
    for key, kind in (("scopes", Scope), ("tiers", Tier)):
        if key in table:
            words = _texts(table[key], where.at("policy", n, key), f"{label} {key}")
            try:
                values[key] = tuple(kind(w) for w in words)
            except ValueError:
                known = ", ".join(v.value for v in kind)
                raise ConfigError(
                    f"{where.at('policy', n, key)}: {label} {key} must be among {known}, "
                    f"got {', '.join(words)}"
                ) from None
    for key in ("dm", "store"):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(
                    f"{where.at('policy', n, key)}: {label} {key} must be true or false, "
                    f"got {table[key]!r}"
                )
            values[key] = table[key]
    if "max_tier" in table:
        tier = table["max_tier"]
        if tier not in (Tier.SHORT.value, Tier.MID.value):
            raise ConfigError(
                f"{where.at('policy', n, 'max_tier')}: {label} max_tier must be 'short' or "
                f"'mid' (a tier shorter than long), got {tier!r}"
            )
        values["max_tier"] = Tier(tier)
    if "retention_days" in table:
        line = where.at("policy", n, "retention_days")
        values["retention_days"] = _days(table["retention_days"], line, f"{label} retention_days")
    rule = StorageRule(**values)
    if rule.store and rule.max_tier is None and rule.retention_days is None:
        raise ConfigError(
            f"{where.at('policy', n)}: {label} does nothing: give it store = false, "
            "max_tier or retention_days"
        )
    if not rule.store and (rule.max_tier is not None or rule.retention_days is not None):
        raise ConfigError(
            f"{where.at('policy', n, 'store')}: {label} never stores, so max_tier and "
            "retention_days mean nothing there"
        )
    return rule


def _texts(value: Any, line: str, what: str) -> tuple[str, ...]:
    given = [value] if isinstance(value, str) else value
    if (
        not isinstance(given, list)
        or not given
        or not all(isinstance(v, str) and v.strip() for v in given)
    ):
        raise ConfigError(f"{line}: {what} must be a text or a list of texts, got {value!r}")
    return tuple(v.strip() for v in given)


def _days(value: Any, line: str, what: str, *, zero_ok: bool = False) -> int:
    low = 0 if zero_ok else 1
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not low <= value <= MAX_RETENTION_DAYS
    ):
        raise ConfigError(
            f"{line}: {what} must be a whole number of days from {low} to "
            f"{MAX_RETENTION_DAYS}, got {value!r}"
        )
    return value


_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\"' -]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\"'-]+)\s*=")


class _Locator:
    """Finds the line of a table, or of a key in it, in the config file's text, so an
    error can name it (``tomllib`` keeps no positions)."""

    def __init__(self, text: str, source: str) -> None:
        self._lines = text.splitlines()
        self._source = source

    def at(self, table: str, nth: int | None = None, key: str | None = None) -> str:
        line = self._find(table, nth, key)
        return f"{self._source} line {line}" if line else self._source

    def _find(self, table: str, nth: int | None, key: str | None) -> int | None:
        seen = -1
        inside = False
        root = True  # before the first table header: ``policy = "x"`` names a table wrongly
        header_line: int | None = None
        for number, text in enumerate(self._lines, start=1):
            header = _HEADER.match(text)
            if header:
                root = False
                name = header.group(2).strip().strip("\"'")
                if inside and key is not None:
                    break  # the key was not in the table: point at its header
                if name == table:
                    seen += 1
                    if nth is None or seen == nth:
                        inside, header_line = True, number
                        if key is None:
                            return number
                continue
            found = _KEY.match(text)
            name = found.group(1).strip("\"'") if found else None
            if (inside and name == key) or (root and key is None and name == table):
                return number
        return header_line
