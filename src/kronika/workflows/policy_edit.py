"""Editing the storage policies of a running memory (the memory browser's Policies view).

The policies stay where they always are, in ``kronika.toml``: the new ``[retention]``
and ``[[policy]]`` tables are checked as loading the file checks them, the file is
rewritten at once (a new file renamed over the old: a crash leaves one or the other)
with the rest of it unchanged (:mod:`kronika.core.policy_file`), and the memory applies
them to every write and purge from then on. The edit is audited (``policies``). Other
server workers over the same workspace see the file change before their next call
(:mod:`kronika.engine.policy_follow`).

They can be edited so only when one tenant's view of them is the whole of them
(:func:`why_not_editable`): otherwise an edit would rewrite rules its editor cannot see.
"""

from __future__ import annotations

from pathlib import Path

from kronika.core import policy_file
from kronika.core.policies import StoragePolicies
from kronika.errors import PermissionDenied
from kronika.memory import Memory
from kronika.ports import AuditEntry, acting
from kronika.settings import CONFIG_FILE
from kronika.stores.markdown.atomic import atomic_write_text


def config_path(memory: Memory) -> Path:
    return Path(memory.settings.home) / CONFIG_FILE


def why_not_editable(memory: Memory, tenant: str) -> str | None:
    """Why ``tenant`` may not edit ``memory``'s policies here (``None``: it may)."""
    s = memory.settings
    if s.database_url:
        return (
            "a team memory's policies are read by each server from its own kronika.toml: "
            "edit them there (a running server applies them when the file changes)"
        )
    if s.tenant != tenant or any(t != tenant for t in s.tenants().values()):
        return f"{CONFIG_FILE} serves other tenants too: edit it in the workspace"
    if any(p != tenant for rule in s.storage.rules for p in rule.tenants):
        return f"a rule of {CONFIG_FILE} names other tenants: edit it in the workspace"
    return None


def section_text(memory: Memory) -> str:
    """The ``[retention]`` and ``[[policy]]`` tables as ``kronika.toml`` has them."""
    path = config_path(memory)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return policy_file.split(text)[1].strip() + "\n" if text.strip() else ""


def rewrite_policies(
    memory: Memory, tenant: str, agent: str, section: str, who: str
) -> StoragePolicies:
    """Put ``section`` in place of the policy tables of ``kronika.toml`` and apply it;
    :class:`PermissionDenied` when they may not be edited here, :class:`InvalidInput`
    naming the line when ``section`` is not what the file may hold."""
    refused = why_not_editable(memory, tenant)
    if refused is not None:
        raise PermissionDenied(refused)
    path = config_path(memory)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    new = policy_file.with_section(text, section)
    found = policy_file.checked_section(section)
    atomic_write_text(path, new)
    memory.use_storage_policies(found)
    memory.audit_log.append(
        AuditEntry(
            memory.clock.now(),
            "policies",
            agent,  # the agent whose view it was edited from
            who,
            CONFIG_FILE,
            None,
            f"{len(found.rules)} rule(s), retention "
            + (", ".join(f"{t.value} {d}" for t, d in found.retention.items()) or "none"),
            "applied",
            **acting(),
        )
    )
    return found
