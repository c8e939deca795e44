"""Speakers and keys are fields, and small talk answers nothing: on every backend.

Run on the Markdown workspace with its SQLite index and on PostgreSQL (the ``backend``
fixture), with the default multilingual embedder where meaning is what is tested.
"""

from __future__ import annotations

from backends import Backend
from kronika.testing import FrozenClock

USE = "use-multilingual"


def test_where_does_the_user_live_finds_where_not_greetings(
    backend: Backend, clock: FrozenClock
) -> None:
    """Every turn is the user's, and greetings come close to any short question: the
    turn that says where comes first."""
    memory = backend.open(clock=clock, embedder=USE)
    memory.remember("prefiere TypeScript", key="preferencia")
    memory.save_turn("chat-1", "user", "hello, how are you?")
    memory.save_turn("chat-1", "assistant", "Hi! I'm fine, thanks. How can I help?")
    memory.save_turn("chat-1", "user", "hello, how are you?")
    memory.save_turn("chat-1", "user", "I moved to Valencia last week")
    memory.save_turn("chat-1", "user", "thanks")
    hits = memory.recall("where does the user live?", k=5, since="30d").hits
    assert hits[0].item.content == "I moved to Valencia last week"
    contents = [hit.item.content for hit in hits]
    assert "hello, how are you?" not in contents and "thanks" not in contents


