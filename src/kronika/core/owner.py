"""A question about the user asked in the third person, read as the user's own.

An agent's memory belongs to one person, and what it keeps of them is said in the
first person: a profile fact ``city: Toronto`` is embedded as ``my city is Toronto``
(:func:`kronika.core.text.embedding_text`). "Where does David live now?", asked of
David's own memory, asks the same as "Where do I live now?", but it shares the
fact's meaning less than it shares a word with ``name: David Okafor`` and with every
"Hey David!" of the assistant. So recall reads such a question as the user would ask
it (:func:`as_the_user`): the words that name the user become the first person —
``I``, or ``my`` for a possessive ("David's cat" → "my cat"). The embedding reads
that question; keyword search reads it too, except that "the user" stays a word to
find there (:class:`Asked`). Nothing else of the question changes.

Who the user is comes from the memory itself, not from a list of names:

* the value of a profile fact keyed as a name (:func:`is_name_key`: the word for
  "name", "surname" or "nickname" in English, Polish, Spanish or Ukrainian, alone or
  with "user", "full", "first", "last": ``name``, ``user_name``, ``imię``,
  ``nombre``, ``ім'я``, ``apodo``; not ``dog_name`` or ``imię_psa``), any word of it
  (``Alice Morgan`` → "Alice" and "Morgan");
* the word for "the user" itself in the four languages, singular, in its cases
  ("the user", "użytkownika", "el usuario", "користувачеві").

A name is matched in its inflected forms (``Davidowi``, ``Tarasa``, ``Оксани``:
:func:`kronika.core.subjects.word_matches`) and across the Latin and Cyrillic
scripts (``Oksana`` and ``Оксана``, by the Ukrainian national transliteration of
2010), and only where it is written with a capital letter, as names are (``marka``,
a brand, is no form of ``Marek``). A question that asks about nothing but the user
("Who is David?") is left as it is: its answer is the name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kronika.core.given_names import name_forms
from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.model import ItemType, MemoryItem
from kronika.core.subjects import forms_among, subject, word_matches
from kronika.core.text import fold, folded_words

_NAME_WORDS = [
    "name",
    "surname",
    "nickname",
    "imię",
    "nazwisko",
    "pseudonim",
    "nombre",
    "apellido",
    "apodo",
    "ім'я",
    "прізвище",
    "прізвисько",
]
"""The words for the user's name, surname and nickname in English, Polish, Spanish and
Ukrainian."""
_BEFORE = ("user", "full", "first", "last", "given", "middle", "preferred", "my")
"""Words that may come before a name word in a key of the user's name (``full_name``)."""
_AFTER = ("user", "użytkownika", "usuario", "del usuario", "de usuario", "користувача")
"""Words that may come after one (``imię_użytkownika``, ``nombre_del_usuario``)."""
_SEPARATORS = ("_", " ", "-", "")
_APOSTROPHES = "'’ʼ"


def _name_keys() -> frozenset[str]:
    """Every spelling of a key of the user's name, as an index compares keys (trimmed and
    casefolded): a name word alone, after one of :data:`_BEFORE` or before one of
    :data:`_AFTER`, joined by ``_``, a space, ``-`` or nothing (``fullName``), with any
    apostrophe (``ім'я``, ``ім’я``). ``username`` (a login, more often than not) is none."""
    keys: set[str] = set()
    for word in _NAME_WORDS:
        for sep in _SEPARATORS:
            keys.add(word)
            keys.update(f"{before}{sep}{word}" for before in _BEFORE if sep or before != "user")
            keys.update(f"{word}{sep}{after.replace(' ', sep)}" for after in _AFTER if sep)
    return frozenset(
        key.replace("'", apostrophe).casefold() for key in keys for apostrophe in _APOSTROPHES
    )


