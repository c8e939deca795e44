"""Every setting kronika has, in frozen groups (:mod:`kronika.settings.groups`: each
field a setting, its default written there once) with one line of help each
(:mod:`kronika.settings.table`).

:class:`Settings` holds the groups (``settings.recall``, ``settings.llm``…); each engine
part is given only its group. Every setting also reads by its flat name, the one of the
file format (``settings.recall_k``). Values come from, in increasing priority: the
defaults, ``<home>/kronika.toml``, environment variables ``KRONIKA_<NAME>`` and explicit
overrides (CLI flags, keyword arguments; :func:`load_settings`,
:meth:`Settings.with_overrides`). ``docs/settings.md`` is generated from the groups and
the table (:mod:`kronika.settings.docs`) and checked by the tests.

Per-agent settings live in the config file under ``[agents.<name>]``::

    [agents.jaskier]
    autonomy = 1              # 0 read-only, 1 suggest, 2 auto, 3 full
    writers = ["planner"]     # other agents allowed to write here
    tenant = "acme"           # the tenant this agent's memory belongs to

Team membership (who sees team-scoped memory, see ``docs/scopes.md``) lives under
``[teams]``: one list of user names per team::

    [teams]
    core = ["anna", "bob"]

Storage policies live in ``[retention]`` and ``[[policy]]`` tables
(:mod:`kronika.core.policies`, ``docs/policies.md``).
"""

from __future__ import annotations

from kronika.settings.docs import default_config_text, grouped_specs, settings_markdown
from kronika.settings.groups import (
    GROUPS,
    BudgetsGroup,
    EmbeddingGroup,
    ImportanceGroup,
    LlmGroup,
    RecallGroup,
    RerankerGroup,
    SessionsGroup,
    VectorIndexGroup,
    WorkspaceGroup,
)
from kronika.settings.load import CONFIG_FILE, load_settings
from kronika.settings.model import AgentPolicy, Settings, answer_floor, relevance_floor
from kronika.settings.table import SETTINGS_TABLE, SettingSpec
from kronika.settings.values import (
    CALIBRATED_ANSWER_FLOORS,
    CALIBRATED_FLOORS,
    MAX_SETTING_NUMBER,
    floor_value,
)

__all__ = [
    "CALIBRATED_ANSWER_FLOORS",
    "CALIBRATED_FLOORS",
    "CONFIG_FILE",
    "GROUPS",
    "MAX_SETTING_NUMBER",
    "SETTINGS_TABLE",
    "AgentPolicy",
    "BudgetsGroup",
    "EmbeddingGroup",
    "ImportanceGroup",
    "LlmGroup",
    "RecallGroup",
    "RerankerGroup",
    "SessionsGroup",
    "SettingSpec",
    "Settings",
    "VectorIndexGroup",
    "WorkspaceGroup",
    "answer_floor",
    "default_config_text",
    "floor_value",
    "grouped_specs",
    "load_settings",
    "relevance_floor",
    "settings_markdown",
]
