import pytest

from kronika.core.phatic import informative


@pytest.mark.parametrize(
    "text",
    [
        "hi",
        "hello, how are you?",
        "Thanks!",
        "ok",
        "OK, thank you so much!",
        "dzięki",
        "Cześć, co słychać?",
        "gracias",
        "¡Hola! ¿Qué tal?",
        "дякую",
        "Привіт!",
        "Good morning :)",
        # an offer of help, and "nothing, just checking", in each language alike
        "How can I help?",
        "Always glad to help!",
        "nothing special, just testing",
        "W czym mogę pomóc?",
        "Zawsze chętnie pomogę!",
        "nic specjalnego, tylko sprawdzam",
        "¿En qué puedo ayudarte?",
        "Siempre a tu disposición",
        "nada especial, solo probando",
        "Чим можу допомогти?",
        "Завжди радий допомогти!",
        "нічого особливого, просто перевіряю",
        # "not much", "fine" as an answer to "how are you?", in each language alike
        "not much, ok",
        "niewiele, nic takiego",
        "no mucho, ok",
        "небагато",
        "fine",
        "normalnie",
        "bien",
        "нормально",
        # "glad", "happy" and "nice" as a reply, in each language alike
        "I am glad, nice!",
        "Cieszę się, miło!",
        "Me alegro, ¡qué bien!",
        "Радий, приємно!",
        "so happy",
        "jestem szczęśliwa",
        "estoy muy contenta",
        "я щаслива",
        "🙂",
        "",
    ],
)
def test_small_talk_tells_nothing(text: str) -> None:
    assert not informative(text)


@pytest.mark.parametrize(
    "text",
    [
        "I moved to Valencia last week",
        "thanks for the book about Rome",
        "ok, 3 pm",
        "dzięki za przepis na pierogi",
        "gracias por la paella",
        "дякую за квіти",
        "where does the user live?",
        "nothing happened at the vet",
        "just moved to Lisbon",
        "tylko sprawdzam pocztę",
        "solo probando la paella",
        "просто перевіряю пошту",
        "me gusta mucho el café",
        "niewiele brakowało do finału",
        "нормально спав після ліків",
        "cieszę się na wyjazd do Gdańska",
        "me alegro de la boda de Fernanda",
        "щаслива, що переїхала до Львова",
    ],
)
def test_a_text_with_one_word_of_content_is_informative(text: str) -> None:
    assert informative(text)
