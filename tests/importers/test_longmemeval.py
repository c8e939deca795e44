from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika.errors import ImportFormatError
from kronika.importers import iter_longmemeval, read_longmemeval


def _question(qid: str = "q1", **extra: object) -> dict[str, object]:
    base: dict[str, object] = {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": "Where did I park?",
        "answer": "level 3",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["answer_ab_1", "other_2"],
        # Out of order on purpose: the importer must sort by date.
        "haystack_dates": ["2023/05/20 (Sat) 10:00", "2023/05/01 (Mon) 08:30"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "Hi there"},
                {"role": "assistant", "content": "Hello!", "has_answer": True},
                {"role": "user", "content": "I parked on level 3.", "has_answer": True},
            ],
            [{"role": "user", "content": "Recipe?"}, {"role": "assistant", "content": "Soup"}],
        ],
        "answer_session_ids": ["answer_ab_1"],
    }
    base.update(extra)
    return base


def test_sessions_sorted_and_dated(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([_question()]), encoding="utf-8")
    (q,) = read_longmemeval(path)
    assert [s.session_id for s in q.sessions] == ["other_2", "answer_ab_1"]
    assert q.sessions[0].started_at == datetime(2023, 5, 1, 8, 30, tzinfo=UTC)
    assert q.question_date == datetime(2023, 5, 30, 23, 40, tzinfo=UTC)
    ids = [t.turn_id for t in q.sessions[1].turns]
    assert ids == ["answer_ab_1_1", "answer_ab_1_2", "answer_ab_1_3"]
    assert q.gold_turns == {"answer_ab_1_2", "answer_ab_1_3"}


def test_user_only_keeps_the_official_numbering(tmp_path: Path) -> None:
    path = tmp_path / "lme.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump([_question()], fh)
    (q,) = read_longmemeval(path, roles=("user",))
    answer = q.sessions[1]
    assert [t.turn_id for t in answer.turns] == ["answer_ab_1_1", "answer_ab_1_3"]
    assert {t.speaker for s in q.sessions for t in s.turns} == {"user"}
    # The assistant's has_answer turn is not a user turn: not gold under the protocol.
    assert q.gold_turns == {"answer_ab_1_3"}
    assert q.gold_sessions == {"answer_ab_1"}


def test_gold_needs_user_side_evidence_and_abstention_is_flagged(tmp_path: Path) -> None:
    no_user_evidence = _question("q2_abs")
    sessions = no_user_evidence["haystack_sessions"]
    assert isinstance(sessions, list)
    sessions[0][2]["has_answer"] = False
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([no_user_evidence]), encoding="utf-8")
    (q,) = read_longmemeval(path, roles=("user",))
    assert q.gold_sessions == frozenset()
    assert q.is_abstention


def test_agent_name_is_safe(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([_question("gpt4/odd id"), _question("ok_1")]), encoding="utf-8")
    odd, ok = read_longmemeval(path)
    assert ok.agent == "ok_1"
    assert odd.agent.startswith("gpt4-odd-id-") and "/" not in odd.agent


def test_streaming_reads_many_questions_and_reports_bad_ones(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    items = [_question(f"q{i}") for i in range(30)]
    path.write_text(json.dumps(items, indent=1), encoding="utf-8")
    assert [q.question_id for q in iter_longmemeval(path)] == [f"q{i}" for i in range(30)]
    broken = _question("bad")
    del broken["haystack_dates"]
    path.write_text(json.dumps([_question(), broken]), encoding="utf-8")
    with pytest.raises(ImportFormatError, match="question 1"):
        read_longmemeval(path)
    path.write_text('[{"question_id": "x"', encoding="utf-8")
    with pytest.raises(ImportFormatError, match="not valid JSON"):
        read_longmemeval(path)
