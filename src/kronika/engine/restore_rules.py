"""Put an export's workspace rules into ``kronika.toml`` when restoring it.

The rules (:class:`~kronika.engine.backup_format.WorkspaceRules`) are the storage
policies with their retention, the teams and the ``dm_channels`` setting. The
workspace's own are never overwritten: what it does not set is added, what it sets
otherwise is kept and named in a note, so a restore can only add rules, never loosen
or silently change one. The file is checked to read back to exactly what was meant
before it is used; when it would not, nothing of that rule is added and a note says
to add it by hand.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from kronika.core import policy_file
from kronika.core.policies import StoragePolicies, parse_dm_channels
from kronika.engine.backup_format import WorkspaceRules
from kronika.errors import ConfigError, InvalidInput
from kronika.settings import CONFIG_FILE, Settings

_TEAMS_HEADER = re.compile(r"^[ \t]*\[[ \t]*teams[ \t]*\][ \t]*(?:#.*)?$", re.MULTILINE)


def with_rules(
    text: str, settings: Settings, rules: WorkspaceRules
) -> tuple[str, list[str], list[str], StoragePolicies | None]:
    """``(text, added, notes, policies)``: ``kronika.toml``'s ``text`` with the rules
    it lacks added, what was added (one phrase each), notes on rules kept as they
    were, and the storage policies now in force when they were added (else None)."""
    added: list[str] = []
    notes: list[str] = []
    text, policies = _policies(text, rules.storage_policies, added, notes)
    text = _teams(text, dict(rules.teams), added, notes)
    text = _dm_channels(text, settings, rules.dm_channels, added, notes)
    return text, added, notes, policies


def _parsed(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _policies(
    text: str, section: str, added: list[str], notes: list[str]
) -> tuple[str, StoragePolicies | None]:
    wanted = policy_file.checked_section(section) if section.strip() else StoragePolicies()
    if not wanted.rules and not wanted.retention:
        return text, None
    try:
        own = policy_file.file_policies(text, CONFIG_FILE)
    except ConfigError:
        notes.append(f"could not read {CONFIG_FILE}; add the export's storage policies by hand")
        return text, None
    if own.rules == wanted.rules and own.retention == wanted.retention:
        return text, None
    if own.rules or own.retention:
        notes.append(
            f"kept this workspace's storage policies; the export had {_rule_count(wanted)}"
            f" (see them in the export's settings, edit them with `kronika policies`)"
        )
        return text, None
    try:
        new = policy_file.with_section(text, section)
    except InvalidInput:
        notes.append(f"could not add the export's storage policies to {CONFIG_FILE}")
        return text, None
    added.append(f"storage policies ({_rule_count(wanted)})")
    return new, wanted


def _rule_count(policies: StoragePolicies) -> str:
    retention = ", ".join(f"{t.value} {d} days" for t, d in policies.retention.items())
    return f"{len(policies.rules)} rule(s), retention {retention or 'none'}"


def _teams(
    text: str, wanted: dict[str, tuple[str, ...]], added: list[str], notes: list[str]
) -> str:
    raw = _parsed(text).get("teams", {})
    own = raw if isinstance(raw, dict) else {}
    new: dict[str, tuple[str, ...]] = {}
    for team, members in wanted.items():
        if team not in own:
            new[team] = members
        elif tuple(own[team]) != members:
            notes.append(
                f"kept this workspace's members of team {team!r}; the export had"
                f" {', '.join(members) or 'none'}"
            )
    if not new:
        return text
    lines = "".join(
        f"{json.dumps(team, ensure_ascii=False)} = {json.dumps(list(m), ensure_ascii=False)}\n"
        for team, m in new.items()
    )
    header = _TEAMS_HEADER.search(text)
    if header is None:
        joined = text + ("\n" if text and not text.endswith("\n") else "") + "\n[teams]\n" + lines
    else:
        at = header.end() + 1
        joined = text[:at] + lines + text[at:]
    found = _parsed(joined).get("teams")
    expected = {**{k: list(v) for k, v in own.items()}, **{k: list(v) for k, v in new.items()}}
    if found != expected:
        notes.append(f"could not add the export's teams to {CONFIG_FILE}; add them by hand")
        return text
    added += [f"team {team!r}" for team in new]
    return joined


def _dm_channels(
    text: str, settings: Settings, wanted: str | None, added: list[str], notes: list[str]
) -> str:
    if wanted is None or parse_dm_channels(wanted) == parse_dm_channels(settings.dm_channels):
        return text
    if "dm_channels" in _parsed(text):
        notes.append(
            f"kept this workspace's dm_channels ({settings.dm_channels}); the export had {wanted}"
        )
        return text
    joined = f"dm_channels = {json.dumps(wanted, ensure_ascii=False)}\n" + text
    if _parsed(joined).get("dm_channels") != wanted:
        notes.append(f"could not add the export's dm_channels to {CONFIG_FILE}")
        return text
    added.append(f"dm_channels {wanted!r}")
    return joined
