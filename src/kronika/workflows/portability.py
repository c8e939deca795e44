"""Export everything kronika keeps, and restore such an export elsewhere (SPEC C4).

An export is one JSON document (format in ``docs/import.md``): every Markdown file of
every agent verbatim with its modification time (the truth: facts with their history
and validity, notes, sessions, summaries, Active Context, identity, proposals), the
items derived from them with their access statistics, each agent's write policy, the
workspace's storage policies and retention, teams and ``dm_channels`` (a whole-workspace
export only), the audit trail and the embedding model. Importing it into a fresh
workspace and exporting again gives the same document, but for ``exported_at`` and one
``import`` entry per agent at the end of the audit trail.

An import is checked whole first (:func:`~kronika.engine.backup_format.read_backup`),
then staged and swapped into place at once (:mod:`kronika.engine.restore`): a bad
file, a refused agent or a crash halfway leaves the workspace as it was. What it
writes is screened for secrets like every other write (the ``secrets`` setting).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from kronika.core import policy_file
from kronika.core.model import Reader, Scope
from kronika.core.policies import StoragePolicies
from kronika.core.screening import screen_text
from kronika.core.serialize import item_to_dict
from kronika.engine.backup_format import (
    FORMAT,
    VERSION,
    AgentBackup,
    Backup,
    WorkspaceRules,
    mtime_text,
    read_backup,
)
from kronika.engine.restore import (
    StagedFile,
    Staging,
    has_content,
    recover_imports,
)
from kronika.engine.restore_rules import with_rules
from kronika.engine.write import USER
from kronika.errors import ImportFormatError
from kronika.memory import Memory
from kronika.ports import AuditEntry, acting
from kronika.settings import CONFIG_FILE, AgentPolicy

__all__ = [
    "FORMAT",
    "VERSION",
    "RestoreReport",
    "StagedRestore",
    "export_memory",
    "import_export",
    "index_restored",
    "prepare_index",
    "restore_backup",
    "stage_backup",
]

AUDIT_FILE = "audit.jsonl"


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What an import restored; ``rules`` what it added to ``kronika.toml`` besides
    agents' policies (storage policies, teams, ``dm_channels``); ``notes`` says what a
    user should know (another embedding model, a policy this workspace already set
    otherwise)."""

    agents: int
    files: int
    audit_entries: int
    access_stats: int
    policies: int
    embedding_model: str
    notes: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "notes": list(self.notes), "rules": list(self.rules)}


def export_memory(
    memory: Memory,
    agents: Sequence[str] | None = None,
    *,
    reader: Reader | None = None,
    scopes: Sequence[Scope | str] = (),
    rules: bool = True,
) -> dict[str, Any]:
    """Everything kept for ``agents`` (all by default) as a JSON-ready dict; the
    workspace's rules (``settings``) unless ``rules`` is false (a server leaves them out
    when ``kronika.toml`` serves other tenants too).

    With a reader (given, or the memory's :attr:`~kronika.Memory.default_reader`) it
    is that reader's *view* instead: the items they may see, and nothing written
    verbatim (files and the audit trail hold everyone's memories). A view says so in
    ``view`` and cannot be imported as a backup. So is an export of some ``scopes`` only.
    """
    who = reader if reader is not None else memory.default_reader
    if who is not None or scopes:
        return _export_view(memory, agents, who, scopes)
    names = list(agents) if agents else memory.agents()
    memory.sync()
    out: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": memory.clock.now().isoformat(),
        "tenant": memory.settings.tenant,
        "embedding_model": memory.embedder.model_id,
        "agents": {},
    }
    for name in names:
        agent_dir = memory.workspace.require_agent(name)
        files: dict[str, str] = {}
        times: dict[str, str] = {}
        for path in sorted(agent_dir.rglob("*.md")):
            rel = path.relative_to(agent_dir).as_posix()
            if any(part.startswith(".") for part in rel.split("/")) or not path.is_file():
                continue
            # bytes, not read_text: universal newlines would turn "\r\n" into "\n"
            files[rel] = path.read_bytes().decode("utf-8", errors="replace")
            times[rel] = mtime_text(path.stat().st_mtime_ns)
        policy = memory.settings.policy(name)
        items = memory.items(agent=name, include_superseded=True)
        out["agents"][name] = {
            "files": files,
            "file_times": times,
            "policy": _policy_dict(policy),
            "items": [item_to_dict(item) for item in items],
        }
    if rules:
        out["settings"] = _settings_dict(memory)
    out["audit"] = (
        [
            {**asdict(entry), "at": entry.at.isoformat()}
            for entry in memory.audit()
            if entry.target_agent in names
        ]
        if names
        else []
    )
    return out


