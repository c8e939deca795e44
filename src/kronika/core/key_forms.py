"""A key named in a question in another form: "W jakiej firmie pracuje?" names ``firma``.

Keyword search reads a fact's key as a field, so "what is my favourite colour?" finds
``favourite_colour: lilac`` by its key. Polish and Ukrainian decline nouns, and a
question names a key in the case its sentence wants: "w jakiej **firmie**" (``firma``),
"на якому **інструменті**", "як звати **чоловіка** користувача" (``чоловік``). Keyword
search matches whole words, so such a key is not found. :class:`KeyWords` gives the
words of the keys a question names in another form (every word of the key is a form of
a word of the question, and not every one is written as the key writes it), for
keyword search to look for beside the question's own words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kronika.core.kin import kin_words
from kronika.core.subjects import filing_prefixes, word_matches
from kronika.core.text import folded_words, key_words
from kronika.core.topics import topic_words


class KeyWords:
    """The words of many keys, filed so that a question finds the keys it names in
    another form without comparing each of its words with each key's.

    Two words are forms of one word (:func:`~kronika.core.subjects.word_matches`) only
    when they are equal or one starts with a stem of the other, and every stem is at
    least :data:`~kronika.core.subjects.MIN_STEM` letters long; so a key word filed by
    its first letters and its stems' is found among the words filed by a question
    word's first letters and its stems'. Only those are compared: a memory with
    thousands of keys costs a question a handful of comparisons."""

    __slots__ = ("_filed", "_keys", "_of_word")

    def __init__(self, keys: Iterable[str]) -> None:
        found = (tuple(dict.fromkeys(folded_words(key_words(key)))) for key in keys)
        self._keys = tuple(dict.fromkeys(words for words in found if words))
        self._of_word: dict[str, list[int]] = {}
        self._filed: dict[str, set[str]] = {}
        for n, words in enumerate(self._keys):
            for word in words:
                self._of_word.setdefault(word, []).append(n)
                for prefix in filing_prefixes(word):
                    self._filed.setdefault(prefix, set()).add(word)

    def __len__(self) -> int:
        return len(self._keys)

    def forms(self, question: Sequence[str], *, topics: bool = True) -> list[str]:
        """The words of the keys that ``question`` (its folded words, without function
        words) names in another form: every word of the key is a form of a word of the
        question, a word for the same relation in another language (``mąż`` for
        "husband", :func:`~kronika.core.kin.kin_words`) or, when ``topics`` and the
        question names no relation, a word of the topic a word of the question names
        (``місто`` for "live", :func:`~kronika.core.topics.topic_words`: the user's keys,
        so not of a question about someone else); and not every one is written as the
        key writes it. In the order of the keys, each once."""
        asked = set(question)
        found: dict[str, None] = {}
        for words in self.named(question, topics=topics):
            if not all(k in asked for k in words):
                found.update((k, None) for k in words if k not in asked)
        return list(found)

    def named(self, question: Sequence[str], *, topics: bool = True) -> list[tuple[str, ...]]:
        """The keys (their words) that ``question`` names, as written or in another
        form (as :meth:`forms` reads them), in the order of the keys."""
        asked = set(question)
        named: set[str] = set()
        # a relation named in another language: "husband" names ``mąż`` (core/kin.py)
        kin = kin_words(asked) if self._keys else set()
        # a topic named by its verb: "Where do I live?" names ``city`` (core/topics.py)
        topic = topic_words(asked) if self._keys and topics and not kin else set()
        for word in asked | kin | topic if self._keys else ():
            for prefix in filing_prefixes(word):
                filed = self._filed.get(prefix, ())
                named.update(k for k in filed if k not in named and word_matches(word, k))
        return [
            self._keys[n]
            for n in sorted({n for word in named for n in self._of_word[word]})
            if all(k in named for k in self._keys[n])
        ]


__all__ = ["KeyWords"]
