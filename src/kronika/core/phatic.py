"""Whether a text tells anything: greetings, thanks and acknowledgements do not.

"hi", "hello, how are you?", "thanks!", "ok", "dzięki", "gracias", "дякую" keep a
conversation going and say nothing about anyone. Their embeddings are short and
generic, and come close to any short question ("where does the user live?" is as near
to "hello, how are you?" as to "I moved to Valencia last week"), so on similarity of
meaning alone they can outrank the memory that answers. A text is *informative* when
some word of it is neither a function word (:data:`kronika.core.keywords.FUNCTION_WORDS`)
nor one of the small multilingual lexicon of phatic words below (English, Polish,
Spanish, Ukrainian, and the Russian forms people mix in). Digits count as information
("ok, 3 pm"). Recall does not let an item that tells nothing answer a query that asks
something (:mod:`kronika.engine.recall`); a query that is itself phatic ("thanks")
finds such items as before.

The lexicon holds whole words only, accent-folded like every searched word: a text is
phatic only when *every* word of it is, so "thanks for the book about Rome" is
informative, and a word listed here never hides a memory that says something else.
"""

from __future__ import annotations

from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.text import folded_words

_ENGLISH = """
    hi hello hey heya hiya howdy yo greetings bye goodbye cya later
    thanks thank thx ty cheers welcome please sorry pardon
    ok okay okey k kk alright yes yeah yep yup no nope nah sure fine
    good great nice cool awesome perfect wonderful lovely amazing excellent
    wow oh ah aha hmm hm um uh lol haha hehe yay
    morning afternoon evening night goodnight day
    not really totally indeed definitely absolutely exactly right true agree
    see got going doing well sounds know care take let help
    always glad happy anytime nothing much special just checking testing
"""
_POLISH = """
    czesc hej hejka siema witaj witam dzien dobry dobranoc wieczor
    widzenia zobaczenia pa papa narazie razie
    dzieki dziekuje dziekujemy bardzo prosze przepraszam sorki wzajemnie pozdrawiam
    ok okej dobrze spoko super swietnie tak nie jasne no
    slychac porzadku milego dnia
    moge pomoc pomoge pomoglem pomoglam zawsze chetnie sluze nic specjalnego
    szczegolnego takiego niewiele normalnie tylko sprawdzam testuje
    ciesze cieszymy szczesliwy szczesliwa zadowolony zadowolona milo fajnie
"""
_SPANISH = """
    hola buenas buenos dias tardes noches adios chao luego pronto manana
    gracias muchas muchos favor nada perdon disculpa igualmente saludos encantado
    vale ok si no claro genial perfecto bien bueno vale tal mucho
    puedo ayudar ayudarte ayudarle siempre placer disposicion especial solo probando
    comprobando alegro alegra alegramos contento contenta feliz
"""
_UKRAINIAN = """
    привіт вітаю добрий доброго добрий день дня ранку вечора надобраніч бувай
    побачення дякую дуже спасибі будь ласка вибач вибачте
    гаразд добре так ні звісно ок окей чудово супер справи
    привет спасибо пока хорошо да нет ладно
    можу допомогти допоможу завжди радий рада нічого нічим особливого небагато
    нормально просто перевіряю тестую щасливий щаслива приємно
"""

PHATIC_WORDS: frozenset[str] = frozenset(
    word for block in (_ENGLISH, _POLISH, _SPANISH, _UKRAINIAN) for word in folded_words(block)
)
"""Folded, casefolded words that keep a conversation going and tell nothing."""


def informative(text: str) -> bool:
    """Whether ``text`` has a word that is neither a function word nor a phatic one.

    ``"hello, how are you?"``, ``"Thanks!"``, ``"ok"``, ``"dzięki"`` and ``"дякую"`` are
    not; ``"I moved to Valencia"`` and ``"ok, 3 pm"`` are. A text without words (an
    emoji) tells nothing either.
    """
    return any(
        word not in FUNCTION_WORDS and word not in PHATIC_WORDS for word in folded_words(text)
    )
