"""The model-usage ledger: one JSON object per line in ``<home>/usage.jsonl``.

Append-only like the audit trail; a torn line (a crash mid-write) is skipped when read.
It holds counts and times, never prompt or reply text.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from kronika.core.usage import UsageEntry
from kronika.errors import WorkspaceError
from kronika.stores.private import open_private

USAGE_FILE = "usage.jsonl"
"""The ledger's file in the workspace folder."""


class JsonlUsageLedger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, entry: UsageEntry) -> None:
        record = asdict(entry)
        record["at"] = entry.at.isoformat()
        try:
            _append_line(self.path, record)
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
        for line in data.decode("utf-8", errors="replace").split("\n"):
            entry = _parse(line)
            if entry is not None and (since is None or entry.at >= since):
                entries.append(entry)
        return entries


def _append_line(path: Path, record: Mapping[str, object]) -> None:
    """Append ``record`` as one JSON line (the file made ``0600`` when new). The leading
    newline closes a torn last line; readers skip blank lines. Raises ``OSError``, also
    when the workspace folder is missing (only ``kronika init`` makes one)."""
    if not path.parent.is_dir():
        raise FileNotFoundError(f"no folder {path.parent}")
    fd = open_private(path, os.O_WRONLY | os.O_APPEND)
    with open(fd, "ab") as handle:
        handle.write(("\n" + json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))


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
        with contextlib.suppress(OSError):  # a statistic: never stop a conversation for it
            _append_line(self.path, record)

    def read(self) -> list[dict[str, object]]:
        try:
            data = self.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        rows: list[dict[str, object]] = []
        for line in data.split("\n"):  # U+2028 and NEL stay inside a JSON string
            try:
                row = json.loads(line) if line.strip() else None
            except ValueError:
                continue
            if isinstance(row, dict):
                rows.append(row)
        return rows
