"""`kronika bench memory`: the data, its split, the scoring and the command, over real
workspaces."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.bench import run_memory
from kronika.bench.memdata import KINDS, LANGUAGES, PEOPLE, folds, people, questions, split_of
from kronika.bench.memdata.model import (
    EntityPage,
    Fact,
    Note,
    Person,
    Session,
    Summary,
    parse_turn,
    person,
    when,
)
from kronika.bench.memory_folds import leave_one_person_out
from kronika.bench.memory_suite import aggregate, ask, build_person, score_question, winner
from kronika.bench.metrics import answer_scores, first_rank
from kronika.cli import main
from kronika.settings import Settings


def _handles(who: Person) -> list[str]:
    found: list[str] = []
    for item in who.items:
        if isinstance(item, Fact | Note | Summary | EntityPage):
            found.append(item.handle)
        elif isinstance(item, Session):
            found += [h for _, h, _ in map(parse_turn, item.turns) if h]
    return found


def test_every_handle_is_unique_and_every_gold_is_a_handle() -> None:
    assert len({p.pid for p in PEOPLE}) == len(PEOPLE)
    for who in PEOPLE:
        handles = _handles(who)
        assert len(handles) == len(set(handles)), who.pid
        sessions = [i.sid for i in who.items if isinstance(i, Session)]
        assert len(sessions) == len(set(sessions)), who.pid
        assert len({q.qid for q in who.questions}) == len(who.questions)
        for q in who.questions:
            if q.kind == "none":
                assert q.gold is None, q.qid
            else:
                assert q.gold in handles, q.qid
            if q.kind == "crosslingual":
                assert q.lang != who.lang, q.qid
            elif q.lang != who.lang:
                assert q.kind == "none", q.qid  # nothing to find, asked in another language
        texts = Counter(q.text for q in who.questions)
        assert texts.most_common(1)[0][1] == 1, who.pid


def test_everything_is_written_before_the_questions_are_asked() -> None:
    for who in PEOPLE:
        today = when(who.today)
        for item in who.items:
            assert when(item.at) < today, (who.pid, item)
        assert all(q.now is None or when(q.now) <= today for q in who.questions)
        turns = sum(len(i.turns) for i in who.items if isinstance(i, Session))
        assert turns >= 150, who.pid  # a year of chats, most of them answering nothing


def test_every_language_has_two_people_and_every_kind_of_question() -> None:
    for lang in LANGUAGES:
        mine = [p for p in PEOPLE if p.lang == lang]
        assert len(mine) >= 2, lang
        kinds = Counter(q.kind for p in mine for q in p.questions)
        assert set(kinds) == set(KINDS), lang
        assert sum(kinds.values()) >= 40, lang
    assert len(questions("all")) >= 200


def test_the_split_is_by_person_fixed_and_the_folds_leave_one_out() -> None:
    dev, test = people("dev"), people("test")
    assert {p.pid for p in dev}.isdisjoint(p.pid for p in test)
    assert len(dev) + len(test) == len(PEOPLE) == len(people("all"))
    for lang in LANGUAGES:  # the first by id in each language is dev, the next test
        ids = sorted(p.pid for p in PEOPLE if p.lang == lang)
        assert [split_of(next(p for p in PEOPLE if p.pid == i)) for i in ids[:2]] == [
            "dev",
            "test",
        ]
    assert {p.pid for p in test} == {"en-david", "es-mateo", "pl-marek", "uk-taras"}
    assert {q.qid for _, q in questions("dev")}.isdisjoint(q.qid for _, q in questions("test"))
    held = [(h.pid, {p.pid for p in rest}) for h, rest in folds("dev")]
    assert [pid for pid, _ in held] == [p.pid for p in dev]
    for pid, rest in held:
        assert pid not in rest and len(rest) == len(dev) - 1
    with pytest.raises(ValueError, match="unknown split"):
        people("train")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Memory, dict[str, dict[str, str]]]]:
    """Every person written into one real workspace (hashing embedder): the memory and,
    for each person, their handles' item ids."""
    home = tmp_path_factory.mktemp("memdata") / "ws"
    with build_memory(load_settings(home, environ={}, embedder="hashing"), create=True) as memory:
        yield memory, {who.pid: build_person(memory, who) for who in PEOPLE}


