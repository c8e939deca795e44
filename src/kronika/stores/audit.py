"""The audit trail: one JSON object per line in ``<home>/audit.jsonl`` (SPEC C5).

Append-only and flushed to disk on every entry, so the trail survives a crash. A line
that cannot be read (a torn last line after a power cut) is skipped, never fatal.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from kronika.errors import WorkspaceError
from kronika.ports import AuditEntry
from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.private import make_private_dir, open_private


class JsonlAuditLog:
    """:class:`~kronika.ports.AuditLog` kept as JSON lines in one file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, entry: AuditEntry) -> None:
        record = asdict(entry)
        record["at"] = entry.at.isoformat()
        line = json.dumps(record, ensure_ascii=False) + "\n"
        try:
            make_private_dir(self.path.parent)
            fd = open_private(self.path, os.O_WRONLY | os.O_APPEND)
            with open(fd, "a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise WorkspaceError(f"cannot append to the audit trail {self.path}: {exc}") from exc

    def redact(self, agent: str, pattern: re.Pattern[str], marker: str) -> int:
        """Replace what ``pattern`` matches in the summaries of ``agent``'s entries with
        ``marker``; the file is rewritten whole, atomically. A line that cannot be read
        (a torn one) is redacted as text. Returns how many lines changed."""
        if not self.path.is_file():
            return 0
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").split("\n")
        except OSError as exc:
            raise WorkspaceError(f"cannot read the audit trail {self.path}: {exc}") from exc
        changed = 0
        for n, line in enumerate(lines):
            new = _redacted_line(line, agent, pattern, marker)
            if new != line:
                lines[n] = new
                changed += 1
        if changed:
            try:
                atomic_write_text(self.path, "\n".join(lines))
            except OSError as exc:
                raise WorkspaceError(f"cannot rewrite the audit trail {self.path}: {exc}") from exc
        return changed

    def read(self, agent: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        """Entries oldest first (the last ``limit`` when given), for one agent or all."""
        if not self.path.is_file():
            return []
        entries: list[AuditEntry] = []
        with self.path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    raw = json.loads(line)
                    raw["at"] = datetime.fromisoformat(raw["at"])
                    entry = AuditEntry(**raw)
                except (ValueError, TypeError, KeyError):
                    continue
                if agent is None or entry.target_agent == agent:
                    entries.append(entry)
        return entries[-limit:] if limit else entries


def _redacted_line(line: str, agent: str, pattern: re.Pattern[str], marker: str) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return pattern.sub(marker, line) if line.strip() else line
    if not isinstance(record, dict) or record.get("target_agent") != agent:
        return line
    summary = record.get("summary")
    if not isinstance(summary, str) or not pattern.search(summary):
        return line
    record["summary"] = pattern.sub(marker, summary)
    return json.dumps(record, ensure_ascii=False)