def _settings_dict(memory: Memory) -> dict[str, Any]:
    """The workspace's rules (:class:`~kronika.engine.backup_format.WorkspaceRules`) as
    ``kronika.toml`` has them now (a restore may have added some since the memory was
    opened): the storage-policy tables as written there, the teams, and the
    ``dm_channels`` setting (the file's, else the one in force)."""
    text = _config_text(memory)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raw = {}
    section = policy_file.split(text)[1].strip()
    teams = raw.get("teams")
    listed = teams if isinstance(teams, dict) else memory.settings.teams
    dm = raw.get("dm_channels")
    return {
        "storage_policies": section + "\n" if section else "",
        "teams": {str(team): list(members) for team, members in sorted(listed.items())},
        "dm_channels": dm if isinstance(dm, str) else memory.settings.dm_channels,
    }


def _policy_dict(policy: AgentPolicy) -> dict[str, Any]:
    out: dict[str, Any] = {"autonomy": policy.autonomy, "writers": list(policy.writers)}
    if policy.tenant is not None:
        out["tenant"] = policy.tenant
    return out


def _export_view(
    memory: Memory,
    agents: Sequence[str] | None,
    reader: Reader | None,
    scopes: Sequence[Scope | str],
) -> dict[str, Any]:
    """What ``reader`` may see of ``agents`` (those of the reader's tenant by default),
    of ``scopes`` only when given."""
    tenant_of = memory.workspace.tenant_of
    names = list(agents) if agents else memory.agents()
    if reader is not None and not agents:
        names = [name for name in names if tenant_of(name) == reader.tenant]
    memory.sync()
    view: dict[str, Any] = {"scopes": [Scope(scope).value for scope in scopes]}
    if reader is not None:
        view |= {
            "tenant": reader.tenant,
            "user": reader.user,
            "channel": reader.channel,
            "teams": list(reader.teams),
        }
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": memory.clock.now().isoformat(),
        "tenant": memory.settings.tenant if reader is None else reader.tenant,
        "view": view,
        "embedding_model": memory.embedder.model_id,
        "agents": {
            name: {
                "items": [
                    item_to_dict(item)
                    for item in memory.items(
                        agent=name, include_superseded=True, reader=reader, scopes=scopes
                    )
                ]
            }
            for name in names
        },
    }


def import_export(
    memory: Memory, data: Any, *, replace_existing: bool = False, rules: bool = True
) -> RestoreReport:
    """Restore an export (a parsed JSON document) into this workspace, all or nothing.

    An agent that does not exist here, or that is still as ``kronika init`` made it,
    is restored without asking; one that holds memories is refused unless
    ``replace_existing`` (then it becomes exactly the export's agent). Policies that
    differ from this workspace's are added to ``kronika.toml`` (they apply from the
    next time the workspace is opened); audit entries are appended; access statistics
    go into the index.
    """
    return restore_backup(memory, read_backup(data), replace_existing=replace_existing, rules=rules)


