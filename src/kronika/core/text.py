"""Canonical text of memory items: what gets embedded, hashed, and how keys compare."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator, Sequence

from kronika.core.model import ASSISTANT_SPEAKER, FACT_TYPES, ItemType, MemoryItem

# Letters that carry a diacritic but do not decompose under NFKD, so stripping
# combining marks alone would leave them (Polish ł, Ukrainian ґ, a few others).
_UNDECOMPOSED = str.maketrans(
    {
        "ł": "l",
        "Ł": "L",
        "ґ": "г",
        "Ґ": "Г",
        "đ": "d",
        "Đ": "D",
        "ø": "o",
        "Ø": "O",
        "ħ": "h",
        "Ħ": "H",
    }
)
_COMBINING = re.compile(r"[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# A word is a run of letters and digits; everything else (quotes, operators,
# parentheses, emoji, underscores) separates words, exactly like FTS5's unicode61.
_WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Fold ``text`` for accent-insensitive search: NFKD, drop combining marks, map ł→l, ґ→г….

    The same fold is applied to indexed text and to queries, so ``zolw`` finds
    ``żółw`` and ``иогурт`` finds ``йогурт``; case is left to the FTS5 tokenizer.
    """
    if text.isascii():  # nothing to decompose, map or drop (most indexed text)
        return text
    decomposed = unicodedata.normalize("NFKD", text.translate(_UNDECOMPOSED))
    return _COMBINING.sub("", decomposed)


def folded_words(text: str) -> Iterator[str]:
    """The words of ``text`` in order, accent-folded (:func:`fold`) and casefolded."""
    return (match.group().casefold() for match in _WORD.finditer(fold(text)))


def without_folded(text: str, dropped: frozenset[str] | set[str]) -> str:
    """``text`` without the words whose folded form (:func:`folded_words`) is in
    ``dropped``, the rest as written."""
    kept = _WORD.sub(lambda m: "" if fold(m.group()).casefold() in dropped else m.group(), text)
    return " ".join(kept.split())


def said_alike(text: str) -> str:
    """``text`` as compared when one text is said again: case and spacing aside."""
    return " ".join(text.casefold().split())