def test_every_gold_resolves_to_exactly_one_stored_item(
    built: tuple[Memory, dict[str, dict[str, str]]],
) -> None:
    memory, handles = built
    for who in PEOPLE:
        ids = handles[who.pid]
        stored = {
            it.id: it for it in memory.items(agent=who.pid, include_superseded=True, limit=10**6)
        }
        for item in who.items:  # each handle names the item it wrote, at its date
            if isinstance(item, Fact):
                got = stored[ids[item.handle]]
                assert (got.key, got.value) == (item.key, item.value)
            elif isinstance(item, Note | Summary | EntityPage):
                got = stored[ids[item.handle]]
                assert got.content.startswith(item.text[:20]), item.handle
                assert got.created_at.date().isoformat() == item.at[:10], item.handle
        for q in who.questions:
            if q.gold is not None:
                assert ids[q.gold] in stored, q.qid
        assert len(set(ids.values())) == len(ids), who.pid


def test_a_superseded_value_is_kept_as_history_with_its_date(
    built: tuple[Memory, dict[str, dict[str, str]]],
) -> None:
    memory, handles = built
    history = memory.history("city", agent="en-alice")
    assert [f.value for f in history] == ["Leeds", "Bristol"]
    assert history[0].id == handles["en-alice"]["f_city1"] and history[0].valid_to is not None
    turns = memory.items(agent="en-alice", types=["message"], limit=10**6)
    assert {t.speaker for t in turns} == {"user", "assistant"}
    assert sum(t.content in ("hi", "thanks", "ok") for t in turns) >= 5


TINY = person(
    "en-tiny",
    "en",
    "2026-05-01",
    (
        Fact("f_boat", "2026-01-01", "boat", "a red kayak called Zephyrine"),
        Fact("f_city", "2026-01-01", "city", "Oslo"),
        Session(
            "s1", "2026-02-01", ("u#t_hi: hi", "u#t_violin: I practise the violin every morning")
        ),
        Fact("f_city2", "2026-03-01", "city", "Bergen"),
    ),
    (
        ("paraphrase", "What is my kayak Zephyrine like?", "f_boat"),
        ("paraphrase", "Zephyrine kayak", "t_violin"),  # a wrong gold: scores 0
        ("none", "Zephyrine", ""),
    ),
)


def test_the_scores_of_a_case_whose_answers_are_known(memory: Memory) -> None:
    ids = build_person(memory, TINY)
    rows = [score_question(TINY, q, ids, ask(memory, TINY, q, k=2)) for q in TINY.questions]
    right, wrong, unanswerable = rows
    assert right["rank"] == 1 and right["hit@1"] == right["mrr"] == 1.0
    assert wrong["rank"] is None and wrong["hit@1"] == wrong["hit@3"] == wrong["mrr"] == 0.0
    assert unanswerable["gold_id"] is None and unanswerable["returned"] >= 1
    assert unanswerable["no_answer"] == 0.0  # recall returned something: not an empty answer
    figures = aggregate(rows)
    assert figures["hit@1"] == 0.5 and figures["mrr"] == 0.5 and figures["empty"] == 0.0
    assert figures["no_answer_precision"] == 0.0
    assert (figures["answerable"], figures["none"]) == (2.0, 1.0)
    stored = {it.id: it for it in memory.items(agent="en-tiny", include_superseded=True)}
    now, then = stored[ids["f_city2"]], stored[ids["f_city"]]
    assert winner(now, then) == "current value" and winner(now, None) == "other key"
    assert winner(stored[ids["t_hi"]], then) == "phatic turn"
    assert winner(stored[ids["t_violin"]], then) == "other turn"


def test_the_metrics_on_hand_made_rankings() -> None:
    assert first_rank("b", ["a", "b", "c"]) == 2
    assert first_rank("z", ["a"]) is None and first_rank(None, ["a"]) is None
    assert answer_scores(2, 5) == {"hit@1": 0.0, "hit@3": 1.0, "mrr": 0.5, "empty": 0.0}
    assert answer_scores(None, 0) == {"hit@1": 0.0, "hit@3": 0.0, "mrr": 0.0, "empty": 1.0}
    rows: list[dict[str, Any]] = [
        {"gold": "g", **answer_scores(1, 3)},
        {"gold": "g", **answer_scores(None, 0)},  # an answer cut away by a floor
        {"gold": None, "no_answer": 1.0},
        {"gold": None, "no_answer": 0.0},
    ]
    figures = aggregate(rows)
    assert figures["hit@1"] == 0.5 and figures["empty"] == 0.5
    assert figures["no_answer_precision"] == 0.5


