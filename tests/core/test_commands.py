import pytest
from hypothesis import given
from hypothesis import strategies as st

from kronika.core.commands import CommandKind, detect_command, match_form

REMEMBER = CommandKind.REMEMBER
FORGET = CommandKind.FORGET
DONT = CommandKind.DONT_REMEMBER
KNOW = CommandKind.WHAT_DO_YOU_KNOW
SHOW = CommandKind.SHOW_MEMORY
CLEAR = CommandKind.CLEAR_TOPIC
NEW = CommandKind.NEW_CONVERSATION

ENGLISH = [
    ("remember that I'm vegan", REMEMBER, "I'm vegan"),
    ("Remember: my sister is Ola.", REMEMBER, "my sister is Ola"),
    ("Remember, I'm allergic to cats!", REMEMBER, "I'm allergic to cats"),
    ("please remember my birthday is May 5", REMEMBER, "my birthday is May 5"),
    ("don't forget that I'm vegan", REMEMBER, "I'm vegan"),
    ("Hey Jaskier, remember that I like tea.", REMEMBER, "I like tea"),
    ('remember "I prefer tabs".', REMEMBER, "I prefer tabs"),
    ("keep in mind that I use vim", REMEMBER, "I use vim"),
    ("Can you remember that I'm vegan?", REMEMBER, "I'm vegan"),
    ("I want you to remember that my son is Leo", REMEMBER, "my son is Leo"),
    ("forget it", FORGET, None),
    ("OK, forget that.", FORGET, None),
    ("forget it, please", FORGET, None),
    ("never mind, forget it 🙏", FORGET, None),
    ("Forget about my job.", FORGET, "job"),
    ("forget what I said about Paris", FORGET, "Paris"),
    ("forget what I just told you", FORGET, None),
    ("can you forget my address?", FORGET, "address"),
    ("don't remember this", DONT, None),
    ("Don't remember this: I was sick", DONT, "I was sick"),
    ("don't remember that I was sick", DONT, "I was sick"),
    ("this is not important, don't remember it", DONT, None),
    ("don't save this to memory", DONT, None),
    ("What do you know about me?", KNOW, None),
    ("what do you remember about me", KNOW, None),
    ("tell me what you know about me", KNOW, None),
    ("show me your memory", SHOW, None),
    ("Show me what you remember.", SHOW, None),
    ("could you please show me your memory?", SHOW, None),
    ("What's in your memory?", SHOW, None),
    ("clear your memory about my work", CLEAR, "work"),
    ("forget everything about my job", CLEAR, "job"),
    ("delete everything you know about Anna", CLEAR, "Anna"),
    ("remove my old address from your memory", CLEAR, "old address"),
    ("new conversation", NEW, None),
    ("Let's start a new conversation!", NEW, None),
    ("Please, new chat.", NEW, None),
]

POLISH = [
    ("Jaskier, zapamiętaj że lubię jazz", REMEMBER, "lubię jazz"),
    ("zapamietaj ze mieszkam w Krakowie", REMEMBER, "mieszkam w Krakowie"),
    ("Zapamiętaj: mam psa.", REMEMBER, "mam psa"),
    ("pamiętaj, że jestem weganką", REMEMBER, "jestem weganką"),
    ("nie zapomnij, że jestem weganką", REMEMBER, "jestem weganką"),
    ("Proszę zapamiętać, że mam kota", REMEMBER, "mam kota"),
    ("czy możesz zapamiętać, że mam kota?", REMEMBER, "mam kota"),
    ("zapisz sobie, że pracuję zdalnie", REMEMBER, "pracuję zdalnie"),
    ("zapomnij o tym", FORGET, None),
    ("Ok Jaskier, zapomnij o tym.", FORGET, None),
    ("zapomnij", FORGET, None),
    ("zapomnij o mojej pracy", FORGET, "pracy"),
    ("zapomnij, co ci powiedziałem o Kasi", FORGET, "Kasi"),
    ("możesz zapomnieć o moim adresie?", FORGET, "adresie"),
    ("nie zapamiętuj tego", DONT, None),
    ("to nieważne, nie zapamiętuj", DONT, None),
    ("nie zapamiętuj tego: byłem chory", DONT, "byłem chory"),
    ("nie zapamiętuj tego, że byłem chory", DONT, "byłem chory"),
    ("tego nie zapamiętuj", DONT, None),
    ("co o mnie wiesz?", KNOW, None),
    ("co o mnie pamiętasz", KNOW, None),
    ("Co wiesz o mnie?", KNOW, None),
    ("pokaż swoją pamięć", SHOW, None),
    ("pokaz mi swoja pamiec", SHOW, None),
    ("pokaż mi, co pamiętasz", SHOW, None),
    ("wyczyść pamięć o pracy", CLEAR, "pracy"),
    ("zapomnij wszystko o mojej pracy", CLEAR, "pracy"),
    ("usuń wszystko o Kasi", CLEAR, "Kasi"),
    ("nowa rozmowa", NEW, None),
    ("Zacznijmy nową rozmowę.", NEW, None),
]

