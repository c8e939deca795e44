"""Settings from defaults, ``<home>/kronika.toml``, ``KRONIKA_<NAME>`` and overrides."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from kronika.core.policies import parse_policies
from kronika.errors import ConfigError
from kronika.settings.groups import DEFAULTS
from kronika.settings.model import AgentPolicy, Settings, with_flat
from kronika.settings.values import coerce

CONFIG_FILE = "kronika.toml"


def _agent_policies(raw: Any, default_autonomy: int) -> dict[str, AgentPolicy]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError("[agents] in the config file must be a table of tables")
    policies: dict[str, AgentPolicy] = {}
    for agent, table in raw.items():
        if not isinstance(table, dict):
            raise ConfigError(f"[agents.{agent}] must be a table")
        autonomy = coerce("autonomy", table.get("autonomy", default_autonomy))
        writers = table.get("writers", [])
        if not isinstance(writers, list) or not all(isinstance(w, str) for w in writers):
            raise ConfigError(f"[agents.{agent}].writers must be a list of agent names")
        tenant = table.get("tenant")
        if tenant is not None and (not isinstance(tenant, str) or not tenant.strip()):
            raise ConfigError(f"[agents.{agent}].tenant must be a tenant name")
        policies[str(agent)] = AgentPolicy(autonomy=autonomy, writers=tuple(writers), tenant=tenant)
    return policies


def _teams(raw: Any) -> dict[str, tuple[str, ...]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError("[teams] in the config file must be a table of member lists")
    teams: dict[str, tuple[str, ...]] = {}
    for team, members in raw.items():
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise ConfigError(f"[teams].{team} must be a list of user names")
        teams[str(team)] = tuple(members)
    return teams


def load_settings(
    home: str | Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Build :class:`Settings` from defaults, ``<home>/kronika.toml``, env and overrides."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    home_value = home if home is not None else env.get("KRONIKA_HOME", DEFAULTS["home"])
    home_path = Path(os.path.expanduser(str(home_value)))
    config_path = home_path / CONFIG_FILE
    raw_agents: Any = None
    raw_teams: Any = None
    if config_path.is_file():
        try:
            text = config_path.read_text(encoding="utf-8")
            data = tomllib.loads(text)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {config_path}: {exc}") from exc
        raw_agents = data.pop("agents", None)
        raw_rules, raw_retention = data.pop("policy", None), data.pop("retention", None)
        if raw_rules is not None or raw_retention is not None:
            values["storage"] = parse_policies(
                raw_rules, raw_retention, text=text, source=str(config_path)
            )
        raw_teams = data.pop("teams", None)
        for name, value in data.items():
            if name == "home":
                continue
            values[name] = coerce(name, value)
    for name in DEFAULTS:
        if name == "home":
            continue
        env_value = env.get(f"KRONIKA_{name.upper()}")
        if env_value is not None:
            values[name] = coerce(name, env_value)
    for name, value in overrides.items():
        if value is not None:
            values[name] = coerce(name, value)
    values["home"] = home_path
    settings = with_flat(Settings(), values)
    agents = _agent_policies(raw_agents, settings.autonomy)
    teams = _teams(raw_teams)
    return replace(settings, agents=agents, teams=teams) if agents or teams else settings
