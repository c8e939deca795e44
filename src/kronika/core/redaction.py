"""Finding forgotten words in written text and replacing them with a visible marker.

A *phrase* (a forgotten value, or the sentence it came from) matches wherever its words
appear in the same order, case-insensitively, with any run of whitespace (line breaks
included) between them, and never inside a longer word: forgetting ``tea`` redacts
"Tea" and "tea," but not "steak" or "teapot". Phrases shorter than
:data:`MIN_PHRASE_CHARS` are not looked for (two letters match too much unrelated text).

In a Markdown document the structure is kept: frontmatter field names, turn headers
(``### [id] speaker · time``) and metadata comments (``<!-- … -->``) are never changed;
only the text between them is.
"""

from __future__ import annotations

import bisect
import functools
import importlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from re import Match

MARKER = "[forgotten]"
MIN_PHRASE_CHARS = 3

_TURN_HEADER = re.compile(r"^### \[[^\]]+\] ")
_FIELD = re.compile(r"^(?P<name>[A-Za-z_][\w-]*:[ \t]*)(?P<value>.*)$", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->")


def phrase_pattern(phrases: Iterable[str]) -> Phrases | None:
    """Every phrase, found as one alternation of them all would find it (longest first,
    so a sentence wins over a word in it); ``None`` when no phrase is long enough to
    look for.

    A phrase of words w1 … wn is ``w1\\s+w2 … \\s+wn`` (each word escaped), fenced by
    ``(?<!\\w)`` / ``(?!\\w)`` where it starts or ends with a word character.
    """
    wanted = {" ".join(p.split()) for p in phrases}
    wanted = {p for p in wanted if len(p) >= MIN_PHRASE_CHARS and p != MARKER}
    if not wanted:
        return None
    return Phrases(sorted(wanted, key=lambda p: (-len(p), p)))


def phrase_regex(phrase: str) -> str:
    """The regular expression of one phrase (see :func:`phrase_pattern`)."""
    body = r"\s+".join(re.escape(w) for w in phrase.split())
    head = r"(?<!\w)" if re.match(r"\w", phrase) else ""
    tail = r"(?!\w)" if re.search(r"\w$", phrase) else ""
    return f"{head}{body}{tail}"


_WORD = re.compile(r"\w+")

WORDS_FIRST = 256
"""A text at least this long (characters) is first checked for the phrases' words
(:meth:`Phrases.possible`): most texts a forget scans hold none of them. Taking a
text's words costs about a third of walking it word by word from 256 characters on
(8 against 22 µs; 65 against 215 at 2,400), so a text ruled out is passed three
times faster, and one that is not costs a third more. With few words to look for
(:data:`WORDS_LOOKED_UP`) every text is checked first, however short: each word is
looked up in the text lower-cased, a microsecond for a turn's text, where walking it
word by word takes about twenty."""

BLOCK_TEXTS = 64
"""Texts (audit lines) :meth:`Phrases.which_may_match` looks at together: a block of
64 short lines is ruled out by one look at its words, and one that is not costs 64
lines walked."""

_tolower: Callable[[int], int] | None
_EXTRA_CASES: Mapping[int, tuple[int, ...]]
try:  # how Python's own ``re`` folds case under IGNORECASE: simple lower case, plus the
    # letters it equates besides (ı with i, ſ with s, ς with σ, ϐ with β …)
    _tolower = importlib.import_module("_sre").unicode_tolower
    _EXTRA_CASES = importlib.import_module("re._casefix")._EXTRA_CASES
except (ImportError, AttributeError):  # another Python: phrases are one alternation
    _tolower, _EXTRA_CASES = None, {}


def _representatives(extra: Mapping[int, tuple[int, ...]]) -> dict[int, int]:
    """Each lower-case letter ``re`` equates with others → the smallest of its group."""
    rep = {lo: min((lo, *more)) for lo, more in extra.items()}
    changed = True
    while changed:  # groups are closed under the mapping already; this makes sure
        changed = False
        for lo, more in extra.items():
            low = min(rep.get(k, k) for k in (lo, *more))
            for k in (lo, *more):
                if rep.get(k, k) != low:
                    rep[k], changed = low, True
    return rep


_REPRESENTATIVE = _representatives(_EXTRA_CASES)

_UNFOLDED = "".join(chr(c) for c, rep in sorted(_REPRESENTATIVE.items()) if rep != c) + "\u0307"
"""The characters of a lower-cased text (``str.lower``) that ``re`` folds to another:
the letters it equates with a smaller one (σ with ς, ſ with s …), and the dot İ leaves
after its i. A lower-cased text without them is the text folded as :func:`_fold` folds
it, character for character (``str.lower`` is simple lower case but for İ and Σ).
Each is looked for on its own (``in``): instant where the text's characters are all
narrower than it (Latin-1 text), and together half a scan for a character class
(Ukrainian text)."""

WORDS_LOOKED_UP = 32
"""Words of the phrases (distinct, folded) up to which :meth:`Phrases.possible` looks
each up in the folded text (``in``, at C speed) instead of taking the text's set of
words: a look-up costs about 1/50 of taking the words of a long text (2.7 against 148 ms
for 4 MB of ASCII), so up to 32 words it is the cheaper way by far."""


def _latin1(text: str) -> bytes | None:
    """``text`` in Latin-1, or None when it holds another character."""
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return None


def _folded(text: str) -> str | bytes | None:
    """``text`` folded as :func:`_fold` folds it, character for character, where that is
    quick: ASCII lower-cased; Latin-1 text as its bytes, each folded by a table (every
    Latin-1 character folds to one; ``str.lower`` of such text is ten times slower);
    other text lower-cased unless it holds a character of :data:`_UNFOLDED`. None when
    it does: its words are to be taken one by one."""
    if text.isascii():
        return text.lower()
    latin = _latin1(text)
    if latin is not None:
        return latin.translate(_LATIN1_FOLDED)
    low = text.lower()
    return None if any(char in low for char in _UNFOLDED) else low


@functools.lru_cache(maxsize=65_536)
def _fold(word: str) -> str:
    """``word`` case-folded as ``re`` compares letters: two words that IGNORECASE
    matches fold alike (the converse need not hold; matches are checked by ``re``)."""
    if word.isascii():  # i, s: the smallest of their groups, so ASCII lower case is it
        return word.lower()
    assert _tolower is not None
    out = []
    for char in word:
        low = _tolower(ord(char))
        out.append(chr(_REPRESENTATIVE.get(low, low)))
    return "".join(out)


_LATIN1_FOLDED = (
    bytes(ord(_fold(chr(code))) for code in range(256))
    if _tolower is not None
    else bytes(range(256))  # unused: without the folding, no text is ruled out
)
"""Each Latin-1 character folded (:func:`_fold`): a Latin-1 character, the same as its
``str.lower`` (``tests/core`` checks both)."""


class Phrases:
    """Phrases found in one pass over a text, whatever their number.

    One regular expression alternating N phrases tries all N at every place of the
    text, so forgetting a thousand items over a long transcript took minutes. Here a
    phrase that starts with a word character is tried only where a word starts that
    folds as its first word does (:func:`_fold`; a phrase cannot start inside a word:
    it is fenced), longest first; the rare phrases that start otherwise share one
    alternation. The matches are the ones the single alternation, longest first,
    finds: leftmost, non-overlapping, case-insensitive (``tests/core`` compares them).
    """

    __slots__ = ("_by_word", "_compiled", "_scan", "_one", "_needs", "_words", "_latin", "_few")

    def __init__(self, phrases: Sequence[str]) -> None:
        """``phrases``: normalised, longest first."""
        by_word: dict[str, list[str]] = {}
        others: list[str] = []
        for phrase in phrases:
            first = _WORD.match(phrase)
            if first is None:
                others.append(phrase_regex(phrase))
                continue
            by_word.setdefault(_fold(first.group()), []).append(phrase_regex(phrase))
        self._by_word = by_word
        self._compiled: dict[str, list[re.Pattern[str]]] = {}  # on first use: most never are
        other = f"|(?P<other>{'|'.join(others)})" if others else ""
        self._scan = re.compile(rf"\w+{other}", re.IGNORECASE)
        self._one: re.Pattern[str] | None = None
        # the words each phrase holds, folded: a text lacking one of every phrase's
        # words holds no match (None: a phrase without words, or no folding to use)
        needs = [frozenset(_fold(w) for w in _WORD.findall(p)) for p in phrases]
        usable = _tolower is not None and all(needs)
        self._needs: list[frozenset[str]] | None = needs if usable else None
        self._words = frozenset[str]().union(*needs)
        self._latin = {word: _latin1(word) for word in self._words}  # None: not Latin-1
        # few words: each looked up in a text folded at C speed, a look at any text's
        # words costs less than walking it (:meth:`possible`)
        self._few = self._needs is not None and len(self._words) <= WORDS_LOOKED_UP
        if _tolower is None:
            every = [phrase_regex(p) for p in phrases]
            self._one = re.compile("|".join(every), re.IGNORECASE)

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None) -> Iterator[Match[str]]:
        """The matches in ``text[pos:endpos]``, left to right (as ``re``'s ``finditer``)."""
        end = len(text) if endpos is None else min(endpos, len(text))
        if (self._few or end - pos >= WORDS_FIRST) and not self.possible(text, pos, end):
            return
        if self._one is not None:
            yield from self._one.finditer(text, pos, end)
            return
        at = pos
        while at < end:
            scanned = self._scan.search(text, at, end)
            if scanned is None:
                return
            if scanned.lastgroup == "other":
                yield scanned
                at = scanned.end()
                continue
            at = scanned.end()  # no phrase starts inside this word
            for pattern in self._candidates(_fold(scanned.group())):
                found = pattern.match(text, scanned.start(), end)
                if found is not None:
                    yield found
                    at = found.end()
                    break

    def possible(self, text: str, pos: int = 0, endpos: int | None = None) -> bool:
        """False when no phrase can match in ``text[pos:endpos]``: each phrase has a
        word the text lacks. A match holds every word of its phrase whole (fenced by
        other characters, case-folded alike), so a text's set of words, taken at C
        speed, rules out a phrase without walking the text word by word; with few
        words (:data:`WORDS_LOOKED_UP`), each is looked up in the text folded instead,
        where that is quick (:func:`_folded`): a word of a match is in it. True says
        nothing: the phrase may still not be there."""
        if self._needs is None:
            return True
        part = text[pos:endpos]
        if len(self._words) <= WORDS_LOOKED_UP:
            folded = _folded(part)
            if folded is not None:
                return self._held_in(folded, self._needs)
        if part.isascii():  # ASCII folds as lower case, positions unchanged
            words = set(_WORD.findall(part.lower()))
        else:
            words = {_fold(w) for w in set(_WORD.findall(part))}
        return any(need <= words for need in self._needs)

    def _held_in(self, folded: str | bytes, needs: list[frozenset[str]]) -> bool:
        """Whether every word of some phrase is in ``folded`` (:func:`_folded`)."""
        found: dict[str, bool] = {}
        for need in needs:
            for word in need:
                if word not in found:
                    if isinstance(folded, bytes):
                        needle = self._latin[word]
                        found[word] = needle is not None and needle in folded
                    else:
                        found[word] = word in folded
                if not found[word]:
                    break
            else:
                return True
        return False

    def which_may_match(
        self, texts: Sequence[str], read: Callable[[str], str] | None = None
    ) -> Iterator[int]:
        """The positions in ``texts`` of the texts that may hold a match, in order: the
        texts are looked at :data:`BLOCK_TEXTS` at a time, and a block whose words
        (of ``read`` of the block joined by line breaks, when given) rule out every
        phrase (:meth:`possible`) is passed over whole. A text's words are among its
        block's, so no text that holds a match is passed over; a long audit trail is
        looked at once at C speed instead of parsed and walked line by line."""
        for start in range(0, len(texts), BLOCK_TEXTS):
            block = "\n".join(texts[start : start + BLOCK_TEXTS])
            if self.possible(block if read is None else read(block)):
                yield from range(start, min(start + BLOCK_TEXTS, len(texts)))

    def _candidates(self, word: str) -> list[re.Pattern[str]]:
        """The phrases that start with ``word`` (folded), longest first."""
        found = self._compiled.get(word)
        if found is None:
            found = [re.compile(r, re.IGNORECASE) for r in self._by_word.get(word, ())]
            self._compiled[word] = found
        return found

    def search(self, text: str) -> Match[str] | None:
        return next(self.finditer(text), None)

    def findall(self, text: str) -> list[str]:
        return [m.group() for m in self.finditer(text)]

    def subn(self, replacement: str, text: str) -> tuple[str, int]:
        """``text`` with every match replaced by ``replacement`` (taken literally)."""
        out: list[str] = []
        at = count = 0
        for m in self.finditer(text):
            out.append(text[at : m.start()])
            out.append(replacement)
            at = m.end()
            count += 1
        if not count:
            return text, 0
        out.append(text[at:])
        return "".join(out), count

    def sub(self, replacement: str, text: str) -> str:
        return self.subn(replacement, text)[0]


