"""The relevance floor: recall, the prompt's long-term block and lessons return nothing
rather than something unrelated (docs/scoring.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.cli.main import main
from kronika.core.floor import evidenced
from kronika.core.lessons import exit_code
from kronika.testing import FrozenClock

FLOOR = 0.3
TLS = exit_code(1, "error: the TLS certificate of the ingress expired")


def _memory(home: Path, clock: FrozenClock, floor: float = FLOOR) -> Memory:
    settings = load_settings(home, environ={}, embedder="hashing", relevance_floor=floor)
    return build_memory(settings, create=True, clock=clock)


def _tls_lessons(memory: Memory) -> None:
    memory.record_outcome("renew the TLS certificates", "certbot renew", TLS)
    memory.record_outcome("rotate the TLS certificate of the ingress", "kubectl apply", TLS)
    memory.note("The staging cluster uses certificates from the internal CA")


def test_a_query_about_nothing_stored_finds_nothing_and_says_why(
    tmp_path: Path, clock: FrozenClock
) -> None:
    with _memory(tmp_path / "ws", clock) as memory:
        _tls_lessons(memory)
        result = memory.recall("translate the onboarding guide into Polish", k=5)
        assert result.hits == ()
        assert any("relevance floor" in note for note in result.notes)
        related = memory.recall("when do the TLS certificates expire?", k=5)
        assert related.hits and not related.notes
        assert all("certificate" in hit.item.content.lower() for hit in related.hits)


def test_without_a_floor_recall_still_returns_its_nearest_items(
    tmp_path: Path, clock: FrozenClock
) -> None:
    with _memory(tmp_path / "ws", clock, floor=0.0) as memory:
        _tls_lessons(memory)
        assert memory.recall("translate the onboarding guide into Polish", k=5).hits


def test_lessons_for_an_unrelated_task_are_none_and_a_related_task_gets_them(
    tmp_path: Path, clock: FrozenClock
) -> None:
    with _memory(tmp_path / "ws", clock) as memory:
        _tls_lessons(memory)
        assert memory.lessons_for("translate the onboarding guide") == []
        served = memory.lessons_for("renew the TLS certificates again")
        assert served and all("TLS" in hit.item.content for hit in served)


def test_the_long_term_block_is_left_out_when_nothing_is_related(
    tmp_path: Path, clock: FrozenClock
) -> None:
    with _memory(tmp_path / "ws", clock) as memory:
        memory.note("The staging cluster uses certificates from the internal CA")
        memory.remember("Valencia", key="city")
        unrelated = memory.format_for_prompt(query="translate the onboarding guide")
        assert "LONG_TERM_MEMORY" not in unrelated and "internal CA" not in unrelated
        related = memory.format_for_prompt(query="which CA signs the staging certificates?")
        assert "internal CA" in related


def test_a_reply_passes_through_the_question_it_answers() -> None:
    """A turn with no evidence of its own is kept when the other party's turn beside it
    has some: "It was Matt Patterson!" answers the question that names the concert."""
    links = {"answer": [("question", -1)], "question": [("answer", 1)]}
    kept = evidenced(
        ["question", "answer", "noise"],
        matched={"question"},
        similarity={"answer": 0.1, "noise": 0.2},
        floor=0.3,
        links=links,
    )
    assert kept == {"question", "answer"}
    close = evidenced(["noise"], matched=set(), similarity={"noise": 0.3}, floor=0.3, links={})
    assert close == {"noise"}
    assert evidenced(["a", "b"], matched=set(), similarity={}, floor=0.0, links={}) == {"a", "b"}


def test_a_query_of_function_words_alone_is_judged_by_meaning_not_by_shared_words(
    tmp_path: Path, clock: FrozenClock
) -> None:
    """ "what is it?" shares "what", "is" and "it" with many memories: such words are no
    evidence, so only a close enough embedding keeps an item."""
    with _memory(tmp_path / "ws", clock) as memory:
        memory.note("What is it that the kettle does at night? It hums.")
        result = memory.recall("is it what?", k=5, mode="lexical")
        assert result.hits == ()


def test_kronika_lessons_task_serves_only_the_lessons_of_a_related_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KRONIKA_EMBEDDER", "hashing")
    # the default floor is the default embedder's; hashed spellings of unrelated texts
    # reach 0.25 (shared "the"), so these tests use 0.3
    monkeypatch.setenv("KRONIKA_RELEVANCE_FLOOR", str(FLOOR))
    home = str(tmp_path / "ws")
    assert main(["--home", home, "init"]) == 0
    for task in ("renew the TLS certificates", "rotate the TLS certificate of the ingress"):
        args = ["--home", home, "lessons", "record", task, "--action", "certbot renew"]
        assert main([*args, "--exit-code", "1", "--stderr", "TLS expired", "--no-model"]) == 0
    capsys.readouterr()
    assert main(["--home", home, "lessons", "--task", "translate the onboarding guide"]) == 0
    assert "no lesson matches that task" in capsys.readouterr().out
    assert main(["--home", home, "lessons", "--json", "--task", "renew TLS certificates"]) == 0
    assert '"id"' in capsys.readouterr().out
