"""The memory jobs over real workspaces: idempotent, and waiting (never losing) without a model."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from kronika import Memory, build_memory
from kronika.app import build_llm
from kronika.settings import Settings
from kronika.testing import FrozenClock, ScriptedChatServer, ScriptedFailure
from kronika.workflows.jobs import run_job


def test_reflect_keeps_entity_pages_beside_hand_written_text_and_indexes_only_that(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.remember("@Peter works at Acme", key="employer")
    memory.note("@Peter prefers short answers", kind="O", confidence=0.8)
    page = memory.workspace.agent_dir("default") / "bank" / "entities" / "Peter.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("# Peter\n\nPeter plays chess on Sundays.\n", encoding="utf-8")
    clock.advance(minutes=1)
    first = run_job(memory, "reflect")
    assert "bank/entities/Peter.md: 2 item(s)" in first.done
    text = page.read_text(encoding="utf-8")
    assert text.startswith("# Peter\n\nPeter plays chess on Sundays.\n")
    assert "- employer: @Peter works at Acme — [brain.md#L" in text
    assert "- O @Peter prefers short answers (confidence 0.8)" in text
    again = run_job(memory, "reflect")
    assert again.done == [] and page.read_text(encoding="utf-8") == text
    clock.advance(minutes=1)
    cited = [h.citation for h in memory.recall("Peter", k=20).hits]
    assert [c for c in cited if c.startswith("bank/entities/Peter.md")] == [
        "bank/entities/Peter.md#L3"
    ]  # the hand-written line; kronika's view is not memory of its own


def test_decay_archives_what_went_unused_and_keeps_what_is_recalled(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.remember("green tea", key="drink")
    memory.remember("Gdańsk", key="city")
    clock.advance(days=400)
    memory.recall("Gdańsk", k=1)  # used: it holds on
    report = run_job(memory, "decay")
    assert len(report.done) == 1 and report.unchanged == 1
    brain = {f.key for f in memory.facts(include_archived=False)}
    assert brain == {"city"}
    assert "drink" in {f.key for f in memory.facts()}  # archived, not deleted
    assert run_job(memory, "decay").done == []


def test_dream_waits_without_a_model_and_writes_strategies_once_with_one(
    settings: Settings, clock: FrozenClock
) -> None:
    reply = json.dumps({"strategies": [{"text": "Check the migrations first.", "importance": 0.8}]})
    with ScriptedChatServer([reply, reply]) as server:
        model = settings.with_overrides(llm_base_url=server.base_url, llm_model="m")
        with build_memory(model, create=True, clock=clock) as memory:
            memory.record_outcome("deploy", "make deploy", ok=False, reasons=["schema out of date"])
            waiting = run_job(memory, "dream")
            assert waiting.waiting and "no language model" in waiting.waiting[0]
            assert run_job(memory, "dream", mode="lite").done == ["lite mode: no dreaming"]
            llm = build_llm(model, minion=True, clock=clock)
            dreamed = run_job(memory, "dream", llm=llm)
            assert dreamed.done and "Check the migrations first." in dreamed.done[0]
            strategies = [x for x in memory.lessons() if "dream" in x.tags]
            assert [x.text for x in strategies] == ["Check the migrations first."]
            assert run_job(memory, "dream", llm=llm).unchanged == 1
            assert len([x for x in memory.lessons() if "dream" in x.tags]) == 1


def test_dream_dreams_on_each_audience_apart_and_its_strategies_stay_there(
    settings: Settings, clock: FrozenClock
) -> None:
    def reply(text: str) -> str:
        return json.dumps({"strategies": [{"text": text, "importance": 0.8}]})

    replies = [reply("Unseal the vault before rotating."), reply("Check the ledger first.")]
    with ScriptedChatServer(replies) as server:
        model = settings.with_overrides(llm_base_url=server.base_url, llm_model="m")
        with build_memory(model, create=True, clock=clock) as memory:
            anna, bob = memory.reader(user="anna"), memory.reader(user="bob")
            memory.record_outcome("rotate keys", "vault rotate", ok=False, reasons=["sealed"],
                                  reader=anna)  # fmt: skip
            memory.record_outcome("ledger report", "make report", ok=False, reasons=["missing"],
                                  reader=bob)  # fmt: skip
            llm = build_llm(model, minion=True, clock=clock)
            assert len(run_job(memory, "dream", llm=llm).done) == 2
            dreamed = {x.owners.user: x for x in memory.lessons() if "dream" in x.tags}
            assert set(dreamed) == {"anna", "bob"}
            annas = [x.id for x in memory.lessons(reader=anna) if "dream" in x.tags]
            bobs = [x.id for x in memory.lessons(reader=bob) if "dream" in x.tags]
            assert annas == [dreamed["anna"].id] and bobs == [dreamed["bob"].id]
            assert len(server.requests) == 2
            asked = [json.dumps(r.body["messages"]) for r in server.requests]
            assert sum("sealed" in a and "missing" not in a for a in asked) == 1


def test_the_cli_runs_and_lists_jobs(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kronika.cli import main

    monkeypatch.setenv("KRONIKA_HOME", str(settings.home))
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    assert main(["init"]) == 0
    assert main(["note", "Lunch with @Ola"]) == 0
    capsys.readouterr()
    assert main(["jobs", "run", "reflect", "--json"]) == 0
    [report] = json.loads(capsys.readouterr().out)
    assert report["job"] == "reflect" and report["done"] == ["bank/entities/Ola.md: 1 item(s)"]
    assert main(["jobs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reflect"]["default"]["done"] == 1
    assert main(["jobs", "run"]) == 2
    assert main(["jobs", "run", "dream", "--days", "0"]) == 2


def test_the_overflowing_brain_lets_the_weakest_go_first(
    memory: Memory, clock: FrozenClock
) -> None:
    from kronika.core.prompt import choose_archive

    memory.remember("tea", key="drink", importance=0.2)
    memory.remember("Kraków", key="city", importance=0.9)
    facts = memory.facts(include_archived=False)
    later = clock.now() + timedelta(days=30)
    order = choose_archive(facts, budget=1, count=len, now=later, half_life_days=90)
    assert [f.key for f in facts if f.id == order[0]] == ["drink"]


def test_reflect_moves_an_opinion_by_small_steps_with_its_evidence_linked(
    settings: Settings, clock: FrozenClock
) -> None:
    with ScriptedChatServer(responder=lambda body: _judge(body)) as server:
        model = settings.with_overrides(llm_base_url=server.base_url, llm_model="m")
        with build_memory(model, create=True, clock=clock) as memory:
            opinion = memory.note("@Peter prefers short answers", kind="O", confidence=0.6).item
            assert opinion is not None
            clock.advance(minutes=5)
            first = memory.note("@Peter asked for a one-line summary again").item
            second = memory.note("@Peter said long emails annoy him").item
            assert first is not None and second is not None
            clock.advance(minutes=5)
            assert run_job(memory, "reflect").waiting == [
                "opinions about Peter (no language model)"
            ]
            llm = build_llm(model, minion=True, clock=clock)
            report = run_job(memory, "reflect", llm=llm)
            assert "opinion " + opinion.id + ": confidence 0.6 -> 0.7 (+2 / -0)" in report.done
            log = next((memory.workspace.agent_dir("default") / "memory").glob("*.md"))
            assert "- O(c=0.7) @Peter prefers short answers" in log.read_text(encoding="utf-8")
            assert {frozenset((x.from_id, x.to_id)) for x in memory.links()} == {
                frozenset((first.id, opinion.id)),
                frozenset((second.id, opinion.id)),
            }
            calls = len(server.requests)
            again = run_job(memory, "reflect", llm=llm)
            assert again.done == [] and len(server.requests) == calls  # judged once


def _judge(body: dict[str, object]) -> str:
    text = str(body["messages"][-1]["content"])  # type: ignore[index]
    opinion = text.split("[", 1)[1].split("]", 1)[0]
    pieces = [line.split("]", 1)[0][3:] for line in text.splitlines() if line.startswith("- [n")]
    pieces = [p for p in pieces if p != opinion]
    return json.dumps(
        {
            "judgements": [
                {"opinion": opinion, "evidence": p, "verdict": "supports"} for p in pieces
            ]
            + [{"opinion": "made-up", "evidence": pieces[0], "verdict": "contradicts"}]
        }
    )


def test_observations_live_for_their_time_then_decay_forgets_them_everywhere(
    memory: Memory, clock: FrozenClock
) -> None:
    receipt = memory.observe("build log: 3 warnings in module parser", ttl_seconds=3600)
    assert receipt.item is not None
    item = memory.get(receipt.item.id)
    assert (item.type.value, item.layer.value, item.tier.value) == ("sensory", 1, "short")
    assert item.provenance.path.startswith("sensory/")
    assert memory.recall("parser warnings", k=1).hits[0].item.id == item.id
    assert run_job(memory, "decay").done == []  # not expired yet
    clock.advance(hours=2)
    assert run_job(memory, "decay").done == ["forgot 1 expired observation(s)"]
    folder = memory.workspace.agent_dir("default")
    assert all("3 warnings" not in f.read_text(encoding="utf-8") for f in folder.rglob("*.md"))
    assert memory.recall("parser warnings", k=3).hits == ()
    from kronika.errors import InvalidInput

    with pytest.raises(InvalidInput, match="ttl_seconds"):
        memory.observe("x", ttl_seconds=0)


@pytest.mark.parametrize(
    "answers",
    [
        ["not JSON at all", "still not JSON"],  # malformed, then malformed again on repair
        [ScriptedFailure(400, '{"error": {"message": "refused"}}')],  # the server refuses
        [ScriptedFailure(503)] * 3,  # the server keeps failing
    ],
    ids=["malformed", "refused", "failing"],
)
def test_a_model_that_cannot_answer_leaves_the_work_waiting_and_changes_nothing(
    settings: Settings, clock: FrozenClock, answers: list[object]
) -> None:
    with ScriptedChatServer(answers) as server:  # type: ignore[arg-type]
        model = settings.with_overrides(llm_base_url=server.base_url, llm_model="m", llm_retries=0)
        with build_memory(model, create=True, clock=clock) as memory:
            memory.record_outcome("deploy", "make deploy", ok=False, reasons=["schema out of date"])
            lessons = memory.workspace.agent_dir("default") / "lessons.md"
            before = lessons.read_text(encoding="utf-8")
            report = run_job(memory, "dream", llm=build_llm(model, minion=True, clock=clock))
            assert report.done == [] and report.waiting and report.waiting[0].startswith("dreaming")
            assert lessons.read_text(encoding="utf-8") == before


def test_reflect_keeps_the_bank_files_as_views_of_typed_notes(
    memory: Memory, clock: FrozenClock
) -> None:
    memory.note("Kraków lies on the Vistula", kind="W")
    memory.note("I moved the backups to the new disk", kind="B")
    world = memory.workspace.agent_dir("default") / "bank" / "world.md"
    world.parent.mkdir(parents=True, exist_ok=True)
    world.write_text("# World\n\nThe office closes at six.\n", encoding="utf-8")
    report = run_job(memory, "reflect")
    assert "bank/world.md: 1 note(s)" in report.done
    assert "bank/experience.md: 1 note(s)" in report.done
    assert "- W Kraków lies on the Vistula" in world.read_text(encoding="utf-8")
    clock.advance(minutes=1)
    found = [h for h in memory.recall("Vistula Kraków", k=5).hits if "Vistula" in h.item.content]
    assert [h.citation.split("#")[0] for h in found] == [f"memory/{clock.now():%Y-%m-%d}.md"]
    office = memory.recall("when does the office close", k=1).hits[0]
    assert office.citation == "bank/world.md#L3"  # the hand-written line is
    assert run_job(memory, "reflect").done == []


def _extraction(summary: str, *facts: tuple[str, str, str]) -> str:
    listed = [{"tag": tag, "key": key, "value": value} for tag, key, value in facts]
    return json.dumps({"facts": listed, "summary": summary})


def test_distill_clear_removes_the_distilled_messages_everywhere_once_and_keeps_the_rest(
    settings: Settings, clock: FrozenClock
) -> None:
    from kronika.workflows.session import Session

    reply = _extraction(
        "Ana told the assistant about her cat Mruczek.",
        ("CORE", "pet", "Ana has a cat named Mruczek."),
    )
    with ScriptedChatServer([reply, ScriptedFailure(503)]) as server:
        model = settings.with_overrides(llm_base_url=server.base_url, llm_model="m", llm_retries=0)
        with build_memory(model, create=True, clock=clock) as memory:
            first = Session(memory, llm=None)
            first.user("My cat Mruczek sleeps on the radiator all winter.")
            first.assistant("A warm spot for a cat.")
            sid = str(first.session_id)
            first.close()  # no model at hand: queued, nothing distilled yet
            clock.advance(minutes=5)
            llm = build_llm(model, minion=True, clock=clock)
            distilled = run_job(memory, "distill", llm=llm)  # distilled, not cleared
            assert distilled.done[0].startswith(f"session {sid}: 1 fact(s)")
            folder = memory.workspace.agent_dir("default")
            session_file = folder / "sessions" / f"{sid}.md"
            assert "radiator" in session_file.read_text(encoding="utf-8")

            clock.advance(minutes=5)
            second = Session(memory, llm=None)
            second.user("The radiator in the hall leaks a little.")
            queued = str(second.session_id)
            second.close()  # the model fails on it below: it stays queued, and is kept

            # a run after a crash between distilling and clearing: nothing distilled twice
            cleared = run_job(memory, "distill", llm=llm, clear=True)
            assert f"session {sid}: cleared 2 message(s)" in cleared.done
            assert any(queued in w for w in cleared.waiting)
            assert server.remaining == 0  # one extraction per session, no more
            text = session_file.read_text(encoding="utf-8")
            assert "radiator" not in text and "warm spot" not in text
            assert "status: consolidated" in text and "Mruczek" in text  # its summary stays
            assert [f.value for f in memory.facts()] == ["Ana has a cat named Mruczek."]
            from kronika.workflows.explain import explain

            origin = explain(memory, "pet").origin
            assert (origin.session_id, origin.turns) == (sid, ())  # its session, no turns
            messages = memory.items(types=["message"])
            assert [m.content for m in messages] == ["The radiator in the hall leaks a little."]
            hits = memory.recall("radiator winter cat", k=10).hits
            assert all(h.item.provenance.path != f"sessions/{sid}.md" for h in hits)
            points = memory.index.vector_points(None)  # type: ignore[attr-defined]
            assert all("warm spot" not in p.item.content for p in points)
            entry = memory.audit(limit=1)[0]
            said = (entry.action, entry.source_agent, entry.outcome)
            assert said == ("forget", "system", "applied")
            assert "radiator" not in json.dumps(entry.summary)

            again = run_job(memory, "distill", llm=llm, clear=True)
            assert not any("cleared" in line for line in again.done)
            assert session_file.read_text(encoding="utf-8") == text

            # a turn saved to the session after it was distilled was never distilled: kept
            clock.advance(minutes=5)
            memory.save_turn(sid, "user", "One more thing about Mruczek.")
            run_job(memory, "distill", llm=llm, clear=True)
            assert "One more thing" in session_file.read_text(encoding="utf-8")


def test_the_cli_clears_distilled_messages_on_request_only(
    settings: Settings,
    clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kronika.cli import main
    from kronika.workflows.session import Session

    with ScriptedChatServer([_extraction("Small talk about trains.")]) as server:
        for name, value in (("HOME", str(settings.home)), ("EMBEDDER", "hashing")):
            monkeypatch.setenv(f"KRONIKA_{name}", value)
        monkeypatch.setenv("KRONIKA_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("KRONIKA_LLM_MODEL", "m")
        with build_memory(settings, create=True, clock=clock) as memory:
            talk = Session(memory, llm=None)
            talk.user("The 7:40 train was late again.")
            sid = talk.session_id
            talk.close()
        capsys.readouterr()
        assert main(["jobs", "run", "distill", "--json"]) == 0
        [kept] = json.loads(capsys.readouterr().out)
        assert kept["done"] == [f"session {sid}: 0 fact(s)"]
        assert main(["jobs", "run", "distill", "--clear", "--json"]) == 0
        [cleared] = json.loads(capsys.readouterr().out)
        assert cleared["done"] == [f"session {sid}: cleared 1 message(s)"]