def test_the_command_prints_json_for_a_subset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KRONIKA_HOME", str(tmp_path / "ws"))
    out = tmp_path / "out"
    args = ["bench", "memory", "--split", "test", "--person", "pl-marek", "--person", "en-david"]
    assert main([*args, "--embedder", "hashing", "--json", "--out", str(out)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["suite"] == "memory"
    results = document["results"]
    assert results["people"] == ["en-david", "pl-marek"]
    asked = results["questions"]
    everyone = {p.pid: len(p.questions) for p in PEOPLE}
    assert len(asked) == everyone["en-david"] + everyone["pl-marek"]
    assert {r["split"] for r in asked} == {"test"}
    assert set(results["scores"]) == {"test"}
    for key in ("hit@1", "hit@3", "mrr", "empty", "no_answer_precision", "en.hit@1"):
        assert 0.0 <= document[key] <= 1.0, key
    assert "cross-lingual" in results["scores"]["test"]
    report = (out / "memory.md").read_text(encoding="utf-8")
    assert "| test | pl |" in report and "embedder: `hashing" in report
    assert "served a lesson" in report
    assert not (tmp_path / "ws").exists()  # the benchmark never touched the user's workspace
    dev_person = ["bench", "memory", "--split", "test", "--person", "en-alice"]
    assert main([*dev_person, "--embedder", "hashing"]) == 2  # en-alice is in dev
    assert "en-alice" in capsys.readouterr().err


@pytest.mark.slow
def test_the_default_embedder_answers_some_questions() -> None:
    results = run_memory(split="dev", settings=Settings(), only=("en-alice", "uk-oksana"))
    block = results["scores"]["dev"]
    for row in ("en", "uk", "cross-lingual"):
        assert block[row]["hit@3"] > 0.0, row
    assert results["embedder"] != "hashing"
    assert {r["person"] for r in results["questions"]} == {"en-alice", "uk-oksana"}


def _run(hits: dict[str, list[float]]) -> dict[str, Any]:
    return {
        "questions": [
            {"person": person, "gold": "g", "hit@1": hit}
            for person, values in hits.items()
            for hit in values
        ]
    }


def test_leave_one_person_out_scores_each_choice_on_the_person_it_never_saw() -> None:
    runs = {
        "a": _run({"p1": [1.0, 1.0], "p2": [1.0, 1.0], "p3": [0.0, 0.0]}),
        "b": _run({"p1": [0.0, 0.0], "p2": [0.0, 0.0], "p3": [1.0, 1.0]}),
    }
    chosen = leave_one_person_out(runs)
    assert [(f["held_out"], f["chosen"]) for f in chosen["folds"]] == [
        ("p1", "a"),  # a tie on p2 + p3 goes to the first named
        ("p2", "a"),
        ("p3", "a"),  # a wins p1 + p2, and scores 0 on p3
    ]
    assert [f["held_out_score"] for f in chosen["folds"]] == [1.0, 1.0, 0.0]
    assert chosen["held_out_mean"] == pytest.approx(2 / 3)
    assert chosen["chosen_most"] == "a"
    assert chosen["all_people"] == {"a": pytest.approx(2 / 3), "b": pytest.approx(1 / 3)}
    with pytest.raises(ValueError, match="same people"):
        leave_one_person_out({"a": runs["a"], "c": _run({"p1": [1.0]})})
    with pytest.raises(ValueError, match="unknown metric"):
        leave_one_person_out(runs, metric="recall@5")


def test_useful_counts_a_silent_answer_to_a_none_question_like_a_first_hit() -> None:
    """The answer floor's choice: silence on a question nothing answers is worth as
    much as the answer first, and silence on an answerable one nothing."""

    def rows(person: str, silent: bool) -> list[dict[str, Any]]:
        answerable = {"person": person, "mrr": 0.0 if silent else 0.5}
        return [answerable, {"person": person, "no_answer": float(silent)}]

    runs = {
        "answers always": {"questions": rows("p1", False) + rows("p2", False)},
        "silent": {"questions": rows("p1", True) + rows("p2", True)},
    }
    chosen = leave_one_person_out(runs, metric="useful")
    assert chosen["all_people"] == {"answers always": 0.25, "silent": 0.5}
    assert chosen["chosen_most"] == "silent" and chosen["held_out_mean"] == 0.5
