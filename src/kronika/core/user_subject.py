"""A question about the user alone: "Where do I live now?", "Gdzie mieszka użytkownik?".

An entity page tells of its entity: "Margaret lives in York. She taught chemistry…".
Asked "Where do I live now?", keyword search finds "lives" there and nowhere in
``city: Bristol``, and the page of the user's mother comes first. A question whose
subject is the user, naming no one else, is not answered by a page about someone else
(:func:`kronika.engine.owner.others_pages`).

:func:`about_the_user_alone` reads such a question by its words, in English, Polish,
Spanish and Ukrainian:

* **the user is its subject**: "I" (a capital I), "ja", "yo", "я"; "the user" in the
  nominative (``user``, ``użytkownik``, ``usuario`` not after "de", ``користувач``);
  or one of the user's names as it is written in their profile (the nominative:
  ``Оксана``, not ``Оксани``), with no possessive after it and no "of" / "de" before;
* **and it names no one else**: no possessive ("my mother", "mój mąż", "mi abuela",
  "мій чоловік", "David's wife", "the user's partner": the question is about them), no
  word asking who ("who", "kto", "quién", "хто": a person is the answer), and no name
  other than the user's (:func:`kronika.core.entities.extract_entities`, which knows
  months and weekdays are no names).

A question that says "I" only through its verb ("¿Qué estudié?", "Gdzie mieszkam?")
is not read so: its pages stay candidates.
"""

from __future__ import annotations

from collections.abc import Sequence

from kronika.core.entities import extract_entities
from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.owner import TOKEN, sound
from kronika.core.possession import OF
from kronika.core.subjects import word_matches
from kronika.core.text import fold, folded_words

_PRONOUNS = frozenset(folded_words("ja yo я"))
"""The user as the subject pronoun (the English "I" is read by its capital)."""
_THE_USER = frozenset(
    folded_words("user użytkownik użytkowniczka usuario usuaria користувач користувачка")
)
""""The user" in the nominative."""
_SOMEONE_ELSE = frozenset(
    folded_words(
        "my mine mój moja moje moi mojego mojej mojemu moją moim moich mym "
        "mi mis mío mía míos mías nuestro nuestra nuestros nuestras "
        "мій моя моє мої мого моєї моєму моїй моїм моїх мою "
        "who whom whose kto kogo komu kim czyj czyja czyje quién quiénes cuyo cuya "
        "хто кого кому ким чий чия чиє"
    )
)
"""Possessives and words asking who: the question is about someone of the user's."""


def about_the_user_alone(question: str, names: Sequence[str]) -> bool:
    """Whether ``question``'s subject is the user and it names no one else (see the
    module docstring); ``names``: the words the user is named by."""
    tokens = [(m.group(1), bool(m.group(2))) for m in TOKEN.finditer(question)]
    folded = [fold(word).casefold() for word, _ in tokens]
    subject = False
    for n, (word, possessive) in enumerate(tokens):
        if possessive or folded[n] in _SOMEONE_ELSE:
            return False
        pronoun = word == "I" or folded[n] in _PRONOUNS
        named = folded[n] in _THE_USER or _is_name(word, names)
        subject = subject or pronoun or (named and not _after_of(folded, n))
    return subject and not names_another(question, names)


_PLACE_WORDS = frozenset(
    folded_words(
        "in at to from into near inside "
        "w we do z ze na przy pod koło "
        "en desde hacia cerca "
        "в у до з із на біля під"
    )
)
"""Words of place and direction before a name that make it a place or an organisation
("moved to Bristol", "w Krakowie", "en Monterrey", "у Львові"), not someone the question
is about. The Spanish "a" and "de" are left out: they come before people too ("conocí a
María", "la casa de Pablo")."""


def names_another(question: str, names: Sequence[str]) -> bool:
    """Whether ``question`` names someone by a name that is not one of the user's
    ``names`` ("Where does Margaret live?"; :func:`kronika.core.entities.extract_entities`,
    which knows months and weekdays are no names). A user's name in another case is
    still the user's ("ulubione danie Tarasa", :func:`kronika.core.subjects.word_matches`,
    in either script). A name right after a word of place is a place ("Where did I work
    before I moved to Bristol?", :data:`_PLACE_WORDS`)."""
    return any(
        not any(_is_name(part, names) or _a_form_of(part, names) for part in entity.split())
        and not _a_place(question, entity)
        for entity in extract_entities(question)
    )


def _a_place(question: str, entity: str) -> bool:
    """Whether ``entity`` comes, where ``question`` first says it, right after a word of
    place (:data:`_PLACE_WORDS`)."""
    at = question.find(entity)
    if at <= 0:
        return False
    before = list(folded_words(question[:at]))
    return bool(before) and before[-1] in _PLACE_WORDS


def _a_form_of(word: str, names: Sequence[str]) -> bool:
    """Whether ``word`` is an inflected form of one of ``names`` (in either script)."""
    folded, said = fold(word).casefold(), sound(word)
    return any(
        word_matches(folded, fold(name).casefold()) or word_matches(said, sound(name))
        for name in names
    )


def _after_of(folded: list[str], n: int) -> bool:
    """Whether the word at ``n`` comes after "of" / "de" / "del" (past function words)."""
    for before in reversed(folded[:n]):
        if before in OF:
            return True
        if before not in FUNCTION_WORDS:
            return False
    return False


def _is_name(word: str, names: Sequence[str]) -> bool:
    """Whether ``word`` is one of the user's ``names`` as written (in either script)."""
    if not word[:1].isupper():
        return False
    folded = fold(word).casefold()
    return any(folded == fold(name).casefold() or sound(word) == sound(name) for name in names)


__all__ = ["about_the_user_alone", "names_another"]
