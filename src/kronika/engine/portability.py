"""Export everything kronika keeps, and import such an export elsewhere (SPEC C4).

An export is one JSON document: every Markdown file of every agent, verbatim (the
truth, so nothing is lost), the items derived from them (readable for an audit),
and the audit trail. Importing writes the files back through the single write
path and re-indexes; exporting the result again gives the same files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from kronika.core.serialize import item_to_dict
from kronika.engine.write import USER, RestoreFile, safe_agent_path
from kronika.errors import ImportFormatError
from kronika.memory import Memory

FORMAT = "kronika-export"
VERSION = 1


def export_memory(memory: Memory, agents: Sequence[str] | None = None) -> dict[str, Any]:
    """Everything kept for ``agents`` (all by default) as a JSON-ready dict."""
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
        for path in sorted(agent_dir.rglob("*.md")):
            rel = path.relative_to(agent_dir).as_posix()
            if any(part.startswith(".") for part in rel.split("/")):
                continue
            files[rel] = path.read_text(encoding="utf-8", errors="replace")
        items = memory.items(agent=name, include_superseded=True)
        out["agents"][name] = {
            "files": files,
            "items": [item_to_dict(item) for item in items],
        }
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


def import_export(memory: Memory, data: Any, *, replace_existing: bool = False) -> dict[str, int]:
    """Write an export's files into this workspace and index them.

    An agent that already exists here is refused unless ``replace_existing`` is set
    (then its files named in the export are overwritten; others stay).
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ImportFormatError('not a kronika export (expected "format": "kronika-export")')
    if data.get("version") != VERSION:
        raise ImportFormatError(f"unsupported export version {data.get('version')!r}")
    agents = data.get("agents")
    if not isinstance(agents, dict):
        raise ImportFormatError('the export has no "agents" table')
    counts = {"agents": 0, "files": 0}
    for name, body in agents.items():
        files = body.get("files") if isinstance(body, dict) else None
        if not isinstance(files, dict):
            raise ImportFormatError(f'agent {name!r} in the export has no "files" table')
        if memory.workspace.has_agent(name) and not replace_existing:
            raise ImportFormatError(
                f"agent {name!r} already exists here; pass --replace to overwrite its files"
            )
        agent_dir = memory.workspace.agent_dir(name)
        for rel, text in files.items():
            if not isinstance(text, str):
                raise ImportFormatError(f"{name}/{rel}: file content must be a string")
            safe_agent_path(agent_dir, rel)
        memory.create_agent(name)
        for rel, text in sorted(files.items()):
            memory.memory_write(name, "import", RestoreFile(rel, text), USER)
            counts["files"] += 1
        counts["agents"] += 1
    return counts
