"""The export format, read and checked whole before an import touches anything.

An export (``"format": "kronika-export"``) is one JSON document; :func:`read_backup`
turns it into a :class:`Backup` or raises :class:`ImportFormatError` naming the place
that is wrong (``agents.jaskier.files["../x.md"]``), so a bad item at the very end of a
file is found before the first byte is written. Version 1 (files, items, audit) is
still read; version 2 adds each file's modification time and each agent's policy;
version 3 the workspace's rules (:class:`WorkspaceRules`: storage policies with their
retention, teams, what a direct message is). Versions from a newer kronika are
refused rather than half understood.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath
from typing import Any

from kronika.core import policy_file
from kronika.errors import ImportFormatError, InvalidAgentName, InvalidInput
from kronika.ports import AuditEntry
from kronika.settings import AgentPolicy
from kronika.stores.markdown.layout import validate_agent_name

FORMAT = "kronika-export"
VERSION = 3
"""The version :func:`kronika.workflows.portability.export_memory` writes."""
OLDEST_VERSION = 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Usage:
    """Access statistics of one item (kept by the index, not the Markdown)."""

    item_id: str
    access_count: int
    last_accessed_at: datetime | None


@dataclass(frozen=True, slots=True)
class AgentBackup:
    """One agent of an export: its Markdown files (path relative to the agent folder,
    text, modification time in nanoseconds when known), usage and write policy."""

    name: str
    files: tuple[tuple[str, str, int | None], ...]
    usage: tuple[Usage, ...]
    policy: AgentPolicy | None


@dataclass(frozen=True, slots=True)
class WorkspaceRules:
    """What the workspace's ``kronika.toml`` says beyond its agents (``"settings"`` of a
    version 3 export; nothing for an older one): the storage-policy section
    (``[retention]`` and ``[[policy]]`` tables, as TOML text, ``""`` for none), the
    ``[teams]`` and the ``dm_channels`` setting."""

    storage_policies: str = ""
    teams: tuple[tuple[str, tuple[str, ...]], ...] = ()
    dm_channels: str | None = None


@dataclass(frozen=True, slots=True)
class Backup:
    version: int
    exported_at: str
    embedding_model: str | None
    agents: tuple[AgentBackup, ...]
    audit: tuple[AuditEntry, ...]
    rules: WorkspaceRules = WorkspaceRules()


def mtime_text(mtime_ns: int) -> str:
    """A file time as ISO 8601 UTC to the microsecond (what :func:`mtime_ns` reads)."""
    return (_EPOCH + timedelta(microseconds=mtime_ns // 1000)).isoformat()


def mtime_ns(text: str) -> int:
    """Nanoseconds since the epoch of an ISO 8601 time (no zone means UTC)."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1000