SPANISH = [
    ("recordá que soy vegana", REMEMBER, "soy vegana"),
    ("Recuerda que soy vegana.", REMEMBER, "soy vegana"),
    ("por favor, recuerda: mi hija se llama Sol", REMEMBER, "mi hija se llama Sol"),
    ("no te olvides que soy celíaca", REMEMBER, "soy celíaca"),
    ("acordate que trabajo de noche", REMEMBER, "trabajo de noche"),
    ("ten en cuenta que vivo en Lima", REMEMBER, "vivo en Lima"),
    ("olvidate de mi perro", FORGET, "perro"),
    ("olvídate de eso", FORGET, None),
    ("olvídalo", FORGET, None),
    ("olvida eso, porfa", FORGET, None),
    ("olvida lo que te dije sobre Madrid", FORGET, "Madrid"),
    ("¿Podés olvidar mi dirección?", FORGET, "dirección"),
    ("no recuerdes esto", DONT, None),
    ("no te acuerdes de esto", DONT, None),
    ("no recuerdes esto: estuve enfermo", DONT, "estuve enfermo"),
    ("no es importante, no lo recuerdes", DONT, None),
    ("¿qué sabés de mí?", KNOW, None),
    ("¿qué sabes sobre mí?", KNOW, None),
    ("decime qué recordás de mí", KNOW, None),
    ("mostrame tu memoria", SHOW, None),
    ("muéstrame tu memoria", SHOW, None),
    ("mostrame lo que recordás", SHOW, None),
    ("olvidá todo sobre mi trabajo", CLEAR, "trabajo"),
    ("borrá tu memoria sobre mi trabajo", CLEAR, "trabajo"),
    ("borra tu memoria sobre mi trabajo", CLEAR, "trabajo"),
    ("nueva conversación", NEW, None),
    ("nueva conversacion", NEW, None),
    ("Empecemos una nueva conversación", NEW, None),
]

UKRAINIAN = [
    ("запам'ятай, що я веганка", REMEMBER, "я веганка"),
    ("запамʼятай що я веганка", REMEMBER, "я веганка"),
    ("Запам’ятай: я живу в Києві.", REMEMBER, "я живу в Києві"),
    ("будь ласка, запам'ятай, що я люблю каву", REMEMBER, "я люблю каву"),
    ("не забудь, що я веганка", REMEMBER, "я веганка"),
    ("пам'ятай, що я не їм м'яса", REMEMBER, "я не їм м'яса"),
    ("забудь", FORGET, None),
    ("забудь це", FORGET, None),
    ("забудь про це", FORGET, None),
    ("забудь про мою роботу", FORGET, "роботу"),
    ("забудь, що я сказав", FORGET, None),
    ("чи можеш забути мою адресу?", FORGET, "адресу"),
    ("не запам'ятовуй це", DONT, None),
    ("не треба це запам'ятовувати", DONT, None),
    ("це неважливо, не запам'ятовуй", DONT, None),
    ("не запам'ятовуй це: я хворів", DONT, "я хворів"),
    ("що ти знаєш про мене?", KNOW, None),
    ("що ти про мене знаєш", KNOW, None),
    ("що ти пам'ятаєш про мене", KNOW, None),
    ("покажи свою пам'ять", SHOW, None),
    ("покажи мені, що ти пам'ятаєш", SHOW, None),
    ("очисти пам'ять про роботу", CLEAR, "роботу"),
    ("видали пам'ять про Олену", CLEAR, "Олену"),
    ("забудь все про мою роботу", CLEAR, "роботу"),
    ("нова розмова", NEW, None),
    ("Почнімо нову розмову!", NEW, None),
]

