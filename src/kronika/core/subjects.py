"""What a text says about a subject — a name or a few words — in any inflected form.

"Forget about Dmytro Kovalenko" must find "Dmytrem Kovalenką", "Коваленкові" and
"Kovalenko's"; "забудь про Київ" must find "у Києві". Deterministic and offline, with
no list of names or endings: a subject word matches a text word (both accent-folded
and case-folded, :func:`kronika.core.text.fold`) when they are equal, or when the text
word is one of the word's *stems* followed by an ending of at most
:data:`MAX_ENDING` letters. A word's stems are

* the word without its last vowel, when it ends in one (``dmytro`` → ``dmytr``, so
  ``dmytra``, ``dmytrem``, ``dmytrowi``; ``valencia`` → ``valenci``);
* with the vowel of its last syllable alternating the way Ukrainian and Polish nouns
  alternate it between the nominative and the other cases: ``і`` ↔ ``о``/``е``/``є``
  (``київ`` → ``києв``: ``києві``; ``львів`` → ``львов``: ``львова``), and a fleeting
  ``e``/``е`` dropped (``marek`` → ``mark``: ``marka``; ``кравець`` → ``кравц``);
* with its last consonant softened as Polish and Ukrainian soften it before an ending
  in ``-e``/``-і`` (``k`` → ``c``: ``kovalenk`` → ``kovalenc``: ``kovalence``; ``г`` →
  ``з``: ``ольг`` → ``ольз``: ``ользі``; ``r`` → ``rz``, ``t`` → ``ci``, ``d`` → ``dzi``…).

An ending never starts with two consonants after a stem that ends in one: no
inflectional ending of the four languages makes such a cluster, so ``mieszkam`` is
not a form of ``mięsa`` (stem ``mies``), while ``robisz`` is one of ``robi``.

A stem is at least :data:`MIN_STEM` letters: a shorter word (``tea``, ``Ana``) matches
only itself, so ``tea`` never finds ``team`` or ``teapot``. A subject of several words
is mentioned where every one of its words is.

Sentences (:func:`sentences`) are cut at sentence punctuation, blank lines and the
start of a Markdown list item, quote or heading; a line break inside a paragraph does
not end a sentence.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kronika.core.matching import words
from kronika.core.text import fold

MIN_STEM = 4
"""The fewest letters a stem keeps; shorter words match only themselves."""
MAX_ENDING = 4
"""The most letters an inflectional ending adds to a stem (``-iego`` is five: not kept)."""

_VOWELS = frozenset("aeiouyаеєиіоуюяыэь")  # folded: ą→a, ó→o, ї→і, й→и
_ALTERNATING = "іоеє"
_FLEETING = "eе"
_PALATAL = (  # a stem's last consonant before -e/-i/-і: Kovalenko → Kovalence, Ольга → Ользі
    ("ch", ("sz",)),
    ("k", ("c",)),
    ("g", ("dz", "z")),
    ("r", ("rz",)),
    ("t", ("ci", "c")),
    ("d", ("dzi", "dz")),
    ("к", ("ц",)),
    ("г", ("з", "ж")),
    ("х", ("с", "ш")),
)
_WORD = re.compile(r"\w+")
_SENTENCE = re.compile(
    r"(?<=[.!?…])[\"'”»)\]]*\s+|\n[ \t]*\n\s*|\n(?=[ \t]*(?:[-*+#>|]|\d+[.)])\s)"
)
_LEAD = re.compile(r"^(?:[-*+>#|]+\s*|\d+[.)]\s+)+")


@dataclass(frozen=True, slots=True)
class Subject:
    """What is to be forgotten: its ``words`` (folded, lower case; every one must be
    mentioned) and the ``names`` among them — words whose every form is redacted on
    its own wherever it is written, not only in the sentences that mention the whole
    subject."""

    words: tuple[str, ...]
    names: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.words)


def subject(text: str) -> Subject:
    """The subject ``text`` names: its capitalised words when it has any ("que vivo en
    Valencia" → ``valencia``), else all its words; function words of EN/PL/ES/UK left
    out (:func:`kronika.core.matching.words`). Every word of a subject is a name word."""
    found = list(dict.fromkeys(words(text)))
    caps = {_folded(w) for w in capitalised(text)}
    named = tuple(w for w in found if w in caps) or tuple(found)
    return Subject(named, named)


def capitalised(text: str) -> list[str]:
    """The words of ``text`` written with a capital letter (names, as people write them)."""
    return [w for w in _WORD.findall(text) if w[:1].isupper()]


@lru_cache(maxsize=4096)
def stems(word: str) -> tuple[str, ...]:
    """The stems of a folded, lower-case ``word`` (see the module docstring)."""
    base = word[:-1] if word[-1:] in _VOWELS and len(word) - 1 >= MIN_STEM else word
    found = [base]
    last = max((base.rfind(v) for v in _ALTERNATING), default=-1)
    closed = 0 <= last < len(base) - 1 and all(c not in _VOWELS for c in base[last + 1 :])
    if closed:
        found += [base[:last] + v + base[last + 1 :] for v in _ALTERNATING if v != base[last]]
    fleeting = max((base.rfind(v) for v in _FLEETING), default=-1)
    if 0 < fleeting == len(base) - 2:
        found.append(base[:fleeting] + base[fleeting + 1 :])
    for hard, soft in _PALATAL:
        if base.endswith(hard):
            found += [base[: -len(hard)] + s for s in soft]
    return tuple(dict.fromkeys(s for s in found if len(s) >= MIN_STEM))


FILING = 2
"""Letters of a word, or of one of its stems, by which :func:`filing_prefixes` files it."""


def filing_prefixes(word: str) -> set[str]:
    """The first :data:`FILING` letters of folded ``word`` and of each of its stems. Two
    forms of one word (:func:`word_matches`: equal, or one starts with a stem of the
    other, every stem at least :data:`MIN_STEM` letters) share one of these, so words
    filed by them are found among those filed under a question word's own, without
    comparing each with each (:class:`~kronika.core.key_forms.KeyWords`,
    :mod:`kronika.core.kin`)."""
    return {word[:FILING], *(stem[:FILING] for stem in stems(word))}


def _folded(word: str) -> str:
    return fold(word).casefold()


def word_matches(text_word: str, subject_word: str) -> bool:
    """Whether folded ``text_word`` and folded ``subject_word`` are forms of one word:
    either is a stem of the other and an ending (``києві`` and ``київ`` both ways)."""
    if text_word == subject_word:
        return True
    return _ends(text_word, subject_word) or _ends(subject_word, text_word)


def forms_among(asked: Iterable[str], words: Collection[str]) -> list[str]:
    """The words of ``asked`` that are forms of a word of ``words`` (all folded,
    :func:`word_matches`), in the order of ``asked``."""
    return [w for w in asked if any(word_matches(w, k) for k in words)]


def names_every(asked: Collection[str], words: Collection[str]) -> bool:
    """Whether ``words`` has a word and every one is a form of a word of ``asked`` (all
    folded, :func:`word_matches`): "w jakiej firmie" names every word of ``firma``."""
    return bool(words) and all(any(word_matches(w, k) for w in asked) for k in words)


def _ends(word: str, base: str) -> bool:
    return any(
        word.startswith(s) and len(word) - len(s) <= MAX_ENDING and _joins(s, word[len(s) :])
        for s in stems(base)
    )


def _joins(stem: str, ending: str) -> bool:
    """Whether ``ending`` can be an inflectional ending of ``stem``: no ending of the four
    languages starts with two consonants after a stem's consonant (``mięs`` + ``zkam``
    is another word; ``robi`` + ``sz``, ``mark`` + ``iem``, ``києв`` + ``і`` are forms)."""
    return not (
        len(ending) >= 2
        and stem[-1:] not in _VOWELS
        and ending[0] not in _VOWELS
        and ending[1] not in _VOWELS
    )


def _text_words(text: str) -> set[str]:
    return {_folded(w) for w in _WORD.findall(text)}


def might_mention(text: str, about: Subject, *, every: bool = True) -> bool:
    """A quick test that rules a text out: ``False`` when no word of it starts as a
    subject word does (every subject word; any, when not ``every``), so :func:`mentions`
    is ``False`` too (and :func:`forms` finds nothing, when not ``every``)."""
    folded = _folded(text)
    # a word starting as the subject word does (a stem may alternate from its third letter)
    found = (re.search(rf"(?<!\w){re.escape(w[:2])}", folded) for w in about.words)
    return all(found) if every else any(found)


def mentions(text: str, about: Subject) -> bool:
    """Whether ``text`` holds a form of every word of the subject."""
    if not about or not might_mention(text, about):
        return False
    have = _text_words(text)
    return all(any(word_matches(h, w) for h in have) for w in about.words)


def forms(text: str, about: Subject) -> list[str]:
    """The words of ``text``, as written, that are forms of the subject's name words."""
    return list(
        dict.fromkeys(
            w for w in _WORD.findall(text) if any(word_matches(_folded(w), n) for n in about.names)
        )
    )


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (see the module docstring), list markers left out."""
    found = []
    for piece in _SENTENCE.split(text):
        piece = _LEAD.sub("", piece.strip()).strip()
        if piece:
            found.append(piece)
    return found


def sentences_about(text: str, about: Subject) -> list[str]:
    """The sentences of ``text`` that mention the subject."""
    if not might_mention(text, about):
        return []
    return [s for s in sentences(text) if mentions(s, about)]


def any_mentions(texts: Sequence[str], about: Subject) -> bool:
    return any(mentions(t, about) for t in texts)


__all__ = [
    "FILING",
    "MAX_ENDING",
    "MIN_STEM",
    "Subject",
    "any_mentions",
    "capitalised",
    "filing_prefixes",
    "forms",
    "forms_among",
    "mentions",
    "might_mention",
    "names_every",
    "sentences",
    "sentences_about",
    "stems",
    "subject",
    "word_matches",
]
