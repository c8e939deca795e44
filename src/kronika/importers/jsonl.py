"""Read a plain chat log in JSON Lines: one turn per line (format in ``docs/import.md``).

::

    {"session": "s1", "role": "user", "content": "hi", "at": "2025-11-27T10:00:00Z", "id": "t1"}

``role`` may be spelled ``speaker`` and ``content`` may be spelled ``text``; ``at`` and
``id`` are optional, other keys are ignored. Turns are grouped by ``session`` in the
order sessions first appear; a turn without ``id`` gets ``f"{session}_{n}"`` with ``n``
its 1-based position in the session. A session starts at its earliest ``at``, or at
``default_start`` (the file's modification time when not given) if no turn has one.
Blank lines are skipped; any other bad line raises :class:`ImportFormatError` naming
its line number.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kronika.core.model import SessionRecord, TurnRecord
from kronika.errors import ImportFormatError
from kronika.importers._common import parse_timestamp

SAMPLE_FILE = Path(__file__).parent / "data" / "sample.jsonl"
"""A short made-up conversation in this format, written for kronika's tour (three
sessions in 2025 between Maja and an assistant): ``kronika import sample``."""

# Session ids become file names (sessions/<id>.md), so they must be safe ones.
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(slots=True)
class _Draft:
    turns: list[TurnRecord] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)


def _text_field(obj: dict[str, Any], names: tuple[str, str], where: str) -> str:
    for name in names:
        if name in obj:
            value = obj[name]
            if not isinstance(value, str) or not value.strip():
                raise ImportFormatError(f"{where}: {name!r} must be a non-empty string")
            return value
    raise ImportFormatError(f"{where}: missing {names[0]!r} (or {names[1]!r})")


def _turn(obj: Any, draft: _Draft, session: str, where: str) -> TurnRecord:
    speaker = _text_field(obj, ("role", "speaker"), where)
    content = _text_field(obj, ("content", "text"), where)
    at = parse_timestamp(obj["at"], where) if obj.get("at") is not None else None
    raw_id = obj.get("id")
    if raw_id is None:
        turn_id = f"{session}_{len(draft.turns) + 1}"
    elif isinstance(raw_id, str | int) and str(raw_id).strip():
        turn_id = str(raw_id)
    else:
        raise ImportFormatError(f"{where}: 'id' must be a non-empty string")
    if turn_id in draft.ids:
        raise ImportFormatError(f"{where}: turn id {turn_id!r} repeats in session {session!r}")
    return TurnRecord(turn_id=turn_id, speaker=speaker, content=content, at=at)


def parse_jsonl_sessions(
    lines: list[str], *, default_start: datetime, source: str = "jsonl"
) -> list[SessionRecord]:
    """Sessions from the lines of a chat JSONL file (see the module docstring)."""
    drafts: dict[str, _Draft] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise ImportFormatError(f"{where}: expected a JSON object")
        session = obj.get("session")
        if not isinstance(session, str) or not _SESSION_ID.match(session):
            raise ImportFormatError(
                f"{where}: 'session' must be a safe id (letters, digits, '.', '_', '-')"
            )
        draft = drafts.setdefault(session, _Draft())
        turn = _turn(obj, draft, session, where)
        draft.turns.append(turn)
        draft.ids.add(turn.turn_id)
    sessions: list[SessionRecord] = []
    for session, draft in drafts.items():
        times = [t.at for t in draft.turns if t.at is not None]
        sessions.append(
            SessionRecord(
                session_id=session,
                started_at=min(times) if times else default_start,
                turns=tuple(draft.turns),
                source=source,
            )
        )
    return sessions


def read_jsonl(path: str | Path, *, default_start: datetime | None = None) -> list[SessionRecord]:
    """Sessions of a chat JSONL file; ``default_start`` defaults to the file's mtime (UTC)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
        mtime = p.stat().st_mtime
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFormatError(f"cannot read {p}: {exc}") from exc
    start = default_start or datetime.fromtimestamp(mtime, tz=UTC)
    # lines end at "\n" only: JSON leaves U+2028 and NEL in a string as they are
    return parse_jsonl_sessions(text.split("\n"), default_start=start, source=p.name)
