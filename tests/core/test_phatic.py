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
    ],
)
def test_a_text_with_one_word_of_content_is_informative(text: str) -> None:
    assert informative(text)
