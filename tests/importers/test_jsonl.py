from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika.errors import ImportFormatError
from kronika.importers import read_jsonl

START = datetime(2025, 1, 2, 3, 4, tzinfo=UTC)


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_groups_sessions_and_fills_ids(tmp_path: Path) -> None:
    rows = [
        {"session": "s1", "role": "user", "content": "hello", "at": "2025-11-27T10:00:00Z"},
        {"session": "s2", "speaker": "Ana", "text": "other chat"},
        {"session": "s1", "role": "assistant", "content": "hi!", "id": "custom"},
        {"session": "s1", "role": "user", "content": "bye"},
    ]
    lines = [json.dumps(r) for r in rows]
    lines.insert(1, "")  # blank lines are allowed
    s1, s2 = read_jsonl(_write(tmp_path, lines), default_start=START)
    assert [t.turn_id for t in s1.turns] == ["s1_1", "custom", "s1_3"]
    assert s1.started_at == datetime(2025, 11, 27, 10, 0, tzinfo=UTC)
    assert s1.turns[0].at == s1.started_at
    assert (s2.turns[0].speaker, s2.turns[0].content, s2.started_at) == ("Ana", "other chat", START)


def test_a_line_separator_inside_a_message_stays_in_it(tmp_path: Path) -> None:
    # JSON writers (Python's json with ensure_ascii=False among them) leave U+2028,
    # U+2029 and NEL in a string as they are: the line ends at "\n" only.
    said = "first line\u2028second\u2029third\x85fourth\x0cfifth"
    rows = [
        {"session": "s1", "role": "user", "content": said},
        {"session": "s1", "role": "assistant", "content": "noted"},
    ]
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    assert "\u2028" in lines[0]  # written raw, not escaped
    (s1,) = read_jsonl(_write(tmp_path, lines), default_start=START)
    assert [t.content for t in s1.turns] == [said, "noted"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "line 2: not valid JSON"),
        ('["a list"]', "line 2: expected a JSON object"),
        ('{"session": "../etc", "role": "u", "content": "x"}', "line 2: 'session'"),
        ('{"session": "s1", "content": "x"}', "line 2: missing 'role'"),
        ('{"session": "s1", "role": "u", "content": ""}', "line 2: 'content'"),
        ('{"session": "s1", "role": "u", "content": "x", "at": "soon"}', "line 2: cannot read"),
        ('{"session": "s1", "role": "u", "content": "x", "id": "s1_1"}', "line 2: turn id"),
    ],
)
def test_bad_line_names_its_number(tmp_path: Path, bad: str, message: str) -> None:
    good = '{"session": "s1", "role": "user", "content": "fine"}'
    with pytest.raises(ImportFormatError, match=message):
        read_jsonl(_write(tmp_path, [good, bad]), default_start=START)


def test_missing_file_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="cannot read"):
        read_jsonl(tmp_path / "absent.jsonl")
