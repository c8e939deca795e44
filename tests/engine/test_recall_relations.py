"""Entity pages answer questions about their entity: one about someone the user names by
a relation ("What does my partner do?") through the keyed fact naming them
(:mod:`kronika.engine.relations`), and none about the user alone ("Where do I live?",
:mod:`kronika.core.user_subject`); over a real workspace and SQLite index."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from backends import Backend
from kronika import Memory, WriteEntityPage
from kronika.core.relations import asks_about_the_one_named
from kronika.core.text import folded_words
from kronika.core.user_subject import about_the_user_alone

NOW = datetime(2026, 11, 1, tzinfo=UTC)
PEOPLE = {
    # language: (key, name, what the page says, a question about the person, one asking
    # the name, a turn of small talk)
    "en": (
        "partner",
        "Tom",
        "Tom is a paramedic and plays bass guitar in a pub band.",
        "What does my partner do for work?",
        "What is my partner's name?",
        "hi, how are you?",
    ),
    "pl": (
        "mąż",
        "Paweł",
        "Paweł jest stolarzem i robi meble na zamówienie.",
        "Czym zajmuje się zawodowo mój mąż?",
        "Jak ma na imię mój mąż?",
        "cześć, co słychać?",
    ),
    "uk": (
        "чоловік",
        "Андрій",
        "Андрій програміст у Grammarly і грає на барабанах.",
        "Ким працює мій чоловік?",
        "Як звати мого чоловіка?",
        "привіт, як справи?",
    ),
}


def _write(memory: Memory, agent: str, lang: str) -> None:
    key, name, page, _, _, turn = PEOPLE[lang]
    memory.create_agent(agent)
    memory.remember(key=key, value=name, agent=agent, at=datetime(2026, 1, 5, tzinfo=UTC))
    memory.save_turn("s1", "user", turn, agent=agent, at=datetime(2026, 2, 1, tzinfo=UTC))
    memory.save_turn("s1", "assistant", "ok", agent=agent, at=datetime(2026, 2, 1, tzinfo=UTC))
    text = f"# {name}\n\n- {page}\n"
    memory.memory_write(agent, "bank", WriteEntityPage(f"bank/entities/{name}.md", text))


def _first(memory: Memory, question: str, agent: str, **options: object) -> str:
    hits = memory.recall(question, agent=agent, k=5, now=NOW, record_access=False, **options)  # type: ignore[arg-type]
    return hits.hits[0].item.content if hits.hits else ""


@pytest.mark.parametrize("lang", sorted(PEOPLE))
def test_a_question_about_the_person_a_fact_names_is_answered_by_their_page(
    backend: Backend, lang: str
) -> None:
    key, name, page, about, asking_the_name, _ = PEOPLE[lang]
    _write(backend.open(), "me", lang)
    # another worker (on PostgreSQL: what it reads came through the store of record)
    memory = backend.open("b")
    assert _first(memory, about, "me") == page
    # asked for the name itself, the fact answers
    assert _first(memory, asking_the_name, "me") == f"{key}: {name}"


@pytest.mark.parametrize(
    ("lang", "question"),
    [
        ("pl", "What does my husband do for a living?"),
        ("uk", "¿A qué se dedica mi marido?"),
        ("en", "Чим займається мій партнер?"),
    ],
)
def test_a_relation_named_in_another_language_leads_to_the_page(
    backend: Backend, lang: str, question: str
) -> None:
    """``mąż: Paweł`` asked about as "my husband", ``partner: Tom`` as "мій партнер"."""
    _, _, page, _, _, _ = PEOPLE[lang]
    _write(backend.open(), "me", lang)
    assert _first(backend.open("b"), question, "me") == page


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What does my husband do for a living?", "Tom is a paramedic"),
        ("¿A qué se dedica mi novio?", "Tom is a paramedic"),
        ("Як звати мого чоловіка?", "partner: Tom"),
        ("Jak ma na imię mój mąż?", "partner: Tom"),
    ],
)
def test_a_husband_or_boyfriend_asked_about_is_the_partner_a_fact_names(
    backend: Backend, question: str, answer: str
) -> None:
    """``partner: Tom`` asked about as "my husband" or "mi novio" (core/kin.py)."""
    _write(backend.open(), "me", "en")
    assert _first(backend.open("b"), question, "me").startswith(answer)


def test_a_page_is_read_under_the_recalls_own_filter(backend: Backend) -> None:
    memory = backend.open()
    _, name, page, about, _, _ = PEOPLE["en"]
    _write(memory, "me", "en")
    # a recall limited to another entity brings in no page of Tom
    hits = memory.recall(about, agent="me", k=5, now=NOW, record_access=False, entities=["Anna"])
    assert all(hit.item.content != page for hit in hits.hits)
    # another agent's page of the same name is not this agent's to read
    memory.create_agent("other")
    memory.remember(key="partner", value=name, agent="other")
    hits = memory.recall(about, agent="other", k=5, now=NOW, record_access=False)
    assert all(hit.item.agent == "other" for hit in hits.hits)
    assert all(hit.item.content != page for hit in hits.hits)


def test_a_question_naming_the_person_by_the_value_is_answered_by_their_page(
    backend: Backend,
) -> None:
    key, name, page, _, _, _ = PEOPLE["en"]
    memory = backend.open()
    _write(memory, "me", "en")
    assert _first(memory, f"What job does {name} have?", "me") == page
    assert _first(memory, f"Who is {name}?", "me") == f"{key}: {name}"  # the fact says it


@pytest.mark.parametrize(
    ("question", "key", "value", "asks"),
    [
        ("What job does Javier have?", "pareja", "Javier", True),
        ("Who is Javier?", "pareja", "Javier", False),
        ("Czym zajmuje się Paweł?", "mąż", "Paweł", True),
        ("What job does Marta have?", "pareja", "Javier", None),
    ],
)
def test_a_question_may_name_the_person_by_the_value(
    question: str, key: str, value: str, asks: bool | None
) -> None:
    assert asks_about_the_one_named(list(folded_words(question)), key, value) is asks


@pytest.mark.parametrize(
    ("question", "key", "asks"),
    [
        ("What does the user's partner do for work?", "partner", True),
        ("Who is my partner now?", "partner", False),
        ("What is my partner's name?", "partner", False),
        ("Czym zajmuje się zawodowo mój mąż?", "mąż", True),
        ("Jak ma na imię mąż użytkownika?", "mąż", False),
        ("¿A qué se dedica la pareja del usuario?", "pareja", True),
        ("¿Cómo se llama mi pareja?", "pareja", False),
        ("Як звати чоловіка користувача?", "чоловік", False),
        ("Ким працює мій чоловік?", "чоловік", True),
        ("What does my brother do?", "partner", None),
        # the relation named in another language (core/kin.py)
        ("What does my husband do for a living?", "mąż", True),
        ("What is my husband called?", "чоловік", False),
        ("What does my wife do for work?", "partner", True),  # a wife is a partner
        ("Як звати мого чоловіка?", "partner", False),
        ("¿A qué se dedica mi marido?", "mąż", True),
        ("Чим займається моя сестра?", "hermana", True),
        ("What does my sister do?", "mąż", None),
        ("What is my favourite colour?", "favourite_colour", False),
        ("Where did I buy my favourite shoes?", "favourite_colour", None),
    ],
)
def test_what_a_question_asks_of_a_key_it_names(question: str, key: str, asks: bool | None) -> None:
    assert asks_about_the_one_named(list(folded_words(question)), key) is asks


LIVES = {
    # language: (the user's city fact, the page of someone else, a question about the user
    # alone, one about the other person by name, one by relation)
    "en": (
        ("city", "Bristol"),
        ("Margaret", "Margaret lives in York and grows dahlias."),
        "Where does the user live?",
        "Where does Margaret live?",
        "Where does my mother live?",
    ),
    "pl": (
        ("miasto", "Gdańsk"),
        ("Zosia", "Zosia mieszka w Tarnowie i piecze sernik."),
        "Gdzie mieszka użytkownik?",
        "Gdzie mieszka Zosia?",
        "Gdzie mieszka moja babcia?",
    ),
    "es": (
        ("ciudad", "Sevilla"),
        ("Carmen", "Carmen vive en Cádiz y cumplió 90 años."),
        "¿Dónde vive el usuario?",
        "¿Dónde vive Carmen?",
        "¿Dónde vive mi abuela?",
    ),
    "uk": (
        ("місто", "Львів"),
        ("Ніна", "Ніна живе в Полтаві й варить варення."),
        "Де живе користувач?",
        "Де живе Ніна?",
        "Де живе моя бабуся?",
    ),
}


@pytest.mark.parametrize("lang", sorted(LIVES))
def test_a_question_about_the_user_alone_is_not_answered_by_someone_elses_page(
    backend: Backend, lang: str
) -> None:
    (key, value), (name, page), about_me, by_name, by_relation = LIVES[lang]
    memory = backend.open()
    memory.create_agent("me")
    memory.remember(key=key, value=value, agent="me", at=datetime(2026, 1, 5, tzinfo=UTC))
    text = f"# {name}\n\n- {page}\n"
    memory.memory_write("me", "bank", WriteEntityPage(f"bank/entities/{name}.md", text))
    # the page shares the question's verb, the fact shares nothing: it is no answer about
    # the user, and the page is no candidate
    hits = memory.recall(about_me, agent="me", k=5, now=NOW, record_access=False).hits
    assert all(hit.item.content != page for hit in hits)
    # asked about her, by name or as someone of the user's, the page answers
    assert _first(memory, by_name, "me") == page
    assert _first(memory, by_relation, "me") == page


@pytest.mark.parametrize(
    ("question", "names", "alone"),
    [
        ("Where do I live now?", (), True),
        ("Where did I live in June?", (), True),
        ("Where does the user live?", (), True),
        ("Gdzie mieszka użytkownik?", (), True),
        ("¿Dónde vive el usuario?", (), True),
        ("У якій компанії працює Оксана?", ("Оксана",), True),
        ("Where does David live now?", ("David", "Okafor"), True),
        ("Gdzie teraz mieszka Alice?", ("Alice",), True),
        ("What did my mother do?", (), False),
        ("When did I meet Tom?", (), False),
        ("Who do I know in York?", (), False),
        ("¿A qué se dedica la pareja del usuario?", (), False),
        ("What does the user's partner do?", (), False),
        ("Чим займається двоюрідна сестра Валерії?", ("Валерія",), False),
        ("¿Qué estudié el año pasado?", (), False),
        ("Jak się masz, i co słychać?", (), False),
    ],
)
def test_which_questions_are_about_the_user_alone(
    question: str, names: tuple[str, ...], alone: bool
) -> None:
    assert about_the_user_alone(question, names) is alone


@pytest.mark.parametrize(
    "question",
    ["Who is my boss?", "Kto jest moim szefem?", "¿Quién es mi jefa?", "Хто мій керівник?"],
)
def test_a_boss_asked_about_is_the_manager_a_fact_names(backend: Backend, question: str) -> None:
    """``manager: Sarah Chen`` asked about as "my boss", "mi jefa", "мій керівник"."""
    memory = backend.open()
    memory.remember("Daniel", key="name")
    memory.remember("Sarah Chen", key="manager")
    memory.remember("has a daughter, Mia, born 2021")
    hits = backend.open("b").recall(question, k=3, now=NOW, record_access=False).hits
    assert hits and hits[0].item.value == "Sarah Chen", [h.item.content for h in hits]
