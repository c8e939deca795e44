from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika.errors import ImportFormatError
from kronika.importers import clean_evidence, read_locomo


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


CONVERSATION = {
    "sample_id": "conv-1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat."},
            {
                "speaker": "Ben",
                "dia_id": "D1:2",
                "text": "Look at this!",
                "img_url": ["http://example.invalid/x.jpg"],
                "blip_caption": "a photo of a red kayak",
            },
        ],
        "session_2_date_time": "10:04 am on 19 June, 2023",
        "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "The cat is called Miso."}],
        "session_3_date_time": "9:00 am on 1 July, 2023",
    },
    "qa": [
        {"question": "What pet?", "answer": "a cat", "evidence": ["D1:1"], "category": 4},
        {"question": "Name?", "answer": 7, "evidence": ["D1:1; D2:1", "D9:9"], "category": 1},
        {"question": "Odd?", "adversarial_answer": "no", "evidence": ["D"], "category": 5},
    ],
}


def test_sessions_turns_and_dates(tmp_path: Path) -> None:
    (conv,) = read_locomo(_write(tmp_path, [CONVERSATION]))
    assert conv.agent == "conv-1"
    assert [s.session_id for s in conv.sessions] == ["conv-1-s1", "conv-1-s2"]  # s3 has no turns
    assert conv.sessions[0].started_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert conv.sessions[1].started_at == datetime(2023, 6, 19, 10, 4, tzinfo=UTC)
    first, second = conv.sessions[0].turns
    assert (first.turn_id, first.speaker, first.content) == ("D1:1", "Ana", "I adopted a cat.")
    assert second.content == "Look at this! [shared a photo of a red kayak]"
    assert second.at is None


def test_evidence_is_cleaned_and_answers_kept(tmp_path: Path) -> None:
    (conv,) = read_locomo(_write(tmp_path, [CONVERSATION]))
    assert [q.evidence for q in conv.qa] == [("D1:1",), ("D1:1", "D2:1"), ()]
    assert [q.answer for q in conv.qa] == ["a cat", "7", "no"]
    assert [q.category for q in conv.qa] == [4, 1, 5]


def test_clean_evidence_splits_on_separators() -> None:
    known = frozenset({"D1:1", "D2:3", "D4:5"})
    assert clean_evidence(["D1:1,D2:3 D4:5", "D1:1"], known) == ("D1:1", "D2:3", "D4:5")
    assert clean_evidence(["D:11:26"], known) == ()


def test_not_a_list_is_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="list of conversations"):
        read_locomo(_write(tmp_path, {"sample_id": "x"}))


def test_unreadable_session_date_is_named(tmp_path: Path) -> None:
    broken = json.loads(json.dumps(CONVERSATION))
    broken["conversation"]["session_2_date_time"] = "sometime"
    with pytest.raises(ImportFormatError, match="session_2"):
        read_locomo(_write(tmp_path, [broken]))