def content_hash(text: str) -> str:
    """The first 32 hex digits of sha256(UTF-8 ``text``): the embedding cache key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def key_words(key: str) -> str:
    """A fact key as the words it is made of: ``ulubiony_kolor`` → ``ulubiony kolor``,
    ``dogName`` → ``dog Name``, ``favourite-food`` → ``favourite food``.

    Underscores, hyphens, dots and other separators become spaces and a lower-case
    letter followed by a capital starts a new word, so a key is searched and embedded
    as the words it says.
    """
    spaced = "".join(
        f" {char}" if char.isupper() and n and key[n - 1].islower() else char
        for n, char in enumerate(key)
    )
    return " ".join(_WORD.findall(spaced))


def embedding_text(item: MemoryItem) -> str:
    """The text embedded (and hashed) for ``item``.

    * a message with a speaker: ``"{speaker}: {content}"`` (who said it matters:
      "I love jazz" from the user and from the agent are different memories);
    * a profile fact (the User and Preferences sections: who the user is, what they
      like) with a key: ``"my {key words} is {value}"`` — a statement of the person,
      so ``city: Bristol`` means what "Where do I live now?" asks for, which a bare
      ``city: Bristol`` does not to the embedder (the key and value stay in the
      fact's language; ``my`` and ``is`` are read across languages by a multilingual
      embedder);
    * any other fact with a key: ``"{key words}: {value}"`` (a decision or what is
      being done is no statement of the user's own);
    * anything else: ``content``.

    In both fact forms the key is :func:`key_words` and ``value`` falls back to
    ``content``: the key is part of the meaning, in words.
    """
    if item.type is ItemType.MESSAGE and item.speaker:
        return f"{item.speaker}: {item.content}"
    if item.type in FACT_TYPES and item.key:
        value = item.value if item.value is not None else item.content
        words = key_words(item.key) or item.key
        if item.type is ItemType.PROFILE:
            return f"my {words} is {value}"
        return f"{words}: {value}"
    return item.content


def searchable_content(item: MemoryItem) -> str:
    """What keyword search reads as ``item``'s content: a keyed fact's value (its key is
    a field of its own, :func:`key_words`), anything else its content."""
    if item.type in FACT_TYPES and item.key and item.value is not None:
        return item.value
    return item.content


def embedding_texts(items: Sequence[MemoryItem], *, context_words: int = 0) -> list[str]:
    """The text embedded for each of ``items``, given in file order (one source file).

    Each is :func:`embedding_text`; with ``context_words`` above 0, a conversation turn
    is embedded inside its exchange: the last ``context_words`` words of the turn just
    before it and the first ``context_words`` of the turn just after, when those are
    another person's turns of the same session. "It was Matt Patterson!" then means
    what it answers ("Which band played the birthday concert?"), and a question means
    what it was told. A speaker's own consecutive turns are separate statements (and
    where only one side of a chat was kept, they were not even adjacent), so they do
    not colour each other. Nor do a person's turn and the assistant's
    (:data:`ASSISTANT_SPEAKER`): the assistant's long, generic reply would lend the
    person's words to advice and dilute the person's own. Anything but a message is
    embedded alone.
    """
    texts = [embedding_text(item) for item in items]
    if context_words <= 0:
        return texts
    for n, item in enumerate(items):
        if not _in_exchange(item):
            continue
        before = items[n - 1] if n > 0 else None
        after = items[n + 1] if n + 1 < len(items) else None
        parts = [texts[n]]
        if before is not None and _replies_to(item, before):
            parts.insert(0, " ".join(before.content.split()[-context_words:]))
        if after is not None and _replies_to(after, item):
            parts.append(" ".join(after.content.split()[:context_words]))
        texts[n] = " ".join(parts)
    return texts


def _in_exchange(item: MemoryItem) -> bool:
    """A person's turn in a session (not the assistant's)."""
    return (
        item.type is ItemType.MESSAGE
        and item.provenance.session_id is not None
        and normalize_key(item.speaker or "") != ASSISTANT_SPEAKER
    )


def _replies_to(turn: MemoryItem, other: MemoryItem) -> bool:
    """``turn`` and ``other`` are people's turns of one session by different speakers."""
    return (
        _in_exchange(turn)
        and _in_exchange(other)
        and turn.provenance.session_id == other.provenance.session_id
        and normalize_key(turn.speaker or "") != normalize_key(other.speaker or "")
    )


def normalize_key(key: str) -> str:
    """The comparison form of a fact key: trimmed, inner whitespace runs → one space, casefolded.

    ``"  Favourite   Food "`` and ``"favourite food"`` are the same key; underscores
    and hyphens are kept as written (``favourite_food`` is a different key).
    """
    if key.isprintable() and " " not in key:  # no whitespace at all: nothing to collapse
        return key.casefold()
    return " ".join(key.split()).casefold()


# A sentence runs to its closing mark(s), with any quotes or brackets after them, where
# a space or the end follows ("3.5" goes on), or to the end of a line: "Really?!",
# 'He asked "why?"', "¿Qué tal?", "Як справи?"; full-width marks need no space after.
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?…]+[\"'”’»)\]]*(?=\s|$)|[？！。]+[\"'”’»)\]」』]*|\n|$)")
_CLOSING = "\"'”’»)] \t"


def question_share(text: str) -> float:
    """The share of ``text``'s words that are in sentences ending with a question mark.

    ``"What pet do you have?"`` is 1.0, ``"We've got a pup and a kitty."`` 0.0, and
    ``"Congrats! So proud of you. Do you have any pets?"`` 0.5 (5 of its 10 words
    ask). A sentence asks when a question mark is among its last marks ("Really?!").
    Words are counted as :func:`folded_words` finds them; a text without any is 0.0.
    """
    if "?" not in text and "？" not in text:
        return 0.0
    asked = total = 0
    for match in _SENTENCE.finditer(text):
        sentence = match.group()
        words = len(_WORD.findall(sentence))
        if not words:
            continue
        total += words
        ending = sentence.rstrip(_CLOSING)
        marks = ending[len(ending.rstrip(".!?…？！。")) :]
        if "?" in marks or "？" in marks:
            asked += words
    return asked / total if total else 0.0


def any_case(word: str) -> str:
    """A regular expression for ``word`` in any letter case, with no flag (``[Cc][Oo][Nn]``):
    ECMA-262, the dialect of an OpenAPI document's patterns, has no inline flags."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)
