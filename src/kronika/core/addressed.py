"""The name the assistant greets the user by: "Hello Alice!", "Привіт, Юрію!".

Many an agent knows its user's name without keeping it as a fact: the chat platform
gives it, and the assistant greets the user by it. A memory without a profile fact
keyed as a name (:func:`kronika.core.owner.is_name_key`) still holds those greetings,
and recall reads them to know that "Where does Yurii work?" asks about the user
(:mod:`kronika.core.owner`).

A greeting is an assistant's turn that starts with a word of greeting in English,
Polish, Spanish or Ukrainian (:data:`GREETINGS`: "hi", "hello", "good morning",
"cześć", "dzień dobry", "hola", "buenos días", "привіт", "добрий день"…) followed,
after a comma or a space, by one word written with a capital letter and then by a
mark that ends the address (``! , . ? :`` or the end of the turn): "Hey David!",
"¡Hola Lucía! ¿En qué te ayudo?", "Cześć Kasiu, jak minął dzień?". "Hi! What can I do
for you?" names no one, nor does "Hi there".

The assistant says the name in the vocative where the language has one ("Юрію",
"Zosiu", "Оксано"). The other forms of that given name (:func:`name_forms_addressed`:
"Zosiu" is Zofia, Zosia and Zośka) are added when exactly one group of
:mod:`kronika.core.given_names` holds a form of it; the vocative itself matches the
name's other cases as any name does (:func:`kronika.core.owner.is_the_users_name`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from kronika.core.given_names import GROUPS, name_forms
from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.owner import is_the_users_name
from kronika.core.text import fold

GREETINGS: tuple[str, ...] = (
    # English
    "hi",
    "hello",
    "hey",
    "hiya",
    "dear",
    "welcome",
    "welcome back",
    "good morning",
    "good afternoon",
    "good evening",
    "morning",
    # Polish
    "cześć",
    "hej",
    "witaj",
    "witam",
    "siema",
    "dzień dobry",
    "dobry wieczór",
    # Spanish
    "hola",
    "buenas",
    "buenos días",
    "buenas tardes",
    "buenas noches",
    "bienvenido",
    "bienvenida",
    "querido",
    "querida",
    # Ukrainian
    "привіт",
    "вітаю",
    "добрий день",
    "добрий ранок",
    "добрий вечір",
    "доброго ранку",
    "доброго дня",
    "доброго вечора",
    "здрастуйте",
)
"""Words of greeting that come before a name, in English, Polish, Spanish and Ukrainian
(as written: compared folded and casefolded)."""

_OPENING = "¡¿\"'«„“ \t"
_ADDRESS = re.compile(r"[,\s]+(?P<name>\w+)\s*(?:[!,.?:;—–]|$)")
"""After the greeting: a comma or spaces, one word, and a mark ending the address."""


@cache
def _greetings() -> tuple[str, ...]:
    """:data:`GREETINGS` folded and casefolded, the longest first ("welcome back" before
    "welcome")."""
    return tuple(sorted({fold(g).casefold() for g in GREETINGS}, key=len, reverse=True))


def greeted_name(text: str) -> str | None:
    """The name an assistant's turn ``text`` greets its reader by, as written ("Юрію"
    for "Привіт, Юрію!"), or ``None`` when it greets no one by name."""
    start = text.lstrip(_OPENING)
    folded = fold(start).casefold()
    for greeting in _greetings():
        if not folded.startswith(greeting):
            continue
        rest = start[len(greeting) :]
        if rest[:1].isalnum():  # "Hiking" is no "hi"
            continue
        found = _ADDRESS.match(rest)
        if found is None:
            return None
        name = found.group("name")
        lower = fold(name).casefold()
        if not name[:1].isupper() or lower in FUNCTION_WORDS or lower in _greetings():
            return None
        return name
    return None


def name_forms_addressed(name: str) -> tuple[str, ...]:
    """``name`` as greeted (``Zosiu``) and, when exactly one group of given names holds a
    form of it (:func:`~kronika.core.owner.is_the_users_name`), that name's forms
    (``Zofia``, ``Zosia``, ``Zośka``); else ``name`` alone."""
    return _forms_addressed(fold(name).casefold())


@cache
def _forms_addressed(name: str) -> tuple[str, ...]:
    groups = [g for g in GROUPS if any(is_the_users_name(form, (name,)) for form in g)]
    if len(groups) != 1:
        return (name,)
    forms = (fold(f).casefold() for f in name_forms(groups[0][0]))
    return tuple(dict.fromkeys((name, *forms)))


def greeted_names(texts: Iterable[str]) -> tuple[str, ...]:
    """The names (folded, casefolded) the assistant's turns ``texts`` greet their reader by,
    each with the other forms of its given name (:func:`name_forms_addressed`), each
    once, in the order first greeted."""
    names: list[str] = []
    for text in texts:
        name = greeted_name(text)
        if name is not None:
            names.extend(name_forms_addressed(name))
    return tuple(dict.fromkeys(names))


__all__ = ["GREETINGS", "greeted_name", "greeted_names", "name_forms_addressed"]
