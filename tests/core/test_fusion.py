"""Properties of the lexical + vector fusion (kronika.core.fusion)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kronika.core.fusion import (
    FUSIONS,
    Z_CEILING,
    answered,
    answered_by_a_person,
    bounded,
    fuse,
    named_speakers,
    normalise_lexical,
    normalise_vector,
    said_at_other_times,
    with_answer_focus,
    with_neighbours,
    with_preference,
    with_session_context,
    with_speaker_focus,
    with_time_focus,
)

ids = st.text(alphabet="abcdefgh", min_size=1, max_size=3)
scored = st.dictionaries(ids, st.floats(min_value=-1, max_value=30, allow_nan=False), max_size=12)


@given(scored, scored, st.floats(min_value=0, max_value=1), st.sampled_from(FUSIONS))
def test_relevance_is_bounded_and_covers_every_candidate(
    lex: dict[str, float], vec: dict[str, float], w: float, method: str
) -> None:
    fused = fuse(list(lex.items()), list(vec.items()), lexical_weight=w, method=method)
    assert set(fused) == set(lex) | set(vec)
    assert all(0.0 <= value <= 1.0 + 1e-9 for value in fused.values())


@given(scored, scored, st.integers(min_value=1, max_value=6))
def test_zscore_fusion_of_a_longer_list_does_not_change_the_best_ones(
    lex: dict[str, float], vec: dict[str, float], depth: int
) -> None:
    """Paging deeper (k above depth) must not rescore what the first page showed."""
    lexical = sorted(((i, s) for i, s in lex.items() if s > 0), key=lambda p: (-p[1], p[0]))
    vector = sorted(vec.items(), key=lambda p: (-p[1], p[0]))
    full = fuse(lexical, vector, depth=depth, method="zscore")
    short = fuse(lexical[:depth], vector[:depth], depth=depth, method="zscore")
    for item_id, value in short.items():
        assert full[item_id] == pytest.approx(value)


def test_zscore_fusion_measures_a_lead_against_the_spread_of_the_list() -> None:
    """Two clear BM25 matches far above the rest: the embedding decides between them.

    Min-max scaling divides by the best score, so "a"'s small BM25 lead (10.6 against
    9.8) outweighs "b"'s lead in meaning. In standard scores both stand about equally
    far above the other results, and the vector side breaks the near-tie.
    """
    lexical = [("a", 10.6), ("b", 9.8), ("c", 2.3), ("e", 1.9), ("d", 1.6)]
    vector = [("b", 0.81), ("a", 0.77), ("c", 0.72), ("e", 0.68), ("d", 0.45)]
    minmax = fuse(lexical, vector, lexical_weight=0.6, method="minmax")
    zscore = fuse(lexical, vector, lexical_weight=0.6, method="zscore")
    assert max(minmax, key=minmax.__getitem__) == "a"
    assert max(zscore, key=zscore.__getitem__) == "b"
    assert zscore["b"] == 1.0
    assert min(zscore.values()) == 0.0


def test_zscore_fusion_agrees_when_both_retrievers_agree() -> None:
    lexical = [("a", 9.0), ("b", 3.0), ("c", 2.5)]
    vector = [("a", 0.9), ("b", 0.4), ("c", 0.35)]
    fused = fuse(lexical, vector, method="zscore")
    assert fused["a"] == 1.0
    assert fused["a"] > fused["b"] > fused["c"]


def test_an_unknown_fusion_is_refused() -> None:
    with pytest.raises(ValueError, match="zscore"):
        fuse([("a", 1.0)], [("a", 0.5)], method="rrf")


@given(scored)
def test_best_of_each_list_maps_to_one(results: dict[str, float]) -> None:
    pairs = list(results.items())
    if not pairs:
        assert normalise_vector(pairs) == {} and normalise_lexical(pairs) == {}
        return
    best = max(pairs, key=lambda p: p[1])[0]
    assert normalise_vector(pairs)[best] == 1.0
    assert normalise_lexical(pairs)[best] == 1.0


def test_top_in_both_lists_beats_top_in_one() -> None:
    lexical = [("a", 9.0), ("b", 3.0)]
    vector = [("a", 0.8), ("c", 0.9), ("b", 0.1)]
    fused = fuse(lexical, vector, lexical_weight=0.7)
    assert fused["a"] > fused["c"]
    assert fused["a"] > fused["b"]


@pytest.mark.parametrize("method", FUSIONS)
def test_one_retriever_only_gives_its_own_normalised_scores(method: str) -> None:
    assert fuse([("a", 4.0), ("b", 2.0)], None, method=method) == {"a": 1.0, "b": 0.5}
    assert fuse(None, [("a", 0.9), ("b", 0.5)], method=method) == {"a": 1.0, "b": 0.0}
    assert fuse(None, None, method=method) == {}


@pytest.mark.parametrize("method", FUSIONS)
def test_weak_vector_only_match_stays_below_a_clear_lexical_match(method: str) -> None:
    lexical = [("note", 7.5)]
    vector = [("note", 0.62), ("fact", 0.40), ("other", 0.10)]
    fused = fuse(lexical, vector, lexical_weight=0.7, method=method)
    assert fused["note"] == 1.0
    assert fused["fact"] < 0.25


relevances = st.dictionaries(ids, st.floats(min_value=0, max_value=1), max_size=10)
offsets = st.sampled_from([-2, -1, 1, 2])
links = st.dictionaries(ids, st.lists(st.tuples(ids, offsets), max_size=4), max_size=10)


@given(relevances, links, st.floats(min_value=0, max_value=1))
def test_neighbour_context_only_raises_relevance_and_stays_bounded(
    rel: dict[str, float], nb: dict[str, list[tuple[str, int]]], w: float
) -> None:
    out = with_neighbours(rel, nb, weight=w)
    assert set(rel) <= set(out)
    assert all(0.0 <= value <= 1.0 + 1e-12 for value in out.values())
    assert all(out[i] >= rel[i] - 1e-12 for i in rel)


def test_a_reply_is_found_through_the_question_it_answers() -> None:
    rel = {"question": 0.9, "unrelated": 0.3}
    nb = {"question": [("reply", 1), ("greeting", -1)], "unrelated": []}
    out = with_neighbours(rel, nb, weight=0.5)
    assert out["reply"] == pytest.approx(0.45)  # not a candidate: gets w · 0.9
    assert out["greeting"] == pytest.approx(0.45)
    assert out["unrelated"] == 0.3  # no neighbours: unchanged
    assert out["question"] == 0.9  # its neighbours matched nothing
    two_away = with_neighbours(rel, {"question": [("later", 2)]}, weight=0.5)
    assert two_away["later"] == pytest.approx(0.225)  # the second neighbour counts half
    assert with_neighbours(rel, nb, weight=0.0) == rel


def test_neighbour_evidence_combines_like_independent_evidence() -> None:
    rel = {"a": 0.5, "b": 0.6, "c": 0.8}
    out = with_neighbours(rel, {"b": [("a", -1), ("c", 1)]}, weight=0.5)
    assert out["b"] == pytest.approx(1 - (1 - 0.6) * (1 - 0.25) * (1 - 0.4))
    # links are read both ways: a and c each see b
    assert out["a"] == pytest.approx(1 - 0.5 * (1 - 0.3))
    assert out["c"] == pytest.approx(1 - 0.2 * (1 - 0.3))


def test_a_named_speaker_is_found_whole_word_accent_and_case_insensitively() -> None:
    speakers = ["Melanie", "Caroline", "Zoë Ann", None]
    assert named_speakers("What did melanie's kids like?", speakers) == {"Melanie"}
    assert named_speakers("Did ZOE ANN call?", speakers) == {"Zoë Ann"}
    assert named_speakers("What did Mel like?", speakers) == set()  # not a whole word
    both = named_speakers("What did Melanie tell Caroline?", speakers)
    assert both == {"Melanie", "Caroline"}


@pytest.mark.parametrize(
    "question",
    [
        "What did the assistant suggest?",
        "Co polecił mi asystent?",
        "Co mówiłam asystentce o wakacjach?",
        "¿Qué me recomendó el asistente?",
        "Що порадив асистент?",
        "Що я казала помічникові?",
    ],
)
def test_the_assistant_is_named_by_its_role_in_four_languages(question: str) -> None:
    speakers = ["user", "assistant"]
    assert named_speakers(question, speakers) == {"assistant"}
    # a memory without the assistant's turns has no such speaker to prefer
    assert named_speakers(question, ["Melanie", "Caroline"]) == set()


@pytest.mark.parametrize(
    "question", ["What did you suggest?", "What did Melanie assist with?", "Who helped me?"]
)
def test_only_the_role_word_names_the_assistant(question: str) -> None:
    assert named_speakers(question, ["user", "assistant"]) == set()


def test_speaker_focus_prefers_the_one_named_speaker_and_stays_bounded() -> None:
    rel = {"a": 0.9, "b": 1.0, "c": 0.5}
    by = {"a": "Caroline", "b": "Melanie", "c": None}
    focused = with_speaker_focus(rel, by, {"Caroline"}, focus=0.2)
    assert focused["a"] == 0.9 and focused["b"] == pytest.approx(1 / 1.2)
    assert focused["c"] == pytest.approx(0.5 / 1.2)
    assert max(focused, key=focused.__getitem__) == "a"
    assert with_speaker_focus(rel, by, {"Caroline", "Melanie"}, focus=0.2) == rel
    assert with_speaker_focus(rel, by, set(), focus=0.2) == rel
    assert with_speaker_focus(rel, by, {"Caroline"}, focus=0.0) == rel


def test_preference_keeps_the_preferred_and_divides_the_rest() -> None:
    rel = {"said-when": 0.6, "named-it": 1.0, "other": 0.2}
    preferred = with_preference(rel, ["said-when", "not-a-candidate"], focus=1.0)
    assert preferred == {"said-when": 0.6, "named-it": 0.5, "other": 0.1}
    assert max(preferred, key=preferred.__getitem__) == "said-when"
    assert with_preference(rel, [], focus=0.0) == rel


DAY = 86400.0


def test_time_focus_prefers_what_was_said_in_the_named_period_or_soon_after() -> None:
    october = (0.0, 31 * DAY - 1)  # a month: as long again after it still counts
    rel = {"early": 0.6, "in": 0.5, "told-later": 0.5, "much-later": 1.0, "undated": 0.8}
    at = {"early": -DAY, "in": 12 * DAY, "told-later": 55 * DAY, "much-later": 70 * DAY}
    focused = with_time_focus(rel, at, october, focus=1.0)
    assert focused["in"] == 0.5 and focused["told-later"] == 0.5
    assert focused["early"] == pytest.approx(0.3)
    assert focused["much-later"] == pytest.approx(0.5) and focused["undated"] == pytest.approx(0.4)
    assert with_time_focus(rel, at, october, focus=0.0) == rel
    # a day is followed by a week, not by one more day
    one_day = (12 * DAY, 13 * DAY - 1)
    week = with_time_focus({"a": 1.0, "b": 1.0}, {"a": 19 * DAY, "b": 21 * DAY}, one_day, focus=1.0)
    assert week == {"a": 1.0, "b": 0.5}


@given(scored, st.floats(min_value=0, max_value=5))
def test_time_focus_keeps_relevance_bounded_and_never_raises_an_item(
    rel: dict[str, float], focus: float
) -> None:
    bounded = {k: min(1.0, max(0.0, v / 30)) for k, v in rel.items()}
    at = {k: float(i * DAY) for i, k in enumerate(sorted(bounded))}
    focused = with_time_focus(bounded, at, (0.0, DAY), focus=focus)
    assert set(focused) == set(bounded)
    assert all(0.0 <= focused[k] <= bounded[k] for k in bounded)


def test_session_context_moves_turns_towards_their_sessions_best() -> None:
    rel = {"a1": 0.9, "a2": 0.5, "b1": 0.55, "note": 0.5}
    session = {"a1": "A", "a2": "A", "b1": "B", "note": None}
    out = with_session_context(rel, session, weight=0.2)
    assert out["a1"] == pytest.approx(0.9)  # the best of its session keeps its relevance
    assert out["b1"] == pytest.approx(0.55) and out["note"] == pytest.approx(0.5)
    assert out["a2"] == pytest.approx((0.5 + 0.2 * 0.9) / 1.2)
    assert out["a2"] > out["b1"]  # the turn of the more relevant conversation now wins
    assert with_session_context(rel, session, weight=0.0) == rel


def test_answered_turns_are_those_the_other_party_replied_to_next() -> None:
    # b answered a (b's link to a at -1); c answered b; d is two turns after c: no reply
    links = {"b": [("a", -1), ("c", 1)], "d": [("b", -2)]}
    assert answered(links) == {"a": "b", "b": "c"}
    assert answered({}) == {}


def test_only_a_persons_answer_takes_over_from_the_question() -> None:
    replies = {"q1": "r1", "q2": "r2", "q3": "r3", "q4": "r4"}
    speakers = {"r1": "Melanie", "r2": "assistant", "r3": "Assistant", "r4": None}
    assert answered_by_a_person(replies, speakers) == ["q1", "q4"]


def test_answer_focus_divides_by_the_share_that_asks() -> None:
    rel = {"question": 0.8, "mixed": 0.8, "answer": 0.6}
    out = with_answer_focus(rel, {"question": 1.0, "mixed": 0.5, "answer": 0.0}, focus=1.5)
    assert out["question"] == pytest.approx(0.8 / 2.5)
    assert out["mixed"] == pytest.approx(0.8 / 1.75)
    assert out["answer"] == 0.6
    assert with_answer_focus(rel, {"question": 1.0}, focus=0.0) == rel


def test_between_two_clear_keyword_matches_the_embedding_decides() -> None:
    # "What is the name of my dog?": keyword search matches the fact keyed `name` on
    # its rarer word and the fact about the dog less strongly; both stand far above
    # the ninety-odd non-matches. The embedding prefers the fact about the dog.
    vector = [(f"turn{n:02d}", 0.10 + 0.001 * n) for n in range(98)]
    vector += [("name: Lucas", 0.15), ("dog: Rex is a beagle", 0.25)]
    lexical = [("name: Lucas", 7.5), ("dog: Rex is a beagle", 4.0)]
    relevance = fuse(lexical, vector, depth=100, z_ceiling=Z_CEILING)
    assert max(relevance, key=lambda i: relevance[i]) == "dog: Rex is a beagle"
    # unbounded (the default), the rarer word's lead decides alone
    unbounded = fuse(lexical, vector, depth=100)
    assert max(unbounded, key=lambda i: unbounded[i]) == "name: Lucas"
    # with no keyword match for it, a lone match keeps the lead of its evidence
    alone = fuse([("name: Lucas", 7.5)], vector, depth=100, z_ceiling=Z_CEILING)
    assert max(alone, key=lambda i: alone[i]) == "name: Lucas"


def test_bounded_keeps_the_order_and_stays_within_the_ceiling() -> None:
    values = [-20.0, -3.0, -0.5, 0.0, 0.5, 2.0, 3.0, 9.9, 50.0]
    out = [bounded(v) for v in values]
    assert out == sorted(out)
    assert all(-Z_CEILING < b < Z_CEILING for b in out)
    assert abs(bounded(0.5) - 0.5) < 0.01  # near the mean a standard score is kept


def test_a_text_said_outside_the_period_too_is_not_said_in_it_alone() -> None:
    said_at = {"errand-march": 15.0, "errand-may": 40.0, "move": 12.0, "hi": 14.0, "hello": 13.0}
    texts = {
        "errand-march": "How do I remind a client  about an invoice?",
        "errand-may": "how do i remind a client about an invoice?",  # case and spacing aside
        "move": "packing boxes, we move next week",
        "hi": "hi",
        "hello": "hi",  # said twice, both times within the period: still of it
        "unknown": "packing boxes, we move next week",  # no time: says nothing of when
    }
    inside = ["errand-march", "move", "hi", "hello"]
    assert said_at_other_times(inside, texts, said_at, (10.0, 20.0)) == ["errand-march"]
    assert said_at_other_times(inside, texts, said_at, (10.0, 50.0)) == []
    assert said_at_other_times([], texts, said_at, (10.0, 20.0)) == []
