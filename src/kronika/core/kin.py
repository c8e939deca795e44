"""The words for the people in one's life in the four languages kronika reads: "my
husband" is ``mąż``, ``чоловік``, ``marido`` or ``esposo``. A memory keeps
``mąż: Paweł`` and is asked "What does my husband do for a living?": the question names
the key in another language (:mod:`kronika.core.key_forms`, :mod:`kronika.core.relations`).

:data:`GROUPS` lists, for each relation, its words in English, Polish, Spanish and
Ukrainian, in the nominative (their inflected forms are matched as any key's are,
:func:`kronika.core.subjects.word_matches`). They are each language's ordinary words for
these relations, drawn from no memory or benchmark. A word of two relations (Ukrainian
``чоловік`` is "husband" and "man"; ``дівчина`` "girlfriend" and "girl") is in the one
a memory's key means by it; the question's own word decides nothing more than that the
key may be meant.
"""

from __future__ import annotations

from collections.abc import Iterable

from kronika.core.text import folded_words
from kronika.core.word_groups import WordGroups

GROUPS: tuple[str, ...] = (
    "husband mąż małżonek marido esposo чоловік",
    "wife żona małżonka esposa mujer дружина жінка",
    "partner partnerka pareja партнер партнерка",
    "boyfriend chłopak novio хлопець",
    "girlfriend dziewczyna novia дівчина",
    "sister siostra hermana сестра",
    "brother brat hermano брат",
    "mother mom mum mama matka madre мама мати",
    "father dad tata ojciec padre papá тато батько",
    "son syn hijo син",
    "daughter córka hija донька дочка",
    "cousin kuzyn kuzynka primo prima кузен кузина двоюрідний двоюрідна",
    "grandmother grandma babcia abuela бабуся бабця",
    "grandfather grandpa dziadek abuelo дідусь дід",
    "aunt ciocia ciotka tía тітка",
    "uncle wujek stryj tío дядько",
    "friend przyjaciel przyjaciółka amigo amiga друг подруга",
    "boss manager supervisor szef szefowa kierownik kierowniczka przełożony przełożona"
    " jefe jefa gerente supervisora начальник начальниця керівник керівниця",
    "colleague coworker kolega koleżanka compañero compañera колега",
    "neighbour neighbor sąsiad sąsiadka vecino vecina сусід сусідка",
    "flatmate roommate współlokator współlokatorka compañera compañero сусід",
)
"""Each relation's words, space-separated: English, Polish, Spanish, Ukrainian."""


PARTNERED = ("husband", "wife", "boyfriend", "girlfriend")
"""The relations that are also one's partner: "my husband" names the key ``partner``
(or ``pareja``, ``партнер``) as well, and "Як звати мого чоловіка?" finds ``partner:
mąż Tomek``. Not the other way: a partner need not be a husband."""

_KIN = WordGroups(GROUPS)


def _words_of_groups(firsts: Iterable[str]) -> frozenset[str]:
    """The folded words of the groups whose first (English) word is one of ``firsts``."""
    wanted = set(firsts)
    return frozenset(word for g in GROUPS if g.split()[0] in wanted for word in folded_words(g))


_PARTNER = _words_of_groups(("partner",))
_PARTNERED = _words_of_groups(PARTNERED)


def kin_words(words: Iterable[str]) -> set[str]:
    """The words (folded) of the relations that ``words`` (folded words of a question)
    name, in every language, less ``words`` themselves: "husband" gives ``maz``,
    ``marido``, ``чоловік``…; "чоловіка" (a form of ``чоловік``) gives ``husband``…;
    a relation of :data:`PARTNERED` gives the words for a partner too."""
    asked = set(words)
    found = _KIN.words_of(asked)
    if (found | asked) & _PARTNERED:
        found |= _PARTNER - asked
    return found


__all__ = ["GROUPS", "PARTNERED", "kin_words"]