def redact(text: str, pattern: Phrases) -> tuple[str, int]:
    """``text`` with every match replaced by :data:`MARKER`, and how many there were."""
    return pattern.subn(MARKER, text)


def mentions(text: str, pattern: Phrases) -> bool:
    return pattern.search(text) is not None


@dataclass(frozen=True, slots=True)
class Redacted:
    """A redacted document: its new text, how many matches were replaced and how many of
    its original lines they touched."""

    text: str
    matches: int
    lines: int


def redact_document(text: str, pattern: Phrases) -> Redacted:
    """Redact a Markdown document, keeping its frontmatter names, turn headers and
    metadata comments (see the module docstring)."""
    if not pattern.possible(text):  # one look at its words, not one per block
        return Redacted(text, 0, 0)
    lines = text.split("\n")
    kept: list[str] = []
    block: list[str] = []
    matches = touched = 0

    def flush() -> None:
        nonlocal matches, touched
        if block:
            new, found, hit = _redact_block("\n".join(block), pattern)
            kept.extend(new.split("\n"))
            matches += found
            touched += hit
            block.clear()

    closing = [n for n, line in enumerate(lines) if n and line.rstrip("\r") == "---"]
    header_end = closing[0] if lines and lines[0].rstrip("\r") == "---" and closing else 0
    for number, line in enumerate(lines):
        if number <= header_end and header_end > 0:  # the frontmatter: values only
            if number == header_end:
                kept.append(line)
                continue
            field = _FIELD.match(line)
            if number == 0:
                kept.append(line)
                continue
            name, value = (field["name"], field["value"]) if field else ("", line)
            value, found, hit = _redact_block(value, pattern)
            kept.append(name + value)
            matches += found
            touched += hit
            continue
        if _TURN_HEADER.match(line):
            flush()
            kept.append(line)
            continue
        block.append(line)
    flush()
    return Redacted("\n".join(kept), matches, touched)


