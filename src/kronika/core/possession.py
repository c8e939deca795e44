"""Whose a word of a question is: "my dog's name" asks for the dog's name, not mine.

A profile fact is the user's own: ``name: Lucas`` says "my name is Lucas"
(:func:`kronika.core.text.embedding_text`), ``favourite_food: pierogi`` "my favourite
food is pierogi". Keyword search reads a fact's key as a field, so a question with the
key's word in it finds the fact ("what is my name?"). But "what is my dog's name?",
"what is the name of my dog?" and "¿cuál es el nombre de mi perro?" ask for a name
that is the dog's: the user's ``name`` answers them no more than any other fact does.

:func:`borrowed_words` finds such words, by the two ways English and Spanish say whose
a thing is:

* a possessive: the words after ``X's`` up to the next function word ("my dog's name",
  "Tom's favourite food" → ``favourite``, ``food``);
* ``of`` / ``de`` / ``del``: the words before it back to the previous function word,
  when what follows (past articles and possessive pronouns) is not the user ("the
  name of my dog", "el nombre del perro" → ``name``, ``nombre``; "the name of me" is
  the user's own).

Recall reads the question after the user's own name has become the first person
(:mod:`kronika.core.owner`: "the name of Marek's cat" → "the name of my cat"), so
"X's" is never the user. Polish and Ukrainian say whose with a noun's case ("imię
psa", "ім'я кота"), which needs more than word order to read: not done.
"""

from __future__ import annotations

from collections.abc import Iterable

from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.owner import TOKEN, USER_FORMS
from kronika.core.text import fold, folded_words

OF = frozenset({"of", "de", "del"})
""""Of" / "de" / "del": what follows names whose the words before are ("the name of my
dog", "el nombre del perro")."""
_DETERMINERS = frozenset(
    folded_words(
        "the a an my your his her its our their this that these those "
        "el la los las un una unos unas mi mis tu tus su sus este esta ese esa "
        "nuestro nuestra"
    )
)
"""Words skipped between "of" / "de" and the one it names."""
_THE_USER = frozenset(folded_words("i me mine myself yo")) | USER_FORMS
"""What names the user after "of" / "de" ("the name of me", "la perrita del usuario")."""


def borrowed_words(question: str) -> frozenset[str]:
    """The words of ``question`` (folded, casefolded) that say something belonging to
    another than the user (see the module docstring)."""
    tokens = [(fold(m.group(1)).casefold(), bool(m.group(2))) for m in TOKEN.finditer(question)]
    found: set[str] = set()
    for n, (word, possessive) in enumerate(tokens):
        # "what's", "it's": no possessor; "the user's": the user's own
        if possessive and word not in FUNCTION_WORDS and word not in USER_FORMS:
            found.update(_run(w for w, _ in tokens[n + 1 :]))
        if word in OF and not _names_the_user(tokens[n + 1 :]):
            found.update(_run(w for w, _ in reversed(tokens[:n])))
    return frozenset(found)


def _run(words: Iterable[str]) -> list[str]:
    """The words from the start of ``words`` up to the first function word."""
    run = []
    for word in words:
        if word in FUNCTION_WORDS:
            break
        run.append(word)
    return run


def _names_the_user(after: list[tuple[str, bool]]) -> bool:
    """Whether what follows "of" / "de" is the user (or nothing at all); a possessive
    there stands for a determiner ("the name of the user's pet" is the pet's)."""
    for word, possessive in after:
        if possessive:
            continue
        if word not in _DETERMINERS or word in _THE_USER:
            return word in _THE_USER
    return True


__all__ = ["OF", "borrowed_words"]
