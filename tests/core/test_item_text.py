from datetime import UTC, datetime

import pytest

from kronika.core.model import ItemType, Layer, MemoryItem, Provenance, Tier
from kronika.core.text import (
    content_hash,
    embedding_text,
    embedding_texts,
    key_words,
    normalize_key,
    question_share,
    searchable_content,
)

AT = datetime(2025, 11, 27, tzinfo=UTC)


def item(type_: ItemType, content: str, **extra: object) -> MemoryItem:
    return MemoryItem(
        id="i1",
        agent="jaskier",
        content=content,
        type=type_,
        layer=Layer.LONG_TERM,
        tier=Tier.LONG,
        created_at=AT,
        updated_at=AT,
        **{"provenance": Provenance("brain.md", 3), **extra},  # type: ignore[arg-type]
    )


def test_content_hash_is_stable_and_short():
    assert content_hash("Kraków") == content_hash("Kraków")
    assert content_hash("Kraków") != content_hash("Krakow")
    assert len(content_hash("x")) == 32
    assert content_hash("") == "e3b0c44298fc1c149afbf4c8996fb924"


def test_embedding_text_of_messages_facts_and_notes():
    said = item(ItemType.MESSAGE, "I love jazz", speaker="Caroline")
    assert embedding_text(said) == "Caroline: I love jazz"
    fact = item(ItemType.FACT, "city: Kraków", key="city", value="Kraków")
    assert embedding_text(fact) == "city: Kraków"
    profile = item(
        ItemType.PROFILE, "ulubiony_kolor: zielony", key="ulubiony_kolor", value="zielony"
    )
    assert embedding_text(profile) == "my ulubiony kolor is zielony"
    plain = item(ItemType.FACT, "prefers short answers")
    assert embedding_text(plain) == "prefers short answers"
    note = item(ItemType.NOTE, "check the boiler", speaker="agent")
    assert embedding_text(note) == "check the boiler"


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("city", "city"),
        ("ulubiony_kolor", "ulubiony kolor"),
        ("favourite-food", "favourite food"),
        ("dogName", "dog Name"),
        ("ulubionyKolor", "ulubiony Kolor"),
        ("HTTPServer", "HTTPServer"),
        ("preferencia.lenguaje", "preferencia lenguaje"),
        ("__", ""),
    ],
)
def test_a_key_is_read_as_its_words(key: str, words: str) -> None:
    assert key_words(key) == words


def test_a_keyed_fact_is_embedded_with_its_key_in_words_and_searched_by_its_value():
    fact = item(ItemType.FACT, "ulubiony_kolor: niebieski", key="ulubiony_kolor", value="niebieski")
    assert embedding_text(fact) == "ulubiony kolor: niebieski"
    assert searchable_content(fact) == "niebieski"
    plain = item(ItemType.NOTE, "my dog Rex")
    assert searchable_content(plain) == "my dog Rex"


def test_a_speaker_change_changes_the_hash():
    a = item(ItemType.MESSAGE, "I love jazz", speaker="user")
    b = item(ItemType.MESSAGE, "I love jazz", speaker="assistant")
    assert content_hash(embedding_text(a)) != content_hash(embedding_text(b))


def turn(speaker: str, content: str, session: str = "s1") -> MemoryItem:
    return item(ItemType.MESSAGE, content, speaker=speaker, provenance=_said_in(session))


def _said_in(session: str | None) -> Provenance:
    return Provenance(f"sessions/{session}.md", 1, session_id=session)


def test_a_turn_is_embedded_inside_its_exchange():
    turns = [
        turn("Caroline", "Which band played the birthday concert?"),
        turn("Melanie", "It was Matt Patterson!"),
        turn("Caroline", "Lucky kids."),
    ]
    assert embedding_texts(turns, context_words=30) == [
        "Caroline: Which band played the birthday concert? It was Matt Patterson!",
        "Which band played the birthday concert? Melanie: It was Matt Patterson! Lucky kids.",
        "It was Matt Patterson! Caroline: Lucky kids.",
    ]
    # without context, each turn alone (the hashes of the cache are unchanged)
    assert embedding_texts(turns) == [embedding_text(t) for t in turns]
    assert embedding_texts(turns, context_words=0) == [embedding_text(t) for t in turns]


def test_exchange_context_keeps_the_words_nearest_the_turn():
    turns = [
        turn("ana", "one two three four five"),
        turn("bo", "the reply"),
        turn("ana", "six seven eight nine"),
    ]
    assert embedding_texts(turns, context_words=2)[1] == "four five bo: the reply six seven"


def test_the_assistant_and_a_person_are_not_each_others_context():
    turns = [
        turn("user", "I just adopted a puppy, what should I feed her?"),
        turn("Assistant", "Congratulations! Puppies need food made for their growth."),
        turn("user", "Thanks!"),
    ]
    assert embedding_texts(turns, context_words=30) == [embedding_text(t) for t in turns]


def test_own_turns_other_sessions_and_notes_are_not_context():
    turns = [
        turn("user", "first request"),
        turn("User", "second request"),  # the same speaker, whatever the case
        turn("assistant", "an answer in another session", session="s2"),
        item(ItemType.NOTE, "a note between turns", provenance=_said_in("s2")),
        turn("assistant", "after the note", session="s2"),
        item(ItemType.MESSAGE, "no session", speaker="user", provenance=_said_in(None)),
    ]
    assert embedding_texts(turns, context_words=30) == [embedding_text(t) for t in turns]


def test_normalize_key():
    assert normalize_key("  Favourite   Food ") == "favourite food"
    assert normalize_key("Ulubione\tJEDZENIE") == "ulubione jedzenie"
    assert normalize_key("favourite_food") != normalize_key("favourite food")


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("What pet do you have?", 1.0),
        ("We've got a pup and a kitty.", 0.0),
        ("Congrats! So proud of you. Do you have any pets?", 0.5),
        ("Really?!", 1.0),
        ("Is it? Maybe.\nWhat now?", 0.8),
        ("Version 3.5 is out? Yes", 5 / 6),  # a decimal point ends no sentence
        ("¿Qué tal? Bien.", 2 / 3),
        ("Як справи? Добре.", 2 / 3),
        ("Gdzie mieszkasz?", 1.0),
        ("你好吗？我很好。", 0.5),
        ("I love it [shared a photo of a dog]", 0.0),
        ("", 0.0),
        ("?!", 0.0),
    ],
)
def test_question_share_counts_the_words_that_ask(text: str, share: float) -> None:
    assert question_share(text) == pytest.approx(share)