def _redact_block(text: str, pattern: Phrases) -> tuple[str, int, int]:
    """Redact ``text`` outside its ``<!-- … -->`` comments: (new text, matches, lines hit)."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    hit: set[int] = set()
    found = 0
    out: list[str] = []
    at = 0
    for piece_start, piece_end, is_comment in _pieces(text):
        if is_comment:
            out.append(text[piece_start:piece_end])
            at = piece_end
            continue
        for m in pattern.finditer(text, piece_start, piece_end):
            found += 1
            first = bisect.bisect_right(starts, m.start()) - 1
            last = bisect.bisect_right(starts, max(m.start(), m.end() - 1)) - 1
            hit.update(range(first, last + 1))
            out.append(text[at : m.start()])
            out.append(MARKER)
            at = m.end()
        out.append(text[at:piece_end])
        at = piece_end
    if not found:
        return text, 0, 0
    return "".join(out), found, len(hit)


def _pieces(text: str) -> list[tuple[int, int, bool]]:
    """``text`` cut into (start, end, is_comment) runs."""
    pieces: list[tuple[int, int, bool]] = []
    at = 0
    for m in _COMMENT.finditer(text):
        if m.start() > at:
            pieces.append((at, m.start(), False))
        pieces.append((m.start(), m.end(), True))
        at = m.end()
    if at < len(text) or not pieces:
        pieces.append((at, len(text), False))
    return pieces
