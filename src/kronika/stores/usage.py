"""The model-usage ledger: one JSON object per line in ``<home>/usage.jsonl``.

Append-only like the audit trail; a torn line (a crash mid-write) is skipped when read.
It holds counts and times, never prompt or reply text.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from kronika.core.usage import UsageEntry
from kronika.errors import WorkspaceError
from kronika.stores.private import open_private


class JsonlUsageLedger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, entry: UsageEntry) -> None:
        record = asdict(entry)
        record["at"] = entry.at.isoformat()
        line = "\n" + json.dumps(record, ensure_ascii=False) + "\n"
        try:
            if not self.path.parent.is_dir():  # only `kronika init` makes a workspace
                raise FileNotFoundError(f"no folder {self.path.parent}")
            fd = open_private(self.path, os.O_WRONLY | os.O_APPEND)
            with open(fd, "ab") as handle:
                # The leading newline closes a torn last line; blank lines are skipped.
                handle.write(line.encode("utf-8"))
        except OSError as exc:
            raise WorkspaceError(f"cannot append to the usage ledger {self.path}: {exc}") from exc

    def read(self, since: datetime | None = None) -> list[UsageEntry]:
        """Entries oldest first (from ``since`` on, when given)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise WorkspaceError(f"cannot read the usage ledger {self.path}: {exc}") from exc
        entries: list[UsageEntry] = []
        for line in data.decode("utf-8", errors="replace").splitlines():
            entry = _parse(line)
            if entry is not None and (since is None or entry.at >= since):
                entries.append(entry)
        return entries


def _parse(line: str) -> UsageEntry | None:
    if not line.strip():
        return None
    try:
        raw = json.loads(line)
        raw["at"] = datetime.fromisoformat(raw["at"])
        return UsageEntry(**raw)
    except (ValueError, TypeError, KeyError):
        return None


LESSON_USES_FILE = "lesson_uses.jsonl"


class JsonlLessonUses:
    """``lesson_uses.jsonl``: one line per prompt payload built in a conversation, with
    the ids of the lessons it carried (none is a line too: it is the denominator of the
    share of payloads that used a lesson)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, at: datetime, agent: str, session: str, lessons: list[str]) -> None:
        record = {"at": at.isoformat(), "agent": agent, "session": session, "lessons": lessons}
        try:
            if not self.path.parent.is_dir():
                return
            fd = open_private(self.path, os.O_WRONLY | os.O_APPEND)
            with open(fd, "ab") as handle:
                handle.write(("\n" + json.dumps(record) + "\n").encode("utf-8"))
        except OSError:
            return  # a statistic: never stop a conversation for it

    def read(self) -> list[dict[str, object]]:
        try:
            data = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        rows: list[dict[str, object]] = []
        for line in data.splitlines():
            try:
                row = json.loads(line) if line.strip() else None
            except ValueError:
                continue
            if isinstance(row, dict):
                rows.append(row)
        return rows
