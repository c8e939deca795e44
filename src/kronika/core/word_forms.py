"""A word of a question that no memory holds, searched in the forms the memories hold.

Keyword search stems English words (FTS5's ``porter`` tokenizer) and no other
language: "Co się wydarzyło z *rekrutacją*?" finds nothing in a memory that says
"*rekrutacji*", "¿Qué dejé de *comer*?" nothing in "ya no *come* carne", and
"Що я казав про *співбесіду*?" nothing in "*співбесіда*". A word the searched memories
hold as written is searched as written; a word they do not hold at all is searched in
every form of it they do hold (:func:`kronika.core.subjects.word_matches`: one word
is a stem of the other followed by a short ending, with the vowel and consonant
alternations of Polish and Ukrainian), each form as a word of the question.

A form shares its first :data:`FORM_PREFIX` letters with the word or with one of the
word's stems (:func:`form_prefixes`), so an index finds the candidates by a prefix
scan of its vocabulary rather than by comparing every word it holds. Words shorter
than a stem, numbers and function words (:data:`~kronika.core.keywords.FUNCTION_WORDS`)
have no forms, and no function word is a form.

Deterministic, offline and the same on every index: a word counts as held when a row
the search may return holds it (its filters and the reader's visibility applied, so a
word only memories the reader may not see hold is searched in its forms, as if they
were not there); its forms are the words the rows of the asked agents and tenant hold;
each index adds them, sorted, right after the word."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.subjects import MIN_STEM, stems, word_matches

FORM_PREFIX = MIN_STEM
"""Letters a form shares with the word or one of its stems (a stem has at least these)."""


def has_forms(token: str) -> bool:
    """Whether ``token`` (a folded, lower-case word of a query) may be searched in its
    forms: at least a stem long, no digit, not a function word."""
    return (
        len(token) >= MIN_STEM
        and token not in FUNCTION_WORDS
        and not any(c.isdigit() for c in token)
    )


def form_prefixes(token: str) -> list[str]:
    """The prefixes, :data:`FORM_PREFIX` letters each, a form of ``token`` starts with
    (sorted; none when ``token`` has no forms)."""
    if not has_forms(token):
        return []
    return sorted({token[:FORM_PREFIX], *(s[:FORM_PREFIX] for s in stems(token))})


def forms_of(token: str, candidates: Iterable[str]) -> list[str]:
    """The words of ``candidates`` that are forms of ``token`` (not ``token`` itself, no
    function word), sorted."""
    return sorted(
        {
            word
            for word in candidates
            if word != token and word not in FUNCTION_WORDS and word_matches(token, word)
        }
    )


class HasTokens(Protocol):
    @property
    def tokens(self) -> tuple[str, ...]: ...


P = TypeVar("P", bound=HasTokens)


def absent_words(phrases: Sequence[HasTokens], holds: Callable[[str], bool]) -> list[str]:
    """The one-word phrases of ``phrases`` that may have forms and that the searched
    memories do not hold (``holds``), in order, each once."""
    found: dict[str, None] = {}
    for phrase in phrases:
        if len(phrase.tokens) == 1:
            token = phrase.tokens[0]
            if token not in found and has_forms(token) and not holds(token):
                found[token] = None
    return list(found)


def with_forms(
    phrases: Sequence[P], forms: Mapping[str, Sequence[str]], make: Callable[[str], P]
) -> list[P]:
    """``phrases`` with each absent word's ``forms`` (made into phrases by ``make``) right
    after it; a form the question already asks, or gave another word, is not added
    again."""
    if not forms:
        return list(phrases)
    asked: set[str] = {t for p in phrases if len(p.tokens) == 1 for t in p.tokens}
    out: list[P] = []
    added: set[str] = set()
    for phrase in phrases:
        out.append(phrase)
        if len(phrase.tokens) != 1:
            continue
        for form in forms.get(phrase.tokens[0], ()):
            if form not in asked and form not in added:
                added.add(form)
                out.append(make(form))
    return out


__all__ = [
    "FORM_PREFIX",
    "absent_words",
    "form_prefixes",
    "forms_of",
    "has_forms",
    "with_forms",
]