def markdown_files(data: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    """``(agent/path, text, modification time in ns or None)`` of every file of a whole
    export, agent by agent: what ``kronika export --markdown`` writes and the server zips."""
    found = []
    for name, agent in data["agents"].items():
        times = agent.get("file_times", {})
        for rel, text in agent["files"].items():
            when = times.get(rel)
            found.append((f"{name}/{rel}", text, mtime_ns(when) if when is not None else None))
    return found


def read_backup(data: Any) -> Backup:
    """Check a parsed export from top to bottom; the first problem is an error."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ImportFormatError(f'not a kronika export (expected "format": "{FORMAT}")')
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < OLDEST_VERSION:
        raise ImportFormatError(f"unsupported export version {version!r}")
    if version > VERSION:
        raise ImportFormatError(
            f"this export is format version {version}, written by a newer kronika; this"
            f" kronika reads versions {OLDEST_VERSION} to {VERSION}: upgrade kronika to import it"
        )
    if data.get("view") is not None:
        raise ImportFormatError(
            "this export is a view (made with --user, --channel, --team, --tenant or"
            " --scope): it holds only some items, not the files; export without them for"
            " a backup"
        )
    agents = data.get("agents")
    if not isinstance(agents, dict):
        raise ImportFormatError('the export has no "agents" table')
    model = data.get("embedding_model")
    audit = data.get("audit", [])
    if not isinstance(audit, list):
        raise ImportFormatError('"audit" must be a list')
    return Backup(
        version=version,
        exported_at=str(data.get("exported_at", "")),
        embedding_model=model if isinstance(model, str) else None,
        agents=tuple(_agent(name, agents[name]) for name in sorted(agents)),
        audit=tuple(_audit_entry(n, raw) for n, raw in enumerate(audit)),
        rules=_rules(data.get("settings")) if version >= 3 else WorkspaceRules(),
    )


def _rules(raw: Any) -> WorkspaceRules:
    """The ``"settings"`` of a version 3 export, checked as ``kronika.toml`` would be."""
    if raw is None:
        return WorkspaceRules()
    if not isinstance(raw, dict):
        raise ImportFormatError('"settings" must be a table')
    section = raw.get("storage_policies", "")
    if not isinstance(section, str):
        raise ImportFormatError("settings.storage_policies: must be TOML text")
    try:
        policy_file.checked_section(section, "settings.storage_policies")
    except InvalidInput as exc:
        raise ImportFormatError(str(exc)) from None
    teams = raw.get("teams", {})
    if not isinstance(teams, dict):
        raise ImportFormatError("settings.teams: must be a table of member lists")
    for team, members in teams.items():
        if not team.strip() or not isinstance(members, list):
            raise ImportFormatError(f"settings.teams.{team}: must be a list of user names")
        if not all(isinstance(m, str) and m.strip() for m in members):
            raise ImportFormatError(f"settings.teams.{team}: must be a list of user names")
    dm = raw.get("dm_channels")
    if dm is not None and not isinstance(dm, str):
        raise ImportFormatError("settings.dm_channels: must be text")
    listed = tuple((str(team), tuple(teams[team])) for team in sorted(teams))
    return WorkspaceRules(section, listed, dm)


def _agent(name: Any, body: Any) -> AgentBackup:
    where = f"agents.{name}"
    try:
        validate_agent_name(name)
    except InvalidAgentName as exc:
        raise ImportFormatError(f"{where}: {exc}") from exc
    files = body.get("files") if isinstance(body, dict) else None
    if not isinstance(files, dict):
        raise ImportFormatError(f'{where}: no "files" table')
    times = body.get("file_times", {})
    if not isinstance(times, dict):
        raise ImportFormatError(f"{where}.file_times: must be a table of times")
    checked: list[tuple[str, str, int | None]] = []
    for rel in sorted(files):
        _check_path(f"{where}.files", rel)
        text = files[rel]
        if not isinstance(text, str):
            raise ImportFormatError(f"{where}.files[{rel!r}]: file content must be a string")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ImportFormatError(f"{where}.files[{rel!r}]: not valid text ({exc})") from exc
        checked.append((rel, text, _time(f"{where}.file_times[{rel!r}]", times.get(rel))))
    unknown = sorted(set(times) - set(files))
    if unknown:
        raise ImportFormatError(f"{where}.file_times: {unknown[0]!r} is not among its files")
    items = body.get("items", [])
    if not isinstance(items, list):
        raise ImportFormatError(f"{where}.items: must be a list")
    usage = tuple(_usage(f"{where}.items[{n}]", raw) for n, raw in enumerate(items))
    return AgentBackup(name, tuple(checked), usage, _policy(f"{where}.policy", body.get("policy")))


def _check_path(where: str, rel: Any) -> None:
    pure = PurePosixPath(rel) if isinstance(rel, str) else None
    if (
        pure is None
        or pure.is_absolute()
        or pure.as_posix() != rel
        or "\\" in rel
        or any(ord(c) < 32 or c == "\x7f" for c in rel)  # NUL or a line break: no file name
        or any(part in ("", ".", "..") or part.startswith(".") for part in pure.parts)
        or pure.suffix != ".md"
    ):
        raise ImportFormatError(
            f"{where}: refusing {rel!r}: not the path of a Markdown file inside the agent"
        )


def _time(where: str, raw: Any) -> int | None:
    if raw is None:
        return None
    try:
        return mtime_ns(raw)
    except (TypeError, ValueError) as exc:
        raise ImportFormatError(f"{where}: not an ISO 8601 time: {raw!r}") from exc


def _usage(where: str, raw: Any) -> Usage:
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        raise ImportFormatError(f'{where}: an item must be an object with an "id"')
    count = raw.get("access_count", 0)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ImportFormatError(f"{where}.access_count: must be a whole number >= 0")
    last = raw.get("last_accessed_at")
    try:
        when = None if last is None else datetime.fromisoformat(last)
    except (TypeError, ValueError) as exc:
        raise ImportFormatError(f"{where}.last_accessed_at: not an ISO 8601 time") from exc
    return Usage(raw["id"], count, when)


def _policy(where: str, raw: Any) -> AgentPolicy | None:
    if raw is None:
        return None
    autonomy = raw.get("autonomy") if isinstance(raw, dict) else None
    writers = raw.get("writers", []) if isinstance(raw, dict) else None
    if not isinstance(autonomy, int) or isinstance(autonomy, bool) or autonomy not in range(4):
        raise ImportFormatError(f"{where}.autonomy: must be 0, 1, 2 or 3")
    if not isinstance(writers, list) or not all(isinstance(w, str) for w in writers):
        raise ImportFormatError(f"{where}.writers: must be a list of agent names")
    tenant = raw.get("tenant")
    if tenant is not None and (not isinstance(tenant, str) or not tenant.strip()):
        raise ImportFormatError(f"{where}.tenant: must be a tenant name")
    return AgentPolicy(autonomy=autonomy, writers=tuple(writers), tenant=tenant)


_AUDIT_FIELDS = {f.name for f in fields(AuditEntry)}
_AUDIT_REQUIRED = {f.name for f in fields(AuditEntry) if f.default is MISSING}


def _audit_entry(number: int, raw: Any) -> AuditEntry:
    where = f"audit[{number}]"
    if not isinstance(raw, dict) or not _AUDIT_REQUIRED <= set(raw) <= _AUDIT_FIELDS:
        raise ImportFormatError(f"{where}: must have {', '.join(sorted(_AUDIT_REQUIRED))}")
    texts = {k: v for k, v in raw.items() if k in _AUDIT_REQUIRED - {"at", "item_id"}}
    optional = (raw.get(name) for name in ("item_id", "api_key", "user"))
    if not all(isinstance(v, str) for v in texts.values()) or not all(
        isinstance(v, str | None) for v in optional
    ):
        raise ImportFormatError(f"{where}: every field but item_id must be text")
    try:
        at = datetime.fromisoformat(raw["at"])
    except (TypeError, ValueError) as exc:
        raise ImportFormatError(f"{where}.at: not an ISO 8601 time: {raw['at']!r}") from exc
    return AuditEntry(**{**raw, "at": at})
