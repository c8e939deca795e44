import pytest

from kronika.core.model import BrainSection
from kronika.core.rules import RuleFact, extract_statements, fact_from_remember

ENGLISH = [
    ("My name is Ana", [("name", "Ana")]),
    ("Call me Ana, please.", [("name", "Ana")]),
    ("Hi, I'm Ana!", [("name", "Ana")]),
    ("I live in Berlin", [("location", "Berlin")]),
    ("I moved to Valencia last week.", [("location", "Valencia")]),
    ("I live in the Netherlands", [("location", "the Netherlands")]),
    ("I'm from Spain", [("origin", "Spain")]),
    ("I work as a nurse", [("job", "nurse")]),
    ("I work at Acme", [("employer", "Acme")]),
    ("I prefer tea", [("preference", "tea")]),
    ("I like jazz", [("preference", "jazz")]),
    ("I like jazz, rock and blues.", [("preference", "jazz, rock and blues")]),
    ("I like jazz because it relaxes me.", [("preference", "jazz")]),
    ("I really like jazz too", [("preference", "jazz")]),
    ("I don't like coffee", [("dislike", "coffee")]),
    ("I hate Java!", [("dislike", "Java")]),
    ("I'm allergic to peanuts", [("allergy", "peanuts")]),
    ("I'm vegan", [("diet", "vegan")]),
    ("My favourite colour is blue.", [("favourite_color", "blue")]),
    ("My favorite programming language is Python", [("favourite_programming_language", "Python")]),
    ("My favourite wine is Rioja", [("favourite_wine", "Rioja")]),
    ("I speak Polish and English.", [("language", "Polish"), ("language", "English")]),
    ("My birthday is May 5th.", [("birthday", "May 5th")]),
    ("I have a dog named Rex.", [("pet", "dog named Rex")]),
    ("I have a cat.", [("pet", "cat")]),
    ("My wife's name is Ola", [("partner", "Ola")]),
    ("I always want answers in Polish.", [("rule", "I always want answers in Polish")]),
    ("I never want emojis, they are annoying.", [("rule", "I never want emojis")]),
    ("I'm working on a compiler in Rust.", [("project", "compiler in Rust")]),
    ("My project is Kronika.", [("project", "Kronika")]),
    (
        "My name is Ana and I live in Berlin.",
        [("name", "Ana"), ("location", "Berlin")],
    ),
    (
        "I live in Kraków, Poland, but I was born in Gdańsk.",
        [("location", "Kraków")],
    ),
    (
        "I love Python. I hate Java! Do you like Go?",
        [("preference", "Python"), ("dislike", "Java")],
    ),
    ("Honestly, I prefer short answers", [("preference", "short answers")]),
    ("I like to cook", [("preference", "to cook")]),
    ('I like "Dune"', [("preference", "Dune")]),
    ("I have a dog and two cats", [("pet", "dog")]),
]

POLISH = [
    ("Mam na imię Ania", [("name", "Ania")]),
    ("Nazywam się Jan Kowalski", [("name", "Jan Kowalski")]),
    ("Cześć, jestem Ania", [("name", "Ania")]),
    ("Mieszkam w Krakowie", [("location", "Krakowie")]),
    ("mieszkam we Wrocławiu od roku", [("location", "Wrocławiu")]),
    ("Przeprowadziłam się do Warszawy", [("location", "Warszawy")]),
    ("Jestem z Polski", [("origin", "Polski")]),
    ("Pracuję jako programistka", [("job", "programistka")]),
    ("Pracuję dla Google", [("employer", "Google")]),
    ("Wolę TypeScript", [("preference", "TypeScript")]),
    ("Lubię jazz", [("preference", "jazz")]),
    ("Nie lubię kawy", [("dislike", "kawy")]),
    ("Jestem uczulona na orzechy", [("allergy", "orzechy")]),
    ("Jestem weganką", [("diet", "weganką")]),
    ("Mój ulubiony kolor to niebieski.", [("favourite_color", "niebieski")]),
    ("Moja ulubiona pora roku to jesień", [("favourite_season", "jesień")]),
    ("Mówię po polsku i po angielsku.", [("language", "po polsku"), ("language", "po angielsku")]),
    ("Urodziłam się 5 maja 1990 w Krakowie.", [("birthday", "5 maja 1990")]),
    ("Mam psa o imieniu Burek.", [("pet", "psa o imieniu Burek")]),
    ("Moja żona ma na imię Ola", [("partner", "Ola")]),
    ("Zawsze chcę odpowiedzi po polsku.", [("rule", "Zawsze chcę odpowiedzi po polsku")]),
    ("Pracuję nad aplikacją do notatek.", [("project", "aplikacją do notatek")]),
    (
        "Mam na imię Ania i mieszkam w Krakowie.",
        [("name", "Ania"), ("location", "Krakowie")],
    ),
    ("Brat mieszka w Rzymie, a ja mieszkam w Gdańsku.", [("location", "Gdańsku")]),
    ("mam na imie Ania i lubie jazz", [("name", "Ania"), ("preference", "jazz")]),
]