POSITIVE = [
    pytest.param(text, kind, language, argument, id=f"{language}:{text}")
    for language, table in (("en", ENGLISH), ("pl", POLISH), ("es", SPANISH), ("uk", UKRAINIAN))
    for text, kind, argument in table
]


@pytest.mark.parametrize(("text", "kind", "language", "argument"), POSITIVE)
def test_detects_command(text, kind, language, argument):
    command = detect_command(text)
    assert command is not None
    assert (command.kind, command.language, command.argument) == (kind, language, argument)
    assert command.text == text


NEGATIVE = {
    "en": [
        "I forgot my keys",
        "do you remember when we met?",
        "remember when we went to Paris?",
        "I remember that day well",
        "don't forget to buy milk",
        "remember to call mom",
        "What do you know about Python?",
        "show me your code",
        "let's clear the table",
        "My name is Ana",
        "Forget Python, I want to learn Rust",
        "forget my address?",
        "forget everything",
        "remember this",
        "Don't remember.",
        "don't save this",
        "new conversation about cooking",
        "I think you should remember that I'm vegan",
    ],
    "pl": [
        "pamiętasz, jak byliśmy w Krakowie?",
        "zapomniałem parasola",
        "Zapomniałam, jak się nazywa",
        "pamiętam ten dzień",
        "co wiesz o Pythonie?",
        "pokaż mi kod",
        "Mam na imię Ania",
        "zapisz to",
        "nie zapomnij kupić mleka",
        "nowa rozmowa o pracy jest jutro",
    ],
    "es": [
        "¿te acordás de mi perro?",
        "me olvidé las llaves",
        "Olvidé mi contraseña",
        "por favor, recuerda comprar leche",
        "recuerdo ese día",
        "¿qué sabés de Python?",
        "mostrame el código",
        "Me llamo Ana",
        "no recuerdo su nombre",
        "olvida todo",
    ],
    "uk": [
        "я забув ключі",
        "ти пам'ятаєш нашу розмову?",
        "Я пам'ятаю той день",
        "не забудь купити молоко",
        "запам'ятай купити молоко",
        "що ти знаєш про Python?",
        "покажи мені код",
        "Мене звати Олена",
        "забудь все",
        "нова розмова була цікавою",
    ],
}


@pytest.mark.parametrize(
    "text", [pytest.param(t, id=f"{lang}:{t}") for lang, ts in NEGATIVE.items() for t in ts]
)
def test_ordinary_message_is_not_a_command(text):
    assert detect_command(text) is None


@pytest.mark.parametrize("text", ["", "   ", "?", "please", "Jaskier,", "🙂"])
def test_empty_or_politeness_only(text):
    assert detect_command(text) is None


def test_argument_keeps_the_original_spelling():
    command = detect_command("ZAPAMIĘTAJ, że mieszkam w Łodzi")
    assert command is not None
    assert command.argument == "mieszkam w Łodzi"


def test_multi_line_remember_keeps_every_line():
    command = detect_command("remember:\nI'm vegan\nI live in Berlin")
    assert command is not None
    assert command.kind is REMEMBER
    assert command.argument == "I'm vegan\nI live in Berlin"


@given(st.text())
def test_match_form_keeps_length(text):
    assert len(match_form(text)) == len(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Zapamiętaj", "zapamietaj"),
        ("Olvídate", "olvidate"),
        ("запам’ятай", "запам'ятай"),
        ("запамʼятай", "запам'ятай"),
        ("Їжа й ґанок", "їжа й ґанок"),
    ],
)
def test_match_form_folds_accents_and_apostrophes_only(text, expected):
    assert match_form(text) == expected
