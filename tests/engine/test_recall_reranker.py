"""Recall with a reranking service: blended in when it answers, left out when it cannot."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.core.fusion import with_reranking
from kronika.core.model import RecallFilter
from kronika.engine.recall import Recaller, RecallSettings
from kronika.engine.reranking import RERANKER_LONGEST_REST, RERANKER_REST
from kronika.ports import Reranker
from kronika.providers.rerankers import HttpReranker, RerankerConfig
from kronika.settings import Settings
from kronika.testing import FrozenClock, ScriptedFailure, ScriptedRerankServer, conversation

BOOKS = conversation(
    "conv-b1",
    datetime(2023, 5, 1, 18, 0, tzinfo=UTC),
    [
        ("D1:1", "John", "Do you read much? I keep buying books and never reading them."),
        ("D1:2", "Maria", "Books are great, I read a lot of books on the train."),
        ("D1:3", "John", "I just finished Dune by Frank Herbert, what a ride."),
        ("D1:4", "Maria", "My sister gave me books about gardening."),
        ("D1:5", "John", "We went on a mountaineering trip with workmates."),
        ("D1:6", "Maria", "Which books would you read again?"),
    ],
)
QUESTION = "What books has John read?"
NOW = datetime(2023, 6, 1, tzinfo=UTC)


def novels(query: str, document: str) -> float:
    """A stand-in cross-encoder that knows Dune is a book John read."""
    return 9.0 if "Dune" in document else 0.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def server() -> Iterator[ScriptedRerankServer]:
    with ScriptedRerankServer(novels) as running:
        yield running


def _memory(settings: Settings, clock: FrozenClock, **overrides: object) -> Memory:
    mem = build_memory(settings.with_overrides(**overrides), create=True, clock=clock)
    mem.import_sessions("conv", [BOOKS])
    return mem


def _turns(mem: Memory, k: int = 6) -> list[str]:
    result = mem.recall(QUESTION, agent="conv", k=k, now=NOW, record_access=False)
    return [hit.item.provenance.turn_ids[0] for hit in result.hits]


def test_the_reranker_lifts_what_shares_no_word_with_the_question(
    settings: Settings, clock: FrozenClock, server: ScriptedRerankServer
) -> None:
    with _memory(settings, clock) as mem:
        alone = _turns(mem)
    with _memory(settings, clock, reranker_base_url=server.base_url, reranker_weight=1.0) as mem:
        result = mem.recall(QUESTION, agent="conv", k=6, now=NOW, record_access=False)
    assert alone[0] != "D1:3"
    assert result.hits[0].item.provenance.turn_ids == ("D1:3",)
    assert result.hits[0].score.rerank_score == 9.0
    assert result.notes == ()
    (request,) = server.requests
    assert request.body["query"] == QUESTION
    assert "John: I just finished Dune by Frank Herbert, what a ride." in request.body["documents"]


def test_a_partial_weight_moves_results_less(
    settings: Settings, clock: FrozenClock, server: ScriptedRerankServer
) -> None:
    # a weaker preference for John's own turns than the default, so that his Dune turn
    # does not lead before any reranking and there is room to move it
    settings = settings.with_overrides(speaker_focus=0.3)
    with _memory(settings, clock) as mem:
        alone = _turns(mem)
    with _memory(settings, clock, reranker_base_url=server.base_url, reranker_weight=0.1) as mem:
        light = _turns(mem)
    with _memory(settings, clock, reranker_base_url=server.base_url, reranker_weight=1.0) as mem:
        full = _turns(mem)
    assert sorted(light) == sorted(alone)
    assert alone.index("D1:3") >= light.index("D1:3") > full.index("D1:3") == 0


def test_only_the_best_candidates_are_sent(
    settings: Settings, clock: FrozenClock, server: ScriptedRerankServer
) -> None:
    with _memory(settings, clock, reranker_base_url=server.base_url, reranker_depth=3) as mem:
        mem.recall(QUESTION, agent="conv", k=6, now=NOW, record_access=False)
        mem.recall(QUESTION, agent="conv", k=6, now=NOW, record_access=False, mode="lexical")
    assert [len(r.body["documents"]) for r in server.requests] == [3, 3]


def test_weight_zero_or_an_empty_query_never_calls_it(
    settings: Settings, clock: FrozenClock, server: ScriptedRerankServer
) -> None:
    with _memory(settings, clock, reranker_base_url=server.base_url, reranker_weight=0.0) as mem:
        mem.recall(QUESTION, agent="conv", k=6, now=NOW, record_access=False)
    with _memory(settings, clock, reranker_base_url=server.base_url) as mem:
        everything = mem.recall("  ", agent="conv", k=6, now=NOW, record_access=False)
    assert everything.hits == ()
    assert server.requests == []


def test_a_reranker_that_is_down_loses_nothing_and_is_left_alone_for_a_while(
    settings: Settings, clock: FrozenClock, caplog: pytest.LogCaptureFixture
) -> None:
    with _memory(settings, clock) as mem:
        alone = _turns(mem)
    url = f"http://127.0.0.1:{free_port()}/v1"
    with _memory(settings, clock, reranker_base_url=url, reranker_retries=0) as mem:
        first = mem.recall(QUESTION, agent="conv", k=6, now=NOW, record_access=False)
        second = mem.recall(QUESTION, agent="conv", k=6, now=NOW, record_access=False)
    assert [hit.item.provenance.turn_ids[0] for hit in first.hits] == alone
    assert [hit.item.provenance.turn_ids[0] for hit in second.hits] == alone
    (note,) = first.notes
    assert "keep recall's own order" in note and "connection refused" in note and url in note
    # the rest counts down on the real clock: a slow first recall leaves 29 s or less
    (rest,) = second.notes
    waits = re.fullmatch(
        r"the reranker failed 1 time\(s\) in a row and is asked again in (\d+) s; "
        r"results keep recall's own order",
        rest,
    )
    assert waits is not None and 0 < int(waits.group(1)) <= 30, rest
    assert "reranking skipped for 30 s" in caplog.text


def _recaller(mem: Memory, clock: FrozenClock, reranker: Reranker, now: list[float]) -> Recaller:
    return Recaller(
        index=mem.index,
        embedder=mem.embedder,
        tokens=mem.tokens,
        clock=clock,
        settings=RecallSettings(reranker_weight=1.0),
        reranker=reranker,
        monotonic=lambda: now[0],
    )


def _ask(recaller: Recaller) -> tuple[str, tuple[str, ...]]:
    flt = RecallFilter(agents=("conv",), tenant="default")
    result = recaller.recall(QUESTION, flt, k=6, now=NOW, record_access=False)
    return result.hits[0].item.provenance.turn_ids[0], result.notes


def test_a_failing_reranker_rests_longer_each_time_and_is_asked_again_after(
    tmp_path: Path, clock: FrozenClock
) -> None:
    settings = load_settings(tmp_path / "ws", environ={}, embedder="hashing")
    now = [1000.0]
    failures = [ScriptedFailure(401), ScriptedFailure(400)]
    with (
        build_memory(settings, create=True, clock=clock) as mem,
        ScriptedRerankServer(novels, failures=failures) as server,
    ):
        mem.import_sessions("conv", [BOOKS])
        recaller = _recaller(mem, clock, HttpReranker(RerankerConfig(server.base_url)), now)
        asked = []
        for step in (0, RERANKER_REST - 1, 2, 2 * RERANKER_REST - 1, 2, 1):
            now[0] += step
            asked.append(_ask(recaller))
    refused, resting, refused_again, resting_longer, answered, answered_again = asked
    assert "HTTP 401" in refused[1][0] and refused[0] != "D1:3"
    assert "1 time(s) in a row and is asked again in 1 s" in resting[1][0]
    assert "HTTP 400" in refused_again[1][0]
    assert "2 time(s) in a row and is asked again in 1 s" in resting_longer[1][0]
    assert answered == answered_again == ("D1:3", ())
    assert len(server.requests) == 4


class OwnReranker:
    """A reranker of one's own that answers ``scores(documents)``."""

    model = "own"

    def __init__(self, scores: Callable[[Sequence[str]], list[float]]) -> None:
        self._scores = scores

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return self._scores(documents)