SPANISH = [
    ("Me llamo Ana", [("name", "Ana")]),
    ("Hola, soy Ana", [("name", "Ana")]),
    ("Vivo en Buenos Aires", [("location", "Buenos Aires")]),
    ("Me mudé a Madrid el año pasado.", [("location", "Madrid")]),
    ("Soy de Argentina", [("origin", "Argentina")]),
    ("Trabajo como diseñadora", [("job", "diseñadora")]),
    ("Trabajo para Mercado Libre", [("employer", "Mercado Libre")]),
    ("Prefiero TypeScript", [("preference", "TypeScript")]),
    ("Me gusta el jazz", [("preference", "jazz")]),
    ("Me gustan mucho los gatos.", [("preference", "gatos")]),
    ("No me gusta el café", [("dislike", "café")]),
    ("Soy alérgica a las nueces", [("allergy", "nueces")]),
    ("Soy vegana", [("diet", "vegana")]),
    ("Mi color favorito es el azul.", [("favourite_color", "azul")]),
    ("Hablo español e inglés.", [("language", "español"), ("language", "inglés")]),
    ("Mi cumpleaños es el 5 de mayo.", [("birthday", "5 de mayo")]),
    ("Tengo un perro que se llama Toby.", [("pet", "perro que se llama Toby")]),
    ("Mi esposa se llama Lucía", [("partner", "Lucía")]),
    ("Nunca quiero respuestas largas.", [("rule", "Nunca quiero respuestas largas")]),
    ("Estoy trabajando en una app de recetas.", [("project", "app de recetas")]),
    ("Me llamo Ana y vivo en Lima.", [("name", "Ana"), ("location", "Lima")]),
    ("me mude a Cordoba", [("location", "Cordoba")]),
    ("soy alergica al mani", [("allergy", "mani")]),
]

UKRAINIAN = [
    ("Мене звати Олена", [("name", "Олена")]),
    ("Моє ім’я Тарас", [("name", "Тарас")]),
    ("Я живу в Києві", [("location", "Києві")]),
    ("Я з Львова", [("origin", "Львова")]),
    ("Я працюю програмістом", [("job", "програмістом")]),
    ("Я працюю як дизайнер", [("job", "дизайнер")]),
    ("Я віддаю перевагу TypeScript", [("preference", "TypeScript")]),
    ("Мені подобається джаз", [("preference", "джаз")]),
    ("Мені не подобається кава", [("dislike", "кава")]),
    ("У мене алергія на горіхи", [("allergy", "горіхи")]),
    ("Я веганка", [("diet", "веганка")]),
    ("Мій улюблений колір — синій.", [("favourite_color", "синій")]),
    (
        "Я розмовляю українською та англійською.",
        [("language", "українською"), ("language", "англійською")],
    ),
    ("Мій день народження 5 травня.", [("birthday", "5 травня")]),
    ("У мене є кіт на ім'я Барсик.", [("pet", "кіт на ім'я Барсик")]),
    ("Мою дружину звати Ірина", [("partner", "Ірина")]),
    ("Я ніколи не хочу довгих відповідей.", [("rule", "Я ніколи не хочу довгих відповідей")]),
    ("Я працюю над мобільним застосунком.", [("project", "мобільним застосунком")]),
    (
        "Мене звати Олена і я живу у Львові.",
        [("name", "Олена"), ("location", "Львові")],
    ),
]

POSITIVE = [
    pytest.param(text, expected, id=f"{language}:{text}")
    for language, table in (("en", ENGLISH), ("pl", POLISH), ("es", SPANISH), ("uk", UKRAINIAN))
    for text, expected in table
]


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_extracts_statement(text, expected):
    assert [(f.key, f.value) for f in extract_statements(text)] == expected


