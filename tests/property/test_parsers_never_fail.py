"""Command detection, time expressions and importers on generated input: they answer
or refuse with kronika's own error, and what they read keeps the user's words."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kronika.core.commands import CommandKind, detect_command
from kronika.core.timeexpr import parse_since, parse_until
from kronika.errors import ImportFormatError, InvalidQuery
from kronika.importers.jsonl import parse_jsonl_sessions
from kronika.importers.locomo import read_locomo
from kronika.importers.longmemeval import read_longmemeval

NOW = datetime(2025, 11, 27, 12, 0, tzinfo=UTC)
TMP = {"suppress_health_check": [HealthCheck.function_scoped_fixture]}


@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_any_message_is_a_command_or_not_and_its_argument_is_the_users_words(text: str) -> None:
    found = detect_command(text)
    if found is not None and found.argument is not None:
        assert found.argument in text
        assert found.argument == found.argument.strip()


plain_words = st.lists(
    st.sampled_from(["green", "tea", "Kraków", "mate", "чай", "herbata", "vinyl", "42", "Ana"]),
    min_size=1,
    max_size=5,
).map(" ".join)
lead_ins = st.sampled_from(
    ["remember that ", "remember: ", "zapamiętaj, że ", "recordá que ", "запам'ятай, що "]
)
endings = st.sampled_from(["", ".", "!", " please", ", please.", "…", " 🙂"])


@given(lead_ins, plain_words, endings, st.sampled_from(["", "“", '"', "«"]))
@settings(max_examples=300, deadline=None)
def test_remember_in_any_language_keeps_exactly_the_words_to_remember(
    lead: str, words: str, ending: str, quote: str
) -> None:
    close = {"“": "”", '"': '"', "«": "»", "": ""}[quote]
    found = detect_command(f"{lead}{quote}{words}{close}{ending}")
    assert found is not None and found.kind is CommandKind.REMEMBER
    assert found.argument == words


expressions = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"\d{1,6}(-\d{1,3}(-\d{1,3})?)?", fullmatch=True),
    st.from_regex(r"\d{1,7} ?(s|m|h|d|w|mo|y|days|weeks|months|years)( ago)?", fullmatch=True),
    st.sampled_from(["today", "yesterday", "now", "last week", "this month", "9999-12-31"]),
)


@given(expressions)
@settings(max_examples=400, deadline=None)
def test_a_time_expression_is_understood_or_refused_clearly(expr: str) -> None:
    try:
        since, until = parse_since(expr, NOW), parse_until(expr, NOW)
    except InvalidQuery as exc:
        assert repr(expr) in str(exc)
        return
    assert since.tzinfo is not None and until.tzinfo is not None
    assert since <= until


# --- importers -------------------------------------------------------------------------

texts = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40).filter(
    lambda s: s.strip()
)
session_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,10}", fullmatch=True)


@given(
    st.lists(
        st.tuples(session_ids, st.sampled_from(["user", "assistant", "Ana"]), texts),
        min_size=1,
        max_size=12,
    )
)
@settings(max_examples=150, deadline=None)
def test_a_chat_log_keeps_every_turn_in_order(rows: list[tuple[str, str, str]]) -> None:
    lines = [json.dumps({"session": s, "role": r, "content": c}) for s, r, c in rows]
    sessions = parse_jsonl_sessions(lines, default_start=NOW)
    assert [s.session_id for s in sessions] == list(dict.fromkeys(s for s, _, _ in rows))
    for session in sessions:
        mine = [(r, c) for s, r, c in rows if s == session.session_id]
        assert [(t.speaker, t.content) for t in session.turns] == mine


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)


@given(st.lists(json_values | st.text(max_size=30), max_size=4))
@settings(max_examples=300, deadline=None)
def test_a_bad_chat_log_line_is_refused_with_its_line_number(rows: list[Any]) -> None:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    try:
        parse_jsonl_sessions(lines, default_start=NOW)
    except ImportFormatError as exc:
        assert "line" in str(exc)


def _locomo(turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    conv: dict[str, Any] = {"speaker_a": "Ana", "speaker_b": "Bo"}
    conv["session_1_date_time"] = "1:56 pm on 8 May, 2023"
    conv["session_1"] = [
        {"speaker": sp, "dia_id": f"D1:{n}", "text": text} for n, (sp, text) in enumerate(turns, 1)
    ]
    qa = [{"question": "q?", "answer": "a", "evidence": ["D1:1"], "category": 1}]
    return [{"sample_id": "conv-x", "conversation": conv, "qa": qa}]


def _damage(data: Any, path: list[Any], value: Any) -> Any:
    """``data`` with the node at ``path`` replaced by ``value`` (or removed for ...)."""
    if not path:
        return None if value is ... else value
    head, *rest = path
    if isinstance(data, list) and isinstance(head, int) and head < len(data):
        copy = list(data)
        if rest or value is not ...:
            copy[head] = _damage(copy[head], rest, value)
        else:
            del copy[head]
        return copy
    if isinstance(data, dict) and head in data:
        copy = dict(data)
        if rest or value is not ...:
            copy[head] = _damage(copy[head], rest, value)
        else:
            del copy[head]
        return copy
    return data


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for n, value in enumerate(data):
            found += _paths(value, (*prefix, n))
    return found


@given(
    st.lists(st.tuples(st.sampled_from(["Ana", "Bo"]), texts), min_size=1, max_size=5),
    st.data(),
)
@settings(max_examples=200, deadline=None, **TMP)
def test_a_locomo_file_is_read_whole_or_refused(
    tmp_path: Path, turns: list[tuple[str, str]], data: st.DataObject
) -> None:
    good = _locomo(turns)
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(good), encoding="utf-8")
    (conversation,) = read_locomo(path)
    assert [(t.speaker, t.content) for t in conversation.sessions[0].turns] == turns

    where = data.draw(st.sampled_from(_paths(good)))
    bad = _damage(good, list(where), data.draw(st.just(...) | json_values))
    path.write_text(json.dumps(bad), encoding="utf-8")
    with contextlib.suppress(ImportFormatError):  # refused clearly, or read
        read_locomo(path)


def _longmemeval(turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [
        {
            "question_id": "q1",
            "question_type": "single-session-user",
            "question": "what?",
            "answer": "that",
            "question_date": "2023/05/20 (Sat) 02:21",
            "haystack_session_ids": ["answer_1"],
            "haystack_dates": ["2023/05/20 (Sat) 02:00"],
            "haystack_sessions": [
                [{"role": r, "content": c, "has_answer": n == 0} for n, (r, c) in enumerate(turns)]
            ],
            "answer_session_ids": ["answer_1"],
        }
    ]


@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant"]), texts), min_size=1, max_size=5),
    st.data(),
)
@settings(max_examples=200, deadline=None, **TMP)
def test_a_longmemeval_file_is_read_whole_or_refused(
    tmp_path: Path, turns: list[tuple[str, str]], data: st.DataObject
) -> None:
    good = _longmemeval(turns)
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(good), encoding="utf-8")
    (question,) = read_longmemeval(path)
    assert [(t.speaker, t.content) for t in question.sessions[0].turns] == turns
    assert question.evidence_turns == {"answer_1_1"}

    where = data.draw(st.sampled_from(_paths(good)))
    bad = _damage(good, list(where), data.draw(st.just(...) | json_values))
    path.write_text(json.dumps(bad), encoding="utf-8")
    with contextlib.suppress(ImportFormatError):  # refused clearly, or read
        read_longmemeval(path)


@pytest.mark.parametrize("start", [NOW, NOW - timedelta(days=400)])
def test_the_default_start_of_a_chat_log_is_kept(start: datetime) -> None:
    (session,) = parse_jsonl_sessions(
        ['{"session": "s", "role": "u", "content": "x"}'], default_start=start
    )
    assert session.started_at == start
