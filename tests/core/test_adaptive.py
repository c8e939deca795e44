"""The query-adaptive fusion rule: which words are specific, and the weight it gives."""

from __future__ import annotations

import pytest

from kronika.core.adaptive import FUSION_METHODS, adaptive_lexical_weight, specific_words


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("What did Caroline research?", ["Caroline"]),
        ("When did I run my first 5K?", ["5K"]),
        ("How much was the rent in 2022", ["2022"]),
        ("where is config.yaml kept", ["config.yaml"]),
        ("what does ERR_42 mean", ["ERR_42"]),
        ("the parseConfig function", ["parseConfig"]),
        ('what did she say about "slow mornings"', ["slow", "mornings"]),
        ("Co robiła Kasia w Krakowie?", ["Kasia", "Krakowie"]),
        ("Що Оксана купила в Києві?", ["Оксана", "Києві"]),
        ("Ask the NASA guy. Then call Bob", ["NASA", "Bob"]),
        ("did my mom's friend like my sister's dog?", []),  # apostrophes quote nothing
        ("«Pan Tadeusz» was it", ["Pan", "Tadeusz"]),
    ],
)
def test_names_numbers_identifiers_and_quotes_are_specific(query: str, found: list[str]) -> None:
    assert specific_words(query) == found


@pytest.mark.parametrize(
    "query",
    [
        "How did I feel about moving to a new city?",
        "What kind of music do I enjoy when relaxing?",
        "I wonder what she thought. Maybe it was fine",  # "I" and sentence openers
        "",
    ],
)
def test_paraphrase_like_queries_have_no_specific_word(query: str) -> None:
    assert specific_words(query) == []


def test_the_weight_leans_lexical_for_specific_queries_and_vector_for_the_rest() -> None:
    assert adaptive_lexical_weight("What did Caroline say?", 0.6, 0.2) == pytest.approx(0.8)
    assert adaptive_lexical_weight("how did the move feel?", 0.6, 0.2) == pytest.approx(0.4)
    assert adaptive_lexical_weight("room 101", 0.9, 0.3) == 1.0  # clipped to [0, 1]
    assert adaptive_lexical_weight("a quiet evening", 0.1, 0.3) == 0.0
    assert adaptive_lexical_weight("room 101", 0.6, 0.0) == 0.6  # no shift: the base


def test_adaptive_is_a_fusion_setting_beside_the_others() -> None:
    assert FUSION_METHODS == ("minmax", "zscore", "adaptive")


def test_a_speakers_name_is_no_specific_word() -> None:
    speakers = ["Caroline", "Melanie", None]
    assert specific_words("What is Caroline's identity?", speakers) == []
    assert specific_words("When did caroline go to the LGBTQ group?", speakers) == ["LGBTQ"]
    assert specific_words("Did Melanie meet Jon?", speakers) == ["Jon"]
    assert specific_words("Co robiła Kasia?", ["Kasia Nowak"]) == []  # a word of a full name
    assert adaptive_lexical_weight("What did Caroline paint?", 0.6, 0.2, speakers) == (
        pytest.approx(0.4)
    )