def restore_backup(
    memory: Memory, backup: Backup, *, replace_existing: bool = False, rules: bool = True
) -> RestoreReport:
    """:func:`import_export` for a :class:`Backup` already read and checked; with
    ``rules`` false the export's workspace rules are not added (a note says so)."""
    home = memory.settings.home
    usage = [u for agent in backup.agents for u in agent.usage]
    prepared = False
    try:
        with memory.lock:
            recover_imports(home)
            staged = stage_backup(memory, backup, replace_existing=replace_existing, rules=rules)
            prepare_index(memory, backup)
            prepared = True
            staged.staging.commit(staged.targets)
            if staged.storage is not None:  # in force at once, as `kronika policies` edits
                memory.use_storage_policies(staged.storage)
            if not _audit_in_workspace(memory):  # a store's own trail: appended, not swapped
                for entry in _restored_audit(memory, backup):
                    memory.audit_log.append(entry)
    finally:
        if prepared:  # restored, or put back as it was: either way read the files again
            index_restored(memory, backup)
    notes = list(staged.notes)
    model = memory.embedder.model_id
    if backup.embedding_model is not None and backup.embedding_model != model:
        notes.append(
            f"the export's memories were embedded with {backup.embedding_model}; this"
            f" workspace uses {model}, so every memory was embedded again with it"
        )
    return RestoreReport(
        agents=len(backup.agents),
        files=sum(len(agent.files) for agent in backup.agents),
        audit_entries=len(backup.audit),
        access_stats=sum(1 for u in usage if u.access_count or u.last_accessed_at),
        policies=staged.policies,
        embedding_model=model,
        notes=tuple(notes),
        rules=staged.rules,
    )


def prepare_index(memory: Memory, backup: Backup) -> None:
    """Ready the index before the swap, so that a crash while the restored files are
    indexed afterwards (the long part) loses nothing: it forgets the agents being
    replaced (the next sync would otherwise take their facts' absence for a damaged
    Brain, and keep a copy of them) and takes the access statistics (rows of items not
    in the workspace are unused). Either way the Markdown stays the truth."""
    for agent in backup.agents:
        if memory.workspace.has_agent(agent.name):
            for path in memory.index.source_states(agent.name):
                memory.index.remove_source(agent.name, path)
    usage = [u for agent in backup.agents for u in agent.usage]
    memory.index.restore_usage([(u.item_id, u.access_count, u.last_accessed_at) for u in usage])


def index_restored(memory: Memory, backup: Backup) -> None:
    """Index every file of the restored agents (even one whose size and time match)."""
    for agent in backup.agents:
        if not memory.workspace.has_agent(agent.name):
            continue
        known = memory.index.source_states(agent.name)
        listed = [f.path for f in memory.workspace.list_sources(agent.name)]
        memory.sync(agent.name, paths=sorted({*known, *listed}))


@dataclass(frozen=True, slots=True)
class StagedRestore:
    """A backup written complete into a staging folder, not yet swapped into place."""

    staging: Staging
    targets: list[str]
    policies: int
    notes: tuple[str, ...]
    rules: tuple[str, ...] = ()
    storage: StoragePolicies | None = None
    """The storage policies the restore adds (to apply once committed), if any."""


def stage_backup(
    memory: Memory, backup: Backup, *, replace_existing: bool, rules: bool = True
) -> StagedRestore:
    """Write everything the restore changes into a staging folder (the caller holds the
    workspace lock and commits it); refuses to overwrite an agent that holds memories
    unless ``replace_existing``. On failure the staging folder is removed."""
    staging = Staging(memory.settings.home)
    try:
        _refuse_overwrites(memory, backup, staging, replace_existing)
        targets = []
        mode = memory.settings.secrets
        for agent in backup.agents:
            files = (StagedFile(rel, screen_text(text, mode), t) for rel, text, t in agent.files)
            staging.agent(agent.name, files)
            targets.append(f"agents/{agent.name}")
        config, policies, notes = _config_with_policies(memory, backup.agents)
        before = _config_text(memory)
        config = before if config is None else config
        added: list[str] = []
        storage = None
        if rules:
            config, added, more, storage = with_rules(config, memory.settings, backup.rules)
            notes += more
        elif backup.rules != WorkspaceRules():
            notes.append(
                "the export's storage policies, teams and dm_channels were not added:"
                f" {CONFIG_FILE} here serves other tenants too (add them there by hand)"
            )
        if config != before:
            staging.file(StagedFile(CONFIG_FILE, config))
            targets.append(CONFIG_FILE)
        if _audit_in_workspace(memory):
            staging.file(StagedFile(AUDIT_FILE, _audit_with(memory, backup)))
            targets.append(AUDIT_FILE)
    except BaseException:
        staging.discard()
        raise
    return StagedRestore(staging, targets, policies, tuple(notes), tuple(added), storage)