def test_a_key_word_asked_as_an_ordinary_word_does_not_win(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = backend.open(clock=clock, embedder=USE)
    memory.remember("Lucas", key="name")
    memory.remember("my dog Rex is a beagle", key="pet")
    memory.remember("Kraków", key="city")
    memory.save_turn("chat-1", "user", "hi")
    memory.save_turn("chat-1", "user", "ok")
    hits = memory.recall("what is the name of my dog?", k=5).hits
    assert hits[0].item.key == "pet"
    # the name asked for is the dog's: the user's own name is no answer at all
    assert "name" not in [hit.item.key for hit in hits]
    # the key still answers when the question asks about it
    assert memory.recall("name", k=5).hits[0].item.key == "name"
    assert memory.recall("what is my name?", k=5).hits[0].item.key == "name"


def test_a_key_matches_by_its_words_and_its_meaning(backend: Backend, clock: FrozenClock) -> None:
    memory = backend.open(clock=clock, embedder=USE)
    memory.remember("niebieski", key="ulubiony_kolor")
    memory.remember("Lucas", key="name")
    memory.remember("Burek", key="pies")
    memory.remember("Rex", key="dog_name")
    memory.save_turn("chat-1", "user", "hello, how are you?")
    memory.save_turn("chat-1", "user", "thanks")
    assert memory.recall("what is my favourite colour?", k=5).hits[0].item.key == "ulubiony_kolor"
    assert memory.recall("jaki jest mój ulubiony kolor?", k=5).hits[0].item.key == "ulubiony_kolor"
    assert memory.recall("what is my dog's name?", k=5).hits[0].item.key == "dog_name"
    memory.remember("pierogi", key="favouriteFood")
    found = memory.recall("favourite food", k=3, mode="lexical").hits
    assert [hit.item.key for hit in found] == ["favouriteFood"]


def test_small_talk_answers_no_question_but_is_found_when_asked_for(
    backend: Backend, clock: FrozenClock
) -> None:
    memory = backend.open(clock=clock, embedder=USE)
    memory.remember("Burek", key="pies")
    for said in ("hi", "hello, how are you?", "thanks", "dzięki", "gracias", "дякую", "ok"):
        memory.save_turn("chat-1", "user", said)
    memory.save_turn("chat-1", "user", "I adopted a beagle from the shelter")
    hits = memory.recall("tell me about my dog", k=5).hits
    contents = [hit.item.content for hit in hits]
    assert contents[0] in ("I adopted a beagle from the shelter", "pies: Burek")
    assert set(contents) <= {"I adopted a beagle from the shelter", "pies: Burek"}
    assert memory.recall("thanks", k=3).hits[0].item.content == "thanks"
    assert memory.recall("дякую", k=3).hits[0].item.content == "дякую"


def test_a_profile_fact_answers_where_the_user_lives_without_sharing_a_word(
    backend: Backend, clock: FrozenClock
) -> None:
    """``city: Bristol`` shares no word with "Where do I live now?": it is found by its
    meaning, read as the user's own statement, above greetings and errands."""
    memory = backend.open(clock=clock, embedder=USE)
    memory.remember("Bristol", key="city")
    memory.remember("Deliveroo", key="employer")
    memory.remember("cello", key="instrument")
    for said in ("hi", "hello, how are you?", "thanks", "ok", "can you recommend a film?"):
        memory.save_turn("chat-1", "user", said)
    assert memory.recall("Where do I live now?", k=5).hits[0].item.key == "city"
    assert memory.recall("¿Dónde vivo ahora?", k=5).hits[0].item.key == "city"
    assert memory.recall("Who do I work for?", k=5).hits[0].item.key == "employer"


def test_a_key_of_the_users_asked_as_someone_elses_is_no_answer(
    backend: Backend, clock: FrozenClock
) -> None:
    """``name: Lucas`` is the user's name; "what is my dog's name?" asks for the dog's.
    With the dog kept in another language (``pies: Burek``, found by meaning alone) the
    user's name used to come first, on its key and on its meaning ("my name is Lucas")."""
    memory = backend.open(clock=clock, embedder=USE)
    memory.remember("Lucas", key="name")
    memory.remember("Burek", key="pies")
    memory.remember("Kraków", key="city")
    memory.remember("pierogi", key="favourite_food")
    for said in ("hi", "hello, how are you?", "thanks", "ok"):
        memory.save_turn("chat-1", "user", said)
    for question in ("what is my dog's name?", "what is the name of my dog?"):
        keys = [hit.item.key for hit in memory.recall(question, k=5).hits]
        assert keys[0] == "pies", question
        assert "name" not in keys, question
    keys = [hit.item.key for hit in memory.recall("What is Tom's favourite food?", k=5).hits]
    assert "favourite_food" not in keys
    assert memory.recall("What is my favourite food?", k=5).hits[0].item.key == "favourite_food"


def test_a_question_naming_the_user_is_read_as_the_users_own(
    backend: Backend, clock: FrozenClock
) -> None:
    """The memory is David's: "Where does David live now?" asks what ``city: Vancouver``
    (his own statement, "my city is Vancouver") answers, not his name or the greetings
    that name him; in another language too, with the name inflected, and as "the
    user"."""
    memory = backend.open(clock=clock, embedder=USE)
    memory.remember("David Okafor", key="name")
    memory.remember("Toronto", key="city")
    memory.remember("Vancouver", key="city")  # he moved: the current value answers
    memory.remember("Stripe", key="employer")
    memory.remember("Pepper", key="cat")
    for said in ("hey", "ok thanks", "can you recommend a camera for a beginner?"):
        memory.save_turn("chat-1", "user", said)
        memory.save_turn("chat-1", "assistant", "Hey David! Sure.")
    for question in (
        "Where does David live now?",
        "Gdzie teraz mieszka David?",
        "Where does the user live?",
    ):
        hits = memory.recall(question, k=5).hits
        assert hits[0].item.content == "city: Vancouver", question
    assert memory.recall("Who does David work for?", k=5).hits[0].item.key == "employer"
    assert memory.recall("Jak się wabi kot Davida?", k=5).hits[0].item.key == "cat"
    # a question about nothing but him is answered by what names him
    assert "name" in [hit.item.key for hit in memory.recall("Who is David?", k=5).hits]


def test_the_users_name_is_read_in_either_script(backend: Backend, clock: FrozenClock) -> None:
    """Taras keeps his memory in Ukrainian; asked about in English or Polish, his name is
    written in Latin letters, and still names him."""
    memory = backend.open(clock=clock, embedder=USE)
    memory.remember("Тарас", key="ім'я")
    memory.remember("Київ", key="місто")
    memory.remember("Дніпро", key="місто")
    memory.remember("Нова пошта", key="робота")
    for said in ("привіт", "дякую", "ок"):
        memory.save_turn("chat-1", "user", said)
        memory.save_turn("chat-1", "assistant", "Привіт, Тарасе! Чим допомогти?")
    for question in (
        "Де зараз живе Тарас?",
        "Where does Taras live now?",
        "Gdzie teraz mieszka Taras?",
    ):
        assert memory.recall(question, k=5).hits[0].item.content == "місто: Дніпро", question
