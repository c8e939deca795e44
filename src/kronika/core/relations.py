"""A question about someone the user names by a relation: "What does my partner do?".

A keyed fact can name a person: ``partner: Tom``, ``mąż: Paweł``, ``чоловік: Андрій``.
What the agent knows of that person is on their entity page (``bank/entities/Tom.md``:
"Tom is a paramedic…"), which shares no word with the question. The fact is the link:
the question names its key, and its value names the page.

:func:`asks_about_the_one_named` reads which of the two the question wants:

* the value itself, when nothing is left of the question but the key, the words that
  ask for a name ("name", "imię", "звати", "se llama"), the user ("the user",
  "użytkownika"), "now" and function words: "Jak ma na imię mąż użytkownika?", "Who
  is my partner now?";
* something of the person named, when a word is left: "What does my partner do for
  **work**?", "Czym **zajmuje** się **zawodowo** mój mąż?".

The question may name the person by the value instead of the key ("What **job** does
Javier have?" over ``pareja: Javier``), read the same way ("Who is Javier?" asks
nothing more than the fact says).

Key words are matched in their inflected forms (``чоловіка`` is a form of ``чоловік``,
:func:`kronika.core.subjects.word_matches`) and, for a relation, in the other languages'
words for it ("husband" names ``mąż``, :mod:`kronika.core.kin`); every word of the key
must be in the question (:func:`kronika.core.subjects.names_every`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.kin import kin_words
from kronika.core.owner import USER_FORMS
from kronika.core.subjects import forms_among, names_every
from kronika.core.text import folded_words, key_words

NAMING = frozenset(
    folded_words(
        "name names named called nickname surname "
        "imię imienia imieniem nazywa nazywają nazwisko nazwiska przezwisko ma mają "
        "nombre nombres llama llaman apodo apellido "
        "ім'я імені звати звуть прізвище прізвисько"
    )
)
"""Words that ask for a name, in English, Polish, Spanish and Ukrainian ("ma" and "mają"
of the Polish "jak ma na imię", "what is … called")."""
NOW = frozenset(
    folded_words(
        "now currently today these days "
        "teraz obecnie aktualnie dziś dzisiaj "
        "ahora actualmente hoy "
        "зараз тепер нині сьогодні"
    )
)
"""Words that ask for the value true now, which the fact holds."""
_ASKING_THE_VALUE = NAMING | NOW | USER_FORMS | FUNCTION_WORDS


def asks_about_the_one_named(question: Sequence[str], key: str, value: str = "") -> bool | None:
    """``None`` when the ``question`` (its folded words, :func:`folded_words`) names
    neither every word of ``key`` nor every word of ``value`` (the person, by name:
    "What job does Javier have?" over ``pareja: Javier``); else whether it asks
    something of the one the value names (``True``) rather than the fact itself
    (``False``: "Who is Javier?", "Jak ma na imię mój mąż?")."""
    named: list[str] = []
    kin = kin_words(question)  # "husband" names ``mąż`` (core/kin.py)
    for said in (key_words(key), value):
        wanted = list(folded_words(said))
        found = forms_among([*question, *kin], wanted)
        if names_every(found, wanted):
            named += found
    if not named:
        return None
    keyed = set(named)  # the words found: the key's own, or its relation's in a language
    return any(
        w not in _ASKING_THE_VALUE and w not in keyed and not kin_words([w]) & keyed
        for w in question
    )


__all__ = ["NAMING", "NOW", "asks_about_the_one_named"]
