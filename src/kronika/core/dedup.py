"""When a fact being remembered is one the Brain already holds (SPEC M3).

Three rules, applied in this order by :func:`place_fact`:

1. **Same text.** Two values are the same when their :func:`same_form` is: Unicode
   compatibility form (NFKC, so full-width letters and composed or decomposed accents
   agree), case folded, and split into words where punctuation and spaces are, so
   ``"I drink green tea every morning"`` and ``"i drink green tea every morning."``
   are one value. Under the same key (or both without one) the fact is only refreshed.
2. **Same concept (extracted facts only).** A key the rule extractor or a model chose
   (``source=auto``) that no current fact uses, but that names the same concept as the
   key of a current fact (``name`` / ``nombre`` / ``imię`` / ``ім'я``, ``location`` / ``city`` /
   ``ciudad`` / ``miasto`` …, see :data:`kronika.core.rule_phrases.KEY_NAMES`), takes
   that key: the new value then refreshes or supersedes the old one instead of
   standing beside it. Keys the person chose are never renamed.
3. **Near duplicates (extracted facts only).** An extracted fact whose content words
   (:func:`content_words` of key and value) overlap a Brain fact's by at least the
   ``near_duplicate_similarity`` setting (Jaccard, :func:`overlap`) is that fact again.
   It only refreshes it when it adds no word, or when the person said the fact
   (``source=explicit``: extraction never rewords what the person said); otherwise it
   supersedes it (kept as history) under the existing key. Facts of two different
   known concepts are never near duplicates.

After these, a single-valued key supersedes its current value and anything else is
added. A multi-valued key keeps its distinct values; rules 1 and 3 keep it from
collecting the same one twice.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from kronika.core import rule_phrases as phrases
from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.model import MemoryItem, Source
from kronika.core.text import fold, normalize_key

# Marks that end or join clauses, and quotes: they only separate words. Other
# punctuation (# % & @ * / § …) carries meaning ("C#", "50%") and is a word of its own.
_SEPARATING_PUNCTUATION = frozenset(".,;:!?…¡¿·•'\"。、｡､･‧")
_SEPARATING_CATEGORIES = frozenset({"Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Zs", "Zl", "Zp", "Cc"})
# Letters that look like apostrophes (Ukrainian writes ім'я also as імʼя).
_APOSTROPHES = str.maketrans({"\u02bc": "'", "\u02b9": "'"})
# A minus sign before a number is part of the value ("-5" is not "5").
_MINUS = re.compile(r"(?<![\w-])-(?=\d)")

# Words that name the person a fact is about ("The user likes tea" says "likes tea").
_SUBJECT = "user users użytkownik użytkownika użytkowniczka usuario usuaria користувач користувача"
_SUBJECT_WORDS = frozenset(fold(word).casefold() for word in _SUBJECT.split())
_NOTE_KEY = "note"  # the key a plain "remember …" gets (core.rules.fact_from_remember)


def _word_or_symbol(ch: str) -> str:
    """``ch`` as a word character (``w``), a word of its own (``s``) or a separator (`` ``)."""
    category = unicodedata.category(ch)
    if category[0] in "LNM":
        return "w"
    if ch in _SEPARATING_PUNCTUATION or category in _SEPARATING_CATEGORIES or ch.isspace():
        return " "
    if category == "Cf":  # soft hyphens, zero-width joiners: invisible
        return ""
    return "s"


def _tokens(text: str) -> list[str]:
    """The words of ``text`` in order, in NFKC and case folded: runs of letters, digits
    and combining marks, a minus sign opening a number ("-5"); every other symbol
    (``+ # % € ☕``) is a word of its own; spaces, quotes, apostrophes, dashes, brackets
    and the marks that end or join clauses only separate words."""
    norm = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    norm = norm.translate(_APOSTROPHES)
    words: list[str] = []
    current: list[str] = []
    minus_at = {m.start() for m in _MINUS.finditer(norm)}
    for n, ch in enumerate(norm):
        kind = "w" if n in minus_at else _word_or_symbol(ch)
        if kind == "w":
            current.append(ch)
            continue
        if not kind:
            continue
        if current:
            words.append("".join(current))
            current = []
        if kind == "s":
            words.append(ch)
    if current:
        words.append("".join(current))
    return words


@lru_cache(maxsize=8192)  # each write compares its fact with every Brain fact of its key
def same_form(text: str) -> str:
    """The form in which two writings of one value are equal: :func:`_tokens` joined by
    single spaces.

    ``same_form("“I drink green TEA every morning.”") == "i drink green tea every
    morning"``. Case, spacing, quotes, apostrophes, dashes, clause punctuation and the
    Unicode form (NFC/NFD/NFKC) do not count; words, digits, accents and symbols do
    (``C`` ≠ ``C++`` ≠ ``C#``, ``3.5`` ≠ ``35``, ``-5`` ≠ ``5``, ``café`` ≠ ``cafe``).
    Idempotent: ``same_form(same_form(t)) == same_form(t)``.
    """
    return " ".join(_tokens(text))


def same_text(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one value written two ways (:func:`same_form`)."""
    return same_form(a) == same_form(b)


def _content_tokens(text: str) -> list[str]:
    """:func:`_tokens` accent-folded, without function words and words naming the user."""
    words = (fold(word) for word in _tokens(text))
    return [w for w in words if w and w not in FUNCTION_WORDS and w not in _SUBJECT_WORDS]


def content_words(text: str) -> frozenset[str]:
    """The words of ``text`` that say what it is about, accent-folded and case folded.

    Function words of English, Polish, Spanish and Ukrainian
    (:data:`kronika.core.keywords.FUNCTION_WORDS`) and the words naming the user
    ("user", "użytkownik", "usuario", "користувач") are left out:
    ``content_words("The user's name is Ana.") == {"name", "ana"}``.
    """
    return frozenset(_content_tokens(text))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity ``|a ∩ b| / |a ∪ b|`` of two word sets (0.0 when both are empty).

    At 0.8 two facts share at least four of every five distinct words: the same words,
    one word added to four or more, or one word changed among nine or more.
    """
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def fact_words(item: MemoryItem) -> frozenset[str]:
    """:func:`content_words` of a fact's key and value (the placeholder key ``note`` of
    a plain "remember …" says nothing and is left out)."""
    value = item.value if item.value is not None else item.content
    key = item.key if item.key and normalize_key(item.key) != _NOTE_KEY else ""
    return content_words(f"{key} {value}")


def _key_form(key: str) -> str:
    return " ".join(_content_tokens(key))


def _names(words: str) -> list[str]:
    return [_key_form(name.replace("_", " ")) for name in words.split()]


_CONCEPTS: dict[str, str] = {
    form: concept for concept, names in phrases.KEY_NAMES.items() for form in _names(names) if form
}
_FAVOURITE_MARKS = frozenset(_names(phrases.FAVOURITE_MARKS))
_FAVOURITE_THINGS: dict[str, str] = {
    form: thing
    for thing, names in phrases.FAVOURITE_WORDS.items()
    for form in _names(names)
    if form
}


@lru_cache(maxsize=4096)  # asked for every key of the Brain and archive on each write
def key_concept(key: str) -> str | None:
    """The concept a key names, as the rule extractor's key for it, or None.

    ``key_concept("nombre") == key_concept("User name") == "name"``,
    ``key_concept("miasto") == "location"``, ``key_concept("color favorito") ==
    "favourite_color"``. The key's content words (:func:`content_words`, in order) are
    looked up among the names of :data:`kronika.core.rule_phrases.KEY_NAMES`; a key of a
    "favourite" word and a thing of :data:`~kronika.core.rule_phrases.FAVOURITE_WORDS`
    is ``favourite_<thing>``.
    """
    form = _key_form(key)
    if not form:
        return None
    if form in _CONCEPTS:
        return _CONCEPTS[form]
    words = form.split()
    for mark_at in (0, len(words) - 1):
        if len(words) > 1 and words[mark_at] in _FAVOURITE_MARKS:
            rest = " ".join(words[1:] if mark_at == 0 else words[:-1])
            if rest in _FAVOURITE_THINGS:
                return f"favourite_{_FAVOURITE_THINGS[rest]}"
    return None


# ---------------------------------------------------------------- the decision
@dataclass(frozen=True, slots=True)
class Refresh:
    """The fact is already known: refresh its ``updated_at`` only."""

    fact: MemoryItem


@dataclass(frozen=True, slots=True)
class Replace:
    """``new`` takes the place of current fact ``old`` (which becomes history)."""

    old: MemoryItem
    new: MemoryItem


@dataclass(frozen=True, slots=True)
class Add:
    """A new fact."""

    item: MemoryItem


Placement = Refresh | Replace | Add


def place_fact(
    item: MemoryItem,
    brain: Sequence[MemoryItem],
    archive: Sequence[MemoryItem] = (),
    *,
    near: float = 0.8,
) -> Placement:
    """Where ``item`` goes among the current ``brain`` and ``archive`` facts.

    The rules, in order, are the module docstring's: same text under the same key →
    :class:`Refresh`; an extracted key of a concept already in use → that key; an
    extracted near duplicate (:func:`overlap` of :func:`fact_words` ≥ ``near``) of a Brain
    fact → :class:`Refresh` or :class:`Replace`; a new value of a single-valued key →
    :class:`Replace`; else :class:`Add`.
    """
    facts = [*brain, *archive]
    extracted = item.source is Source.AUTO
    if extracted and item.key:
        item = _with_concept_key(item, facts)
    wanted = normalize_key(item.key) if item.key else None
    value = item.value if item.value is not None else item.content
    for fact in facts:
        if _key_of(fact) == wanted and same_text(fact.value or fact.content, value):
            return Refresh(fact)
    if extracted and (twin := _near_duplicate(item, brain, near)) is not None:
        if twin.source is Source.EXPLICIT or fact_words(item) <= fact_words(twin):
            return Refresh(twin)
        return Replace(twin, _under_key_of(twin, item))
    if wanted is not None and not item.multi:
        for fact in facts:
            if _key_of(fact) == wanted and not fact.multi:
                return Replace(fact, replace(item, section=fact.section))
    return Add(item)


def _key_of(fact: MemoryItem) -> str | None:
    return normalize_key(fact.key) if fact.key else None


def key_in_use(key: str, facts: Sequence[MemoryItem]) -> MemoryItem | None:
    """The first of ``facts`` whose key names the concept of ``key`` (:func:`key_concept`),
    when none of them uses ``key`` itself; else None."""
    wanted = normalize_key(key)
    keyed = [fact for fact in facts if fact.key]
    if any(normalize_key(fact.key or "") == wanted for fact in keyed):
        return None
    concept = key_concept(wanted)
    if concept is None:
        return None
    return next((fact for fact in keyed if key_concept(fact.key or "") == concept), None)


def _with_concept_key(item: MemoryItem, facts: Sequence[MemoryItem]) -> MemoryItem:
    """``item`` under the key in use for its concept (:func:`key_in_use`), if any."""
    fact = key_in_use(item.key or "", facts)
    return item if fact is None else _under_key_of(fact, item)


def _under_key_of(fact: MemoryItem, item: MemoryItem) -> MemoryItem:
    """``item`` renamed to ``fact``'s key (and section), its text following."""
    if not fact.key:
        return replace(item, section=fact.section or item.section)
    value = item.value if item.value is not None else item.content
    return replace(
        item,
        key=fact.key,
        content=f"{fact.key}: {value}",
        value=value,
        section=fact.section or item.section,
    )


def _near_duplicate(
    item: MemoryItem, brain: Sequence[MemoryItem], near: float
) -> MemoryItem | None:
    """The Brain fact most like ``item`` at ``near`` or above (the first of equals)."""
    words = fact_words(item)
    concept = key_concept(item.key) if item.key else None
    best: MemoryItem | None = None
    best_score = near
    for fact in brain:
        other = key_concept(fact.key) if fact.key else None
        if concept is not None and other is not None and other != concept:
            continue
        score = overlap(words, fact_words(fact))
        if score >= best_score and (best is None or score > best_score):
            best, best_score = fact, score
    return best


__all__ = [
    "Add",
    "Placement",
    "Refresh",
    "Replace",
    "content_words",
    "fact_words",
    "key_concept",
    "key_in_use",
    "overlap",
    "place_fact",
    "same_form",
    "same_text",
]