NEGATIVE = {
    "en": [
        "Do you like jazz?",
        "My friend lives in Rome",
        "If I lived in Rome, I'd be happy.",
        "If I live in Rome, I'll learn Italian.",
        "My wife and I live in Rome.",
        "I don't live in Berlin anymore",
        "I love you",
        "I like it when you answer briefly",
        "Call me later",
        "My name is not important",
        "I live in a small town",
        "I'm working on it",
        "My project is late.",
        "I speak a little Spanish",
        "I have a cat allergy.",
        "My birthday is tomorrow",
        "I'd like a coffee",
        '"I live in Rome," she said.',
        "What's the weather like today?",
        "I like your idea",
        "I prefer not to say",
        "I work at night",
        "My favourite coffee is from Ethiopia",
    ],
    "pl": [
        "Czy lubisz jazz?",
        "Mój brat mieszka w Rzymie.",
        "Gdybym mieszkała w Rzymie, byłabym szczęśliwa.",
        "Lubię cię",
        "Lubię, kiedy mówisz krótko",
        "Mieszkam w centrum",
        "Jestem z tobą",
        "Ona nie lubi kawy",
        "Mam na imię ania",
        "Lubię to",
        "Lubię to, co robisz",
    ],
    "es": [
        "¿Te gusta el jazz?",
        "Mi amigo vive en Roma.",
        "Si viviera en Roma, sería feliz.",
        "Me gusta eso",
        "Vivo en la ciudad",
        "A mi hermano le gusta el fútbol",
        "Olvidé mi contraseña",
        "Estoy trabajando en casa",
    ],
    "uk": [
        "Ти любиш джаз?",
        "Мій друг живе в Римі.",
        "Якби я жив у Римі, я був би щасливий.",
        "Я люблю тебе",
        "Я працюю разом з командою",
        "Йому подобається кава",
        "Я з тобою згоден",
        "Мені подобається це",
        "З Новим роком!",
    ],
}


@pytest.mark.parametrize(
    "text", [pytest.param(t, id=f"{lang}:{t}") for lang, ts in NEGATIVE.items() for t in ts]
)
def test_no_statement(text):
    assert extract_statements(text) == []


@pytest.mark.parametrize(
    ("text", "section", "multi"),
    [
        ("My name is Ana", BrainSection.USER, False),
        ("I live in Berlin", BrainSection.USER, False),
        ("I'm allergic to peanuts", BrainSection.USER, True),
        ("I speak Polish", BrainSection.USER, True),
        ("I have a cat", BrainSection.USER, True),
        ("I like jazz", BrainSection.PREFERENCES, True),
        ("I hate Java", BrainSection.PREFERENCES, True),
        ("My favourite colour is blue", BrainSection.PREFERENCES, False),
        ("I'm vegan", BrainSection.PREFERENCES, False),
        ("I never want emojis", BrainSection.DECISIONS, True),
        ("I'm working on a compiler", BrainSection.CURRENT, False),
    ],
)
def test_section_and_multi(text, section, multi):
    (fact,) = extract_statements(text)
    assert (fact.section, fact.multi) == (section.value, multi)


def test_evidence_is_the_sentence():
    facts = extract_statements("Hello there. I live in Berlin, Germany!\nAnd you?")
    assert facts == [
        RuleFact("location", "Berlin", "User", False, "I live in Berlin, Germany!"),
    ]


def test_repeated_statement_is_kept_once():
    facts = extract_statements("I like jazz. Really, I like jazz!")
    assert [(f.key, f.value) for f in facts] == [("preference", "jazz")]


@pytest.mark.parametrize(
    ("content", "key", "value"),
    [
        ("I'm vegan", "diet", "vegan"),
        ("my name is Ana", "name", "Ana"),
        ("jestem weganką", "diet", "weganką"),
        ("mam na imię Ania", "name", "Ania"),
        ("soy vegana", "diet", "vegana"),
        ("я живу в Києві", "location", "Києві"),
        ("I like jazz, rock and blues.", "preference", "jazz, rock and blues"),
        ("I like jazz too", "preference", "jazz"),
    ],
)
def test_remember_a_single_statement(content, key, value):
    fact = fact_from_remember(content)
    assert (fact.key, fact.value) == (key, value)


@pytest.mark.parametrize(
    ("content", "section"),
    [
        # part of the sentence would be lost
        ("I live in Berlin with my wife", BrainSection.USER),
        # two facts
        ("I speak Polish and English", BrainSection.USER),
        ("I'm vegan. I live in Berlin.", BrainSection.USER),
        # no statement at all
        ("the wifi password is hunter2", BrainSection.USER),
        ("my deadline is Friday", BrainSection.CURRENT),
        ("always answer in Polish", BrainSection.DECISIONS),
        ("moja ulubiona kawa jest z Etiopii", BrainSection.PREFERENCES),
    ],
)
def test_remember_anything_else_is_a_note(content, section):
    fact = fact_from_remember(f"  {content} ")
    assert fact == RuleFact("note", content, section.value, True, content)


def test_a_question_before_a_statement_does_not_hide_it() -> None:
    found = extract_statements("Is it raining? I live in Kraków.")
    assert [(f.key, f.value) for f in found] == [("location", "Kraków")]
