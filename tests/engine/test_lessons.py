"""Lessons from outcomes over a real workspace (SPEC F2, F3): learned, reinforced,
credited, retired when the environment changes, forgotten like any item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kronika import Memory, build_memory
from kronika.app import build_llm
from kronika.core.lessons import exit_code
from kronika.core.model import LinkKind, Reader
from kronika.engine.learning import evaluate_with_model
from kronika.settings import AgentPolicy, Settings
from kronika.testing import FrozenClock, ScriptedChatServer

TASK = "deploy the billing service"
BROKEN = exit_code(2, "error: relation users does not exist")


def lessons_file(memory: Memory) -> Path:
    return memory.workspace.agent_dir("default") / "lessons.md"


def test_a_failure_becomes_a_reflection_linked_to_its_event_and_is_served_for_the_task(
    memory: Memory,
) -> None:
    report = memory.record_outcome(TASK, "make deploy", BROKEN)
    [reflection] = report.learned
    assert report.reflected_by == "template"
    assert "relation users does not exist" in reflection.text
    event = memory.get(report.event_id or "")
    assert event.kind is not None and event.kind.value == "B"
    assert "make deploy" in event.content and "failed" in event.content
    assert [(x.from_id, x.to_id, x.kind) for x in memory.links()] == [
        (report.event_id, reflection.id, LinkKind.REFLECTION)
    ]
    served = memory.lessons_for("billing service deploy")
    assert [h.item.id for h in served] == [reflection.id]
    assert served[0].item.layer.value == 4 and served[0].item.confidence == 0.5

    again = memory.record_outcome(TASK, "make deploy", BROKEN, served=[])
    assert again.learned == () and [x.id for x in again.reinforced] == [reflection.id]
    assert len(memory.lessons()) == 1
    assert memory.lessons()[0].evidence == (report.event_id, again.event_id)


def test_a_success_after_failures_teaches_a_strategy_that_then_keeps_helping(
    memory: Memory,
) -> None:
    memory.record_outcome(TASK, "make deploy", BROKEN)
    fixed = memory.record_outcome(TASK, "make migrate && make deploy", ok=True, served=[])
    kinds = sorted(x.kind for x in fixed.learned)
    assert kinds == ["reflection", "strategy"]
    strategy = next(x for x in fixed.learned if x.kind == "strategy")
    assert "make migrate && make deploy" in strategy.text
    assert any(
        link.to_id == strategy.id and link.kind is LinkKind.STRATEGY for link in memory.links()
    )
    for _ in range(3):
        memory.record_outcome(TASK, "make migrate && make deploy", ok=True, served=[strategy.id])
    kept = {x.id: x for x in memory.lessons()}[strategy.id]
    assert (kept.helped, kept.hurt, kept.uses) == (3, 0, 3)
    assert kept.score == 0.8


def test_when_the_environment_changes_the_old_strategy_retires_and_leaves_the_prompts(
    memory: Memory,
) -> None:
    memory.record_outcome(TASK, "make deploy", BROKEN)
    fixed = memory.record_outcome(TASK, "make migrate && make deploy", ok=True, served=[])
    strategy = next(x for x in fixed.learned if x.kind == "strategy")
    memory.record_outcome(TASK, "make migrate && make deploy", ok=True, served=[strategy.id])
    moved = exit_code(1, "error: the deploy target moved to k8s")
    reports = [
        memory.record_outcome(TASK, "make migrate && make deploy", moved, served=[strategy.id])
        for _ in range(3)
    ]
    assert [x.id for x in reports[-1].retired] == [strategy.id]
    assert strategy.id not in {x.id for x in memory.lessons()}
    assert strategy.id in {x.id for x in memory.lessons(include_retired=True)}
    assert strategy.id not in {h.item.id for h in memory.lessons_for(TASK)}
    assert "status=retired" in lessons_file(memory).read_text(encoding="utf-8")


def test_a_hand_edit_can_retire_a_lesson_and_forgetting_one_removes_it_everywhere(
    memory: Memory, clock: FrozenClock
) -> None:
    first = memory.record_outcome(TASK, "make deploy", BROKEN).learned[0]
    other = memory.record_outcome("rotate the logs", "logrotate", exit_code(1, "no such file"))
    path = lessons_file(memory)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("status=active", "status=retired", 1), encoding="utf-8")
    clock.advance(minutes=1)  # the next read looks at the files again
    assert first.id not in {h.item.id for h in memory.lessons_for(TASK)}
    lesson_id = other.learned[0].id
    memory.forget(lesson_id)
    assert lesson_id not in path.read_text(encoding="utf-8")
    assert all(lesson_id not in (x.from_id, x.to_id) for x in memory.links())


def test_an_agent_that_only_suggests_proposes_its_lessons(
    settings: Settings, clock: FrozenClock
) -> None:
    careful = settings.with_overrides(agents={"default": AgentPolicy(autonomy=1)})
    with build_memory(careful, create=True, clock=clock) as memory:
        report = memory.record_outcome(TASK, "make deploy", BROKEN, source_agent="default")
        assert memory.lessons() == []
        waiting = [p for p in memory.proposals() if "lesson" in type(p.change).__name__.lower()]
        assert len(waiting) == 1
        memory.approve(waiting[0].id)
        assert [x.id for x in memory.lessons()] == [report.learned[0].id]


def test_a_proposed_lesson_is_shown_to_the_audience_it_is_for(
    settings: Settings, clock: FrozenClock
) -> None:
    careful = settings.with_overrides(agents={"default": AgentPolicy(autonomy=1)})
    with build_memory(careful, create=True, clock=clock) as memory:
        anna, bob = memory.reader(user="anna"), memory.reader(user="bob")
        memory.record_outcome(TASK, "make deploy", BROKEN, source_agent="default", reader=anna)

        def lessons(reader: Reader | None) -> list[str]:
            found = memory.proposals(reader=reader)
            return [p.id for p in found if "lesson" in type(p.change).__name__.lower()]

        assert len(lessons(anna)) == 1  # hers, as the event it was drawn from
        assert lessons(bob) == []
        assert lessons(None) == lessons(anna)  # the owner sees every proposal
        assert len(memory.proposals(reader=anna)) == len(memory.proposals())


def test_a_model_reflects_and_evaluates_and_a_broken_answer_falls_back_to_the_reasons(
    settings: Settings, clock: FrozenClock
) -> None:
    replies = [
        json.dumps(
            {
                "reflection_text": "Deploys fail when the schema lags behind the code.",
                "strategy_text": "Run the migrations before every deploy.",
                "importance": 0.9,
                "confidence": 0.8,
                "tags": ["deploy"],
            }
        ),
        json.dumps({"is_ok": False, "reasons": ["the page shows a 500"], "score": 10}),
        "this is not JSON",
        "still not JSON",
    ]
    with ScriptedChatServer(replies) as server:
        model = settings.with_overrides(llm_base_url=server.base_url, llm_model="m")
        with build_memory(model, create=True, clock=clock) as memory:
            llm = build_llm(model, minion=True, clock=clock)
            assert llm is not None
            smart = memory.record_outcome(TASK, "make deploy", BROKEN, llm=llm)
            assert smart.reflected_by == "reflector@1"
            assert {x.kind: x.text for x in smart.learned} == {
                "reflection": "Deploys fail when the schema lags behind the code.",
                "strategy": "Run the migrations before every deploy.",
            }
            judged = evaluate_with_model(
                llm, "render the invoice", "GET /invoice/7", "HTTP 500", agent="default"
            )
            assert (judged.is_ok, judged.score, judged.reasons) == (
                False,
                0.1,
                ("the page shows a 500",),
            )
            fallback = memory.record_outcome(
                "render the invoice", "GET /invoice/7", judged, llm=llm
            )
            assert fallback.reflected_by == "template"
            assert fallback.notes and "could not reflect" in fallback.notes[0]
            assert "the page shows a 500" in fallback.learned[0].text


def test_outcomes_need_an_evaluation_or_a_verdict(memory: Memory) -> None:
    from kronika.errors import InvalidInput

    with pytest.raises(InvalidInput, match="give an evaluation"):
        memory.record_outcome(TASK, "make deploy")
    with pytest.raises(InvalidInput, match="the task must be"):
        memory.record_outcome("  ", "make deploy", ok=True)
    # the outcome said in words where an evaluation goes: a clear error, not a traceback
    with pytest.raises(InvalidInput, match="must be an Evaluation .*, not str"):
        memory.record_outcome(TASK, "make deploy", "failed: tls")  # type: ignore[arg-type]


def test_a_conversation_about_the_task_carries_the_lesson_and_counts_its_use(
    settings: Settings, clock: FrozenClock
) -> None:
    from kronika.engine.learning import lesson_stats
    from kronika.workflows.session import Session

    # the relevance floor of the hashing embedder: its unrelated texts reach 0.25
    floor = settings.with_overrides(relevance_floor=0.3)
    with build_memory(floor, create=True, clock=clock) as memory:
        lesson = memory.record_outcome(TASK, "make deploy", BROKEN).learned[0]
        session = Session(memory, llm=None)
        turn = session.user("Please deploy the billing service again")
        assert [h.item.id for h in turn.lessons] == [lesson.id]
        system = turn.messages[0].content
        assert "relation users does not exist" in system
        session.user("thanks, what is the weather like")
        stats = lesson_stats(memory)
        assert stats["lessons_active"] == 1 and stats["payloads"] == 2
        assert stats["share_of_payloads_with_a_lesson"] == 0.5


def test_two_lessons_of_the_same_text_are_one_line_in_the_prompt(memory: Memory) -> None:
    from kronika.workflows.session import Session

    lesson = memory.record_outcome(TASK, "make deploy", BROKEN).learned[0]
    path = lessons_file(memory)
    text = path.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if lesson.id in x)
    twin = line.replace(lesson.id, "l-000000000001").replace("cause=", "cause=0")
    path.write_text(text.replace(line, line + "\n" + twin), encoding="utf-8")  # a hand edit
    memory.sync()
    assert len(memory.lessons()) == 2
    turn = Session(memory, llm=None).user("Please deploy the billing service again")
    assert len(turn.lessons) == 1
    system = turn.messages[0].content
    assert system.count("] Task 'deploy the billing service': 'make deploy' failed") == 1


def test_the_cli_records_outcomes_and_lists_lessons(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kronika.cli import main

    monkeypatch.setenv("KRONIKA_HOME", str(settings.home))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    assert main(["init"]) == 0
    args = ["lessons", "record", TASK, "--action", "make deploy", "--exit-code", "2"]
    assert main([*args, "--stderr", "error: relation users does not exist"]) == 0
    assert "learned reflection" in capsys.readouterr().out
    assert (
        main(["lessons", "record", TASK, "--action", "make migrate deploy", "--ok", "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert sorted(x["kind"] for x in out["learned"]) == ["reflection", "strategy"]
    assert main(["lessons", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == 3 and all(x["status"] == "active" for x in listed)
    assert main(["lessons", "record", TASK, "--action", "x"]) == 2
    assert "exactly one of" in capsys.readouterr().err


def test_recall_json_shows_each_hit_with_its_evidence_links(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kronika.cli import main

    monkeypatch.setenv("KRONIKA_HOME", str(settings.home))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    assert main(["init"]) == 0
    capsys.readouterr()
    args = ["lessons", "record", TASK, "--action", "make deploy", "--exit-code", "2", "--json"]
    assert main([*args, "--stderr", "error: relation users does not exist"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert main(["recall", "relation users does not exist", "--type", "reflection", "--json"]) == 0
    [hit] = json.loads(capsys.readouterr().out)["hits"]
    assert hit["kind"] == "reflection" and hit["confidence"] == 0.5
    assert hit["links"] == [
        {"from": made["event"], "to": made["learned"][0]["id"], "kind": "reflection"}
    ]


def test_a_lesson_written_before_lessons_had_an_audience_stays_the_owners_until_shared(
    memory: Memory,
) -> None:
    from kronika.core.model import ItemType

    old = (
        "# Lessons\n\n## Reflections\n"
        "- Task 'deploy billing': 'make deploy' failed: exit code 2. <!-- id=l-0123456789ab"
        " cause=abc created=2026-11-01T09:00:00Z updated=2026-11-01T09:00:00Z helped=0"
        " hurt=0 uses=0 status=active importance=0.7 -->\n\n## Strategies\n"
    )
    lessons_file(memory).write_text(old, encoding="utf-8")
    bob = memory.reader(user="bob")
    assert [x.id for x in memory.lessons()] == ["l-0123456789ab"]
    assert [h.item.id for h in memory.lessons_for("deploy billing")] == ["l-0123456789ab"]
    assert (
        memory.lessons(reader=bob) == [] and memory.lessons_for("deploy billing", reader=bob) == []
    )

    shared = old.replace("importance=0.7 -->", "importance=0.7 scope=global -->")
    lessons_file(memory).write_text(shared, encoding="utf-8")
    memory.sync()  # what the next command does
    [seen] = memory.lessons(reader=bob)
    assert seen.owners.scope.value == "global"
    hits = memory.recall("deploy billing", types=[ItemType.REFLECTION], reader=bob).hits
    assert [h.item.id for h in hits] == ["l-0123456789ab"]
    # kronika keeps the audience when it rewrites the file
    memory.record_outcome("deploy billing", "make deploy", ok=True, served=[seen.id], reader=bob)
    assert "scope=global" in lessons_file(memory).read_text(encoding="utf-8")
    assert memory.lessons(reader=bob)[0].helped == 1
