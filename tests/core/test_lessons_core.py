"""Lessons: the deterministic evaluators and the score that retires a lesson (F2, F3)."""

from __future__ import annotations

from datetime import UTC, datetime

from kronika.core.lessons import (
    Lesson,
    cause_of,
    credited,
    exit_code,
    json_schema,
    score,
    suite_result,
    tool_status,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def lesson(**kw: object) -> Lesson:
    base: dict[str, object] = {
        "id": "l-1",
        "agent": "a",
        "kind": "reflection",
        "text": "t",
        "cause": "c",
        "created_at": T0,
        "updated_at": T0,
    }
    base.update(kw)
    return Lesson(**base)  # type: ignore[arg-type]


def test_exit_codes_test_reports_and_tool_statuses_are_judged_with_their_reasons() -> None:
    assert exit_code(0).is_ok and exit_code(0).reasons == ()
    failed = exit_code(2, "warning: x\nerror: relation users does not exist\n")
    assert not failed.is_ok
    assert failed.reasons == ("exit code 2: error: relation users does not exist",)
    report = suite_result(8, 2, names=["test_a", "test_b"])
    assert not report.is_ok and report.score == 0.8
    assert report.reasons == ("2 of 10 tests failed: test_a, test_b",)
    assert suite_result(0, 0).reasons == ("no tests ran",)
    assert tool_status("OK").is_ok and not tool_status("timeout", "no answer in 30 s").is_ok


def test_json_values_are_checked_against_a_schema() -> None:
    schema = {
        "type": "object",
        "required": ["name", "age"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "age": {"type": "integer", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "additionalProperties": False,
    }
    assert json_schema({"name": "Ana", "age": 30, "tags": ["x"]}, schema).is_ok
    bad = json_schema({"name": "", "age": True, "tags": [1], "extra": 1}, schema)
    assert not bad.is_ok
    assert set(bad.reasons) == {
        "$.name should have at least 1 characters",
        "$.age should be integer, not bool",
        "$.tags[0] should be string, not int",
        "$.extra is not allowed",
    }


def test_a_lesson_that_keeps_helping_rises_and_one_contradicted_retires() -> None:
    assert score(0, 0) == 0.5
    good = lesson()
    for n in range(3):
        good = credited(good, True, f"e{n}", T0)
    assert good.score == 0.8 and good.active and good.evidence == ("e0", "e1", "e2")
    bad = credited(credited(lesson(), False, "e1", T0), False, "e2", T0)
    assert (bad.hurt, bad.status) == (2, "retired")  # 1/4 < 0.4 after two contradictions
    one_miss = credited(lesson(), False, "e1", T0)
    assert one_miss.active  # one failure may be chance


def test_three_contradictions_in_a_row_retire_even_a_lesson_that_helped_often() -> None:
    veteran = lesson(helped=9)
    for n in range(2):
        veteran = credited(veteran, False, f"e{n}", T0)
    assert veteran.active and veteran.streak == 2
    assert credited(veteran, True, "ok", T0).streak == 0
    assert credited(veteran, False, "e3", T0).status == "retired"


def test_a_cause_is_a_hash_of_the_task_and_first_reason_not_their_words() -> None:
    a = cause_of("Deploy  Billing", ["exit code 2: Relation users"])
    assert a == cause_of("deploy billing", ["EXIT CODE 2: relation users", "other"])
    assert a != cause_of("deploy billing", ["exit code 3: relation users"])
    assert "billing" not in a and len(a) == 16