def _refuse_overwrites(
    memory: Memory, backup: Backup, staging: Staging, replace_existing: bool
) -> None:
    if replace_existing:
        return
    fresh = staging.probe_agent()
    taken = [
        agent.name
        for agent in backup.agents
        if memory.workspace.has_agent(agent.name)
        and has_content(memory.workspace.agent_dir(agent.name), fresh)
    ]
    if taken:
        listing = ", ".join(repr(name) for name in taken)
        raise ImportFormatError(
            f"agent {listing} already has memories here; pass --replace to replace"
            " them with the export's (nothing was imported)"
        )


def _audit_in_workspace(memory: Memory) -> bool:
    """Whether the audit trail is the workspace's ``audit.jsonl`` (then an import swaps
    it in with the files; a store of record's trail takes the entries appended)."""
    return getattr(memory.audit_log, "path", None) == memory.settings.home / AUDIT_FILE


def _audit_with(memory: Memory, backup: Backup) -> str:
    """``audit.jsonl`` as it is, then the export's entries, then one per restored agent."""
    path = memory.settings.home / AUDIT_FILE
    text = path.read_bytes().decode("utf-8", errors="replace") if path.is_file() else ""
    if text and not text.endswith("\n"):
        text += "\n"  # a torn last line must not swallow the first restored entry
    for entry in _restored_audit(memory, backup):
        record = {**asdict(entry), "at": entry.at.isoformat()}
        text += json.dumps(record, ensure_ascii=False) + "\n"
    return text


def _restored_audit(memory: Memory, backup: Backup) -> list[AuditEntry]:
    """The export's entries, then one per restored agent, screened for secrets."""
    now = memory.clock.now()
    made = f" made {backup.exported_at}" if backup.exported_at else ""
    restored = [
        AuditEntry(
            now,
            "import",
            agent.name,
            USER,
            "import",
            None,
            f"restored {len(agent.files)} files from an export{made}",
            "applied",
            **acting(),
        )
        for agent in backup.agents
    ]
    mode = memory.settings.secrets
    return [
        replace(entry, summary=screen_text(entry.summary, mode))
        for entry in (*backup.audit, *restored)
    ]


def _config_with_policies(
    memory: Memory, agents: Sequence[AgentBackup]
) -> tuple[str | None, int, list[str]]:
    """``kronika.toml`` with a table for each restored policy this workspace would not
    give that agent by itself (``None`` when nothing needs adding), the number added,
    and notes on policies this workspace already sets otherwise."""
    text = _config_text(memory)
    try:
        own = tomllib.loads(text).get("agents", {})
    except tomllib.TOMLDecodeError:
        own = None
    tables: list[str] = []
    notes: list[str] = []
    for agent in agents:
        wanted = agent.policy
        if wanted is None or wanted == memory.settings.policy(agent.name):
            continue
        if not isinstance(own, dict) or agent.name in own:
            notes.append(
                f"kept this workspace's policy for {agent.name!r}; the export had"
                f" {_describe(wanted)} (change it in {CONFIG_FILE} if you want that)"
            )
            continue
        writers = ", ".join(json.dumps(w, ensure_ascii=False) for w in wanted.writers)
        tenant = "" if wanted.tenant is None else f"tenant = {json.dumps(wanted.tenant)}\n"
        tables.append(
            f"[agents.{json.dumps(agent.name)}]\n"
            f"autonomy = {wanted.autonomy}\nwriters = [{writers}]\n{tenant}"
        )
    if not tables:
        return None, 0, notes
    joined = text + ("\n" if text and not text.endswith("\n") else "") + "\n" + "\n".join(tables)
    try:
        tomllib.loads(joined)
    except tomllib.TOMLDecodeError:
        notes.append(f"could not add the export's policies to {CONFIG_FILE}; add them by hand")
        return None, 0, notes
    return joined, len(tables), notes


def _config_text(memory: Memory) -> str:
    path = memory.settings.home / CONFIG_FILE
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _describe(policy: AgentPolicy) -> str:
    writers = ", ".join(policy.writers) or "none"
    tenant = "" if policy.tenant is None else f", tenant {policy.tenant}"
    return f"autonomy {policy.autonomy}, writers {writers}{tenant}"
