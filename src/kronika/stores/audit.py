"""The audit trail: one JSON object per line in ``<home>/audit.jsonl`` (SPEC C5).

Append-only and flushed to disk on every entry, so the trail survives a crash (by
the group commit of the write under way, when there is one: :mod:`kronika.stores.durable`). A line
that cannot be read (a torn last line after a power cut) is skipped, never fatal, and
said in :attr:`JsonlAuditLog.notes`; an entry appended after a torn line starts a line
of its own, so the torn bytes never swallow it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import fields
from datetime import datetime
from pathlib import Path

from kronika.core.redaction import Phrases
from kronika.errors import WorkspaceError
from kronika.ports import AuditEntry
from kronika.stores import held
from kronika.stores.durable import flush
from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.private import make_private_dir, open_private

_FIELDS = tuple(f.name for f in fields(AuditEntry))


class JsonlAuditLog:
    """:class:`~kronika.ports.AuditLog` kept as JSON lines in one file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.notes: list[str] = []  # damage met while reading (torn lines)
        self._size = held.SizeRecord(path.parent, path.name)  # what it held (doctor)

    def append(self, entry: AuditEntry) -> None:
        self.append_many((entry,))

    def append_many(self, entries: Sequence[AuditEntry]) -> None:
        """Append ``entries`` in order, in one write (a batch's entries)."""
        lines = []
        for entry in entries:
            record = {name: getattr(entry, name) for name in _FIELDS}  # flat: no deep copy
            record["at"] = entry.at.isoformat()
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
        if not lines:
            return
        text = "".join(lines)
        try:
            try:
                fd = open_private(self.path, os.O_RDWR | os.O_APPEND)
            except FileNotFoundError:  # its folder is made once, not looked for each time
                make_private_dir(self.path.parent)
                fd = open_private(self.path, os.O_RDWR | os.O_APPEND)
            with open(fd, "a+b") as handle:
                size = handle.seek(0, os.SEEK_END)
                if size > 0:
                    handle.seek(-1, os.SEEK_END)
                    if handle.read(1) != b"\n":  # a torn last line: close it first
                        text = "\n" + text
                data = text.encode("utf-8")
                handle.write(data)
                handle.flush()
                flush(handle.fileno())
            self._size.appended(size, size + len(data))
        except OSError as exc:
            raise WorkspaceError(f"cannot append to the audit trail {self.path}: {exc}") from exc

    def redact(self, agent: str, pattern: Phrases, marker: str) -> int:
        """Replace what ``pattern`` matches in the summaries of ``agent``'s entries with
        ``marker``; the file is rewritten whole, atomically. A line that cannot be read
        (a torn one) is redacted as text. Returns how many lines changed."""
        whole = self._text()
        if whole is None:
            return 0
        lines = whole.split("\n")
        changed = 0
        # only lines in blocks holding a word of every phrase of one are parsed
        for n in pattern.which_may_match(lines, _readable):
            line = lines[n]
            new = _redacted_line(line, agent, pattern, marker)
            if new != line:
                lines[n] = new
                changed += 1
        if changed:
            text = "\n".join(lines)
            try:
                atomic_write_text(self.path, text)
            except OSError as exc:
                raise WorkspaceError(f"cannot rewrite the audit trail {self.path}: {exc}") from exc
            self._size.rewritten(len(text.encode("utf-8")))
        return changed

    def mentioning(self, agent: str, pattern: Phrases) -> int:
        """How many of ``agent``'s entries hold a match in their summary; only the lines
        of blocks holding a word of every phrase of one are parsed."""
        whole = self._text()
        if whole is None:
            return 0
        lines = whole.split("\n")
        maybe = [(n + 1, lines[n]) for n in pattern.which_may_match(lines, _readable)]
        # some lines only: their torn ones are not said (audit() and doctor say them all)
        entries = self._entries(maybe, agent, noting=False)
        return sum(1 for e in entries if pattern.search(e.summary))

    def _text(self) -> str | None:
        """The trail's text, its line ends read as ``\\n`` (None: there is none yet)."""
        if not self.path.is_file():
            return None
        try:
            return self.path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise WorkspaceError(f"cannot read the audit trail {self.path}: {exc}") from exc

    def read(self, agent: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        """Entries oldest first (the last ``limit`` when given), for one agent or all."""
        if not self.path.is_file():
            return []
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise WorkspaceError(f"cannot read the audit trail {self.path}: {exc}") from exc
        lines = data.decode("utf-8", errors="replace").split("\n")
        entries = self._entries(enumerate(lines, 1), agent)
        return entries[-limit:] if limit else entries

    def _entries(
        self, lines: Iterable[tuple[int, str]], agent: str | None, *, noting: bool = True
    ) -> list[AuditEntry]:
        """The entries of the numbered ``lines``, for one agent or all; unreadable lines
        are skipped, and said in :attr:`notes` when ``noting``. Lines end at ``\n``
        only: JSON leaves U+2028 and NEL in a string as they are, and
        ``str.splitlines`` would cut the entry there."""
        entries: list[AuditEntry] = []
        torn: list[int] = []
        for number, line in lines:
            entry = parse_line(line)
            if entry is None:
                if line.strip():
                    torn.append(number)
                continue
            if agent is None or entry.target_agent == agent:
                entries.append(entry)
        if torn and noting:
            which = ", ".join(map(str, torn[:5])) + (" …" if len(torn) > 5 else "")
            note = (
                f"{self.path}: {len(torn)} unreadable line(s) skipped (line {which}; a torn "
                "write?); the file is left as it is (`kronika doctor` shows them)"
            )
            if note not in self.notes:
                self.notes.append(note)
        return entries


def parse_line(line: str) -> AuditEntry | None:
    """One audit line as an entry; ``None`` if it is not one (torn, damaged)."""
    try:
        raw = json.loads(line)
        raw["at"] = datetime.fromisoformat(raw["at"])
        # fields a later kronika adds are left out, not taken for damage
        return AuditEntry(**{name: raw[name] for name in _FIELDS if name in raw})
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


_ESCAPE = re.compile(r"\\(?:u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|u([0-9a-f]{4})|(.))", re.I)
_ESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescaped(m: re.Match[str]) -> str:
    high, low, code, char = m.groups()
    if high is not None:  # a pair of surrogates: the one character JSON reads
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
    if code is not None:
        return chr(int(code, 16))
    return _ESCAPED.get(char, char)


def _readable(text: str) -> str:
    """Every word a summary of ``text``'s lines can hold: the lines as written (a torn
    line is redacted as text) and again with JSON's escapes read (``\\n``, ``\\u0105``),
    as ``json`` reads a string; without a backslash, the text itself."""
    if "\\" not in text:
        return text
    return text + "\n" + _ESCAPE.sub(_unescaped, text)


def _redacted_line(line: str, agent: str, pattern: Phrases, marker: str) -> str:
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
