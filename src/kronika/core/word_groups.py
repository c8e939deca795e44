"""Groups of words that name one thing in the four languages kronika reads, and the
group words a question's words name (:mod:`kronika.core.kin`, :mod:`kronika.core.topics`).

A group is written in the nominative (or a verb's usual forms); a question's word names
a group when it is a form of one of its words (:func:`kronika.core.subjects.word_matches`).
The words are filed by their first letters and their stems' (as
:class:`~kronika.core.key_forms.KeyWords` files keys), so a question's word is compared
with the few words filed under its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from kronika.core.subjects import filing_prefixes, word_matches
from kronika.core.text import folded_words


class WordGroups:
    """Groups of words, each a space-separated string; :meth:`words_of` gives the words
    of the groups a question names."""

    __slots__ = ("_filed", "_of")

    def __init__(self, groups: Iterable[str]) -> None:
        found: dict[str, list[tuple[str, frozenset[str]]]] = {}
        for words in groups:
            group = frozenset(folded_words(words))
            for word in group:
                for prefix in filing_prefixes(word):
                    found.setdefault(prefix, []).append((word, group))
        self._filed = {k: tuple(v) for k, v in found.items()}
        self._of = lru_cache(maxsize=4096)(self._group_of)

    def _group_of(self, word: str) -> frozenset[str]:
        found: set[str] = set()
        for prefix in filing_prefixes(word):
            for member, group in self._filed.get(prefix, ()):
                if word_matches(word, member):
                    found |= group
        return frozenset(found)

    def words_of(self, words: Iterable[str]) -> set[str]:
        """The words (folded) of the groups that ``words`` (folded words of a question)
        name, less ``words`` themselves."""
        asked = set(words)
        return {k for w in asked for k in self._of(w)} - asked


__all__ = ["WordGroups"]