@pytest.mark.parametrize(
    ("scores", "why"),
    [
        (lambda docs: [1.0] * (len(docs) - 1), "the reranker gave 5 scores for 6 candidates"),
        (lambda docs: [float("nan")] * len(docs), "a score that is not a finite number"),
    ],
)
def test_a_reranker_that_miscounts_or_gives_no_number_is_not_trusted(
    tmp_path: Path,
    clock: FrozenClock,
    scores: Callable[[Sequence[str]], list[float]],
    why: str,
) -> None:
    settings = load_settings(tmp_path / "ws", environ={}, embedder="hashing")
    with build_memory(settings, create=True, clock=clock) as mem:
        mem.import_sessions("conv", [BOOKS])
        plain = mem.recall(QUESTION, agent="conv", k=6, now=NOW, record_access=False)
        first, notes = _ask(_recaller(mem, clock, OwnReranker(scores), [0.0]))
    assert first == plain.hits[0].item.provenance.turn_ids[0]
    (note,) = notes
    assert note.startswith("results keep recall's own order: ") and why in note


def test_a_reranker_down_for_days_rests_ten_minutes_at_most(
    tmp_path: Path, clock: FrozenClock
) -> None:
    settings = load_settings(tmp_path / "ws", environ={}, embedder="hashing")
    now = [0.0]
    with build_memory(settings, create=True, clock=clock) as mem:
        mem.import_sessions("conv", [BOOKS])
        recaller = _recaller(mem, clock, OwnReranker(lambda docs: []), now)
        for _ in range(1200):  # about eight days of failures, ten minutes apart
            _ask(recaller)
            now[0] += RERANKER_LONGEST_REST + 1
        _ask(recaller)
        _, (resting,) = _ask(recaller)
    assert "1201 time(s) in a row and is asked again in 600 s" in resting


def test_blending_keeps_the_band_and_ignores_the_scale() -> None:
    relevance = {"a": 0.9, "b": 0.5, "c": 0.1, "d": 0.05}
    logits = with_reranking(relevance, {"a": -2.0, "b": 3.0, "c": 0.5}, weight=1.0)
    probabilities = with_reranking(relevance, {"a": 0.1, "b": 0.9, "c": 0.5}, weight=1.0)
    assert logits == pytest.approx({"a": 0.1, "b": 0.9, "c": 0.1 + 0.8 * 2.5 / 5, "d": 0.05})
    assert sorted(probabilities, key=probabilities.__getitem__) == ["d", "a", "c", "b"]
    half = with_reranking(relevance, {"a": -2.0, "b": 3.0}, weight=0.5)
    assert half == pytest.approx({"a": 0.7, "b": 0.7, "c": 0.1, "d": 0.05})
    assert with_reranking(relevance, {"a": 1.0, "b": 1.0}, weight=1.0) == pytest.approx(
        {"a": 0.7, "b": 0.7, "c": 0.1, "d": 0.05}
    )
    assert with_reranking(relevance, {"a": 5.0}, weight=1.0) == relevance
