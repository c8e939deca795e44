"""What both lexical indexes count the same way: a query's terms, the searched columns and
their weights (the SQLite index's FTS5 table and the PostgreSQL index's postings score
with them alike)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kronika.core.text import folded_words
from kronika.core.word_forms import forms_of

MAX_QUERY_TERMS = 64
"""Longer queries keep their first terms: a pasted document must not become a huge MATCH."""


WORD_CACHE = 20_000
"""How many words' tokens a :class:`WordTokens` keeps; it starts over when full."""

Tokenize = Callable[[list[str]], Iterable[tuple[int, Any, int, str]]]
"""Tokenizes texts: ``(text number, column, offset, token)`` for each token."""


class WordTokens:
    """The tokens a lexical index's tokenizer makes of each query word, cached (the
    tokenizer is a pure function)."""

    def __init__(self) -> None:
        self._words: dict[str, tuple[str, ...]] = {}

    def of(self, words: Sequence[str], tokenize: Tokenize) -> list[tuple[str, ...]]:
        """The tokens of each word, in order; ``tokenize`` is asked about the words not
        cached yet (a word can give none, one or several)."""
        missing = [w for w in dict.fromkeys(words) if w not in self._words]
        if missing:
            found: dict[int, list[tuple[int, str]]] = {n: [] for n in range(len(missing))}
            for doc, _, offset, term in tokenize(missing):
                found[doc].append((offset, term))
            if len(self._words) + len(missing) > WORD_CACHE:
                self._words.clear()
            for n, word in enumerate(missing):
                self._words[word] = tuple(term for _, term in sorted(found[n]))
        return [self._words[w] for w in words]


def query_terms(query: str) -> list[str]:
    """The distinct folded words of ``query`` in order of first appearance (at most 64)."""
    seen: dict[str, None] = {}
    for word in folded_words(query):
        seen.setdefault(word, None)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return list(seen)


KEY_WEIGHT = 0.25
"""What a word of a fact's key counts against a word of its content. A key says what a
fact is about, so "what is my favourite colour?" finds ``ulubiony_kolor``; but a key
word asked as an ordinary word ("what is the *name* of my dog?") must not lift the fact
keyed ``name`` above a memory whose content holds the word. A quarter is the most a key
word may count and still, on the shortest keyed fact (a one-word key and a one-word
value, half the mean length), score below the same word once in the content of a memory
three times the mean length: ``w·(k1+1)/(w + k1·(1−b+b/2)) ≤ (k1+1)/(1 + k1·(1−b+3b))``
gives ``w ≤ 0.25`` with FTS5's k1 = 1.2, b = 0.75. A multiple of the grid of
:mod:`kronika.stores.sqlite.lexical` (a quarter)."""
SPEAKER_WEIGHT = 0.0
"""What the name of the speaker of a turn counts: nothing. Who said a turn is a field
(filters, recall's speaker focus), not a word of what was said: "where does the *user*
live?" must not match every turn of the user. The name is still indexed, so that how
common it is counts every turn the person said: a name that speaks half a conversation
is no rare word when the other person says it ("Thanks, Caroline!")."""
COLUMNS = ("content", "key", "entities", "speaker")
"""The columns of ``items_fts``, in order."""
COLUMN_WEIGHTS = {"content": 1.0, "key": KEY_WEIGHT, "entities": 1.0, "speaker": SPEAKER_WEIGHT}


def searchable_forms(
    token: str, candidates: Iterable[str], tokens: Callable[[list[str]], Sequence[Any]]
) -> list[str]:
    """The forms of ``token`` among ``candidates`` (:func:`~kronika.core.word_forms.forms_of`,
    sorted) that the index's tokenizer (``tokens``: each word's tokens) gives back as
    themselves: FTS5 reads a query's words through it, so on both indexes a form that
    would become another token is left out alike."""
    named = forms_of(token, candidates)
    return [f for f, got in zip(named, tokens(named), strict=True) if tuple(got) == (f,)]


def prefix_end(prefix: str) -> str:
    """The first string after every string that starts with ``prefix`` (code point
    order): ``prefix <= word < prefix_end(prefix)`` holds for the words starting so."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)