NAME_KEYS = _name_keys()
"""The keys of a profile fact holding the user's name (:func:`is_name_key`)."""
USER_FORMS = frozenset(
    folded_words(
        "user "
        "użytkownik użytkownika użytkownikowi użytkownikiem użytkowniku "
        "użytkowniczka użytkowniczki użytkowniczce użytkowniczkę użytkowniczką "
        "usuario usuaria "
        "користувач користувача користувачу користувачеві користувачем користувачці "
        "користувачка користувачки користувачкою користувачку"
    )
)
"""The word for "the user" in English, Polish, Spanish and Ukrainian, singular, in each of
its cases (folded, casefolded): a question naming the user so is about the user.
Plurals ("users", "użytkownicy") name other people and are not here."""
_LATIN = {
    "а": "a",
    "б": "b",
    "в": "v",
    "г": "h",
    "ґ": "g",
    "д": "d",
    "е": "e",
    "є": "ie",
    "ж": "zh",
    "з": "z",
    "и": "y",
    "і": "i",
    "ї": "i",
    "й": "i",
    "к": "k",
    "л": "l",
    "м": "m",
    "н": "n",
    "о": "o",
    "п": "p",
    "р": "r",
    "с": "s",
    "т": "t",
    "у": "u",
    "ф": "f",
    "х": "kh",
    "ц": "ts",
    "ч": "ch",
    "ш": "sh",
    "щ": "shch",
    "ь": "",
    "ю": "iu",
    "я": "ia",
    "ы": "y",
    "э": "e",
    "ё": "io",
    "ъ": "",
}
"""Cyrillic letters in Latin, by the Ukrainian national transliteration (2010): what a
Latin text writes for a Ukrainian name (``Оксана`` → ``oksana``, ``Юрій`` → ``yurii``).
At the start of a word ``є ї й ю я`` are ``ye yi y yu ya``."""
_LATIN_FIRST = {"є": "ye", "ї": "yi", "й": "y", "ю": "yu", "я": "ya"}
_WORDS = re.compile(r"\w+")
TOKEN = re.compile(r"(\w+)((?:['’ʼ]s|(?<=s)['’ʼ])(?!\w))?")
"""A word and the possessive after it, apart ("David's", "Taras'", "Alice’s")."""
# "the" directly before "user": "the user's cat" is "my cat", not "the my cat"
_ARTICLE = re.compile(r"\bthe\s+$", re.IGNORECASE)

NAME_ENDING = 3
"""The most letters a case ending adds to a name (``-owi``, ``-ові``, ``-еві``)."""
FIRST_PERSON = "I"
"""What stands for the user where the question named them: the subject, as the user says
it of themselves ("I moved to Valencia"). ``me`` does as well by leave-one-person-out on
``kronika bench memory`` (one question either way, docs/benchmarks-owner.md), and with
it "where does me live?" leaves "I moved to Valencia" under the relevance floor."""
FIRST_PERSON_POSSESSIVE = "my"
"""What stands for the user's possessive ("David's" → ``my``), as in a profile fact's
embedded text (``my city is Toronto``)."""


def is_name_key(key: str) -> bool:
    """Whether a fact keyed ``key`` holds the user's name: ``key`` is one of
    :data:`NAME_KEYS` (``name``, ``user_name``, ``fullName``, ``imię``, ``nombre``,
    ``ім'я``, ``apodo``; not ``dog_name``, ``imię_psa`` or ``username``)."""
    return key.strip().casefold() in NAME_KEYS


_NAMING = frozenset(
    folded_words(
        "name surname nickname called "
        "imię nazwisko pseudonim nazywa nazywam nazywasz nazywają "
        "nombre apellido apodo llama llamo llamas llaman "
        "прізвище прізвисько звати звуть називають"
    )
)
"""The words for a name and for being called, in English, Polish, Spanish and
Ukrainian (folded): a question with one of them, in any form, asks for a name."""
_NAME_UK = re.compile(r"(?<!\w)(?:ім['’ʼ]я|імен\w*)(?!\w)", re.IGNORECASE)
"""The Ukrainian "name" (``ім'я``, ``імені``), which word splitting cuts at its
apostrophe."""


def asks_a_name(question: str) -> bool:
    """Whether ``question`` asks for someone's name: a word of it is a form of a word
    for a name or for being called (:data:`_NAMING`: "What is David's surname?", "Jak
    się nazywa?", "Як звати?")."""
    if _NAME_UK.search(question):
        return True
    return bool(forms_among(folded_words(question), _NAMING))


def owner_names(facts: Iterable[MemoryItem]) -> tuple[str, ...]:
    """The words the user is named by: each word of the value of every profile fact keyed
    as a name (:func:`is_name_key`), as written, capitalised words only when the value
    has any (:func:`kronika.core.subjects.subject`), each followed by the other forms of
    that given name (:func:`~kronika.core.given_names.name_forms`: ``Katarzyna`` is
    also ``Kasia``)."""
    names: list[str] = []
    for fact in facts:
        if fact.type is not ItemType.PROFILE or not fact.key or not is_name_key(fact.key):
            continue
        value = fact.value if fact.value is not None else fact.content
        words = subject(value).words  # folded and casefolded: so are the forms added
        names.extend(fold(f).casefold() for word in words for f in name_forms(word))
    return tuple(dict.fromkeys(names))


def latin(word: str) -> str:
    """``word`` folded and casefolded, its Cyrillic letters in Latin (:data:`_LATIN`)."""
    lower = word.casefold()
    if lower.isascii():
        return lower
    out = [
        _LATIN_FIRST.get(c, _LATIN.get(c, c)) if n == 0 else _LATIN.get(c, c)
        for n, c in enumerate(lower)
    ]
    return fold("".join(out)).casefold()


_SOUNDS = (("sz", "sh"), ("cz", "ch"), ("j", "i"), ("y", "i"), ("w", "v"), ("ph", "f"))
"""Spellings of one sound in the Latin letters of English, Polish and Spanish and in the
Ukrainian national transliteration (:func:`sound`)."""
_SOFT_C = re.compile(r"c(?=[ei])")
_DOUBLED = re.compile(r"(.)\1+")


def sound(word: str) -> str:
    """``word`` in Latin letters (:func:`latin`) spelled the same way whatever language
    wrote it: ``j`` and ``y`` as ``i``, ``w`` as ``v``, Polish ``sz`` / ``cz`` as ``sh`` /
    ``ch``, a ``c`` before ``e`` or ``i`` as ``s``, a doubled letter once. A name
    transliterated by another language's rules then reads alike: ``Jurij`` (Polish) and
    ``Юрій`` (``yurii``) are ``iuri``, ``Priya`` and ``Прія`` (``priia``) ``pria``,
    ``Lucía`` and ``Лусія`` ``lusia``."""
    spelled = latin(word)
    for written, said in _SOUNDS:
        spelled = spelled.replace(written, said)
    return _DOUBLED.sub(r"\1", _SOFT_C.sub("s", spelled))


def may_name_someone(query: str) -> bool:
    """Whether ``query`` has a word that could be a name: one written with a capital
    letter that is no function word ("Where", "I" are not). Only then is the user's name
    worth reading from the memory."""
    return any(
        word[:1].isupper() and fold(word).casefold() not in FUNCTION_WORDS
        for word in _WORDS.findall(query)
    )


def names_the_user(word: str, names: Sequence[str]) -> bool:
    """Whether ``word`` of a question (as written) names the user: a form of "the user"
    (:data:`USER_FORMS`) or of one of their ``names`` (:func:`is_the_users_name`)."""
    return fold(word).casefold() in USER_FORMS or is_the_users_name(word, names)


def is_the_users_name(word: str, names: Sequence[str]) -> bool:
    """Whether ``word`` of a question (as written), written with a capital letter, is a
    form of one of ``names`` in either script, transliterated by any of the four
    languages' rules (:func:`sound`)."""
    folded = fold(word).casefold()
    if not word[:1].isupper() or folded in FUNCTION_WORDS:
        return False
    as_latin, as_said = latin(word), sound(word)
    return any(
        _forms(folded, fold(name).casefold())
        or _forms(as_latin, latin(name))
        or _forms(as_said, sound(name))
        for name in names
    )


def _forms(word: str, name: str) -> bool:
    """Forms of one name: :func:`~kronika.core.subjects.word_matches`, at most
    :data:`NAME_ENDING` letters apart (``Davidowi``, not ``Valencia`` for ``Vale``)."""
    return abs(len(word) - len(name)) <= NAME_ENDING and word_matches(word, name)


@dataclass(frozen=True, slots=True)
class Asked:
    """A question as the user would ask it.

    ``text`` is embedded: every word naming the user in the first person.
    ``keywords`` is searched by keyword: only the user's names in the first person
    (and so left out, as pronouns are). "The user" stays a keyword: where it is a word
    of what is stored ("the user logs in with OAuth"), it is one to find."""

    text: str
    keywords: str


def as_the_user(query: str, names: Sequence[str]) -> Asked:
    """``query`` as the user would ask it (:class:`Asked`): the words that name the user in
    the first person, :data:`FIRST_PERSON`, or :data:`FIRST_PERSON_POSSESSIVE` for a
    possessive, and an English "the" before "user" dropped. Unchanged when nothing
    names the user, or when nothing else is asked ("Who is David?", "David Okafor")."""
    text = _first_person(query, lambda word: names_the_user(word, names))
    if text == query or all(w in FUNCTION_WORDS for w in folded_words(text)):
        return Asked(query, query)  # only the user is asked about: the name answers
    return Asked(text, _first_person(query, lambda word: is_the_users_name(word, names)))


def _first_person(query: str, naming: Callable[[str], bool]) -> str:
    """``query`` with each word ``naming`` the user in the first person."""
    parts: list[str] = []
    at = 0
    for match in TOKEN.finditer(query):
        word, possessive = match.group(1), match.group(2)
        if not naming(word):
            continue
        before = query[at : match.start()]
        if fold(word).casefold() in USER_FORMS:
            before = _ARTICLE.sub("", before)
        parts += [before, FIRST_PERSON_POSSESSIVE if possessive else FIRST_PERSON]
        at = match.end()
    return "".join([*parts, query[at:]])


__all__ = [
    "FIRST_PERSON",
    "FIRST_PERSON_POSSESSIVE",
    "NAME_ENDING",
    "NAME_KEYS",
    "TOKEN",
    "USER_FORMS",
    "Asked",
    "as_the_user",
    "is_name_key",
    "is_the_users_name",
    "latin",
    "may_name_someone",
    "sound",
    "names_the_user",
    "owner_names",
]
