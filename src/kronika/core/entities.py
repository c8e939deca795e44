"""Entity mentions in free text: explicit ``@Name`` tags plus a proper-noun heuristic.

The heuristic (Latin and Cyrillic scripts alike):

* a capitalised word that does not start a sentence is a name (``met Anna``);
* neighbouring capitalised words separated by one space form one name
  (``New York``, ``Ana María``);
* the first word of a sentence is kept only when the same word also appears
  capitalised mid-sentence elsewhere in the text (so ``Anna went home`` yields
  nothing, but ``Anna went home. I called Anna.`` yields ``Anna``);
* a small stop list (pronouns, articles, greetings, weekdays, months, today /
  yesterday in English, Polish, Spanish and Ukrainian) is never a name.

Names are returned as written (inflected forms such as Polish ``Krakowie`` are not
lemmatised), without ``@``, deduplicated by :func:`normalize_entity` in order of
first appearance. One regex pass plus a short loop per capitalised word keeps it
at a few microseconds per chat turn.
"""

from __future__ import annotations

import re
from functools import lru_cache

# A mention may contain ``.`` and ``-`` inside but not at its end ("@Ana." → "Ana");
# the lookbehind keeps e-mail addresses (``a@b.com``) out. A word starts with a letter
# and runs through letters, digits, apostrophes and hyphens, ending on a letter or digit.
_MENTION = r"(?<!\w)@(?P<mention>\w(?:[\w.\-]*\w)?)"
_WORD_TAIL = r"(?:[\w'’\-]*\w)?"
# Letters of the Latin and Cyrillic blocks that are not capitals: a word starting with
# one is read past in the pattern itself, so the loop below sees only capitalised words
# and mentions (most words are neither). A letter outside these blocks is handed to the
# loop, which asks ``str.isupper`` as before.
_LOWER_BLOCKS = ((0, 0x250), (0x400, 0x530))
_POSSESSIVE = ("'s", "’s")
# Characters that may sit between a sentence boundary and its first word.
_LEAD_IN = frozenset(" \t\"'“”„«»‘’([{-–—*•¿¡>")
_BOUNDARY = frozenset(".!?…:;\n\r")

_STOP_LIST = """
    I I'm I've I'll I'd Im The A An And Or But If So We You He She It They My Our Your
    This That These Those There Here What When Where Why How Who Ok Okay Yes No Hi Hello
    Hey Thanks Thank Please Oh Well Also Then
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday
    January February March April May June July August September October November December
    Today Yesterday Tomorrow
    W Z Ale To Ja Ty On Ona Ono My Wy Oni One Tak Nie Cześć Dzięki Dziękuję
    Poniedziałek Wtorek Środa Czwartek Piątek Sobota Niedziela
    Styczeń Luty Marzec Kwiecień Maj Czerwiec Lipiec Sierpień Wrzesień Październik Listopad
    Grudzień Stycznia Lutego Marca Kwietnia Maja Czerwca Lipca Sierpnia Września
    Października Listopada Grudnia Dzisiaj Dziś Wczoraj Jutro
    El La Los Las Un Una Y O Pero Yo Tú Él Ella Nosotros Ellos Sí Hola Gracias
    Lunes Martes Miércoles Jueves Viernes Sábado Domingo
    Enero Febrero Marzo Abril Mayo Junio Julio Agosto Septiembre Octubre Noviembre Diciembre
    Hoy Ayer Mañana
    Я Ти Він Вона Воно Ми Ви Вони І Й Та А Але Так Ні Привіт Дякую
    Понеділок Вівторок Середа Четвер П'ятниця Пʼятниця Субота Неділя
    Січень Лютий Березень Квітень Травень Червень Липень Серпень Вересень Жовтень Листопад
    Грудень Сьогодні Вчора Завтра
"""
_STOP_WORDS = frozenset(word.casefold() for word in _STOP_LIST.split())


def normalize_entity(name: str) -> str:
    """The comparison key of a name: trimmed, inner whitespace collapsed, casefolded."""
    return " ".join(name.split()).casefold()


def _starts_sentence(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and text[i] in _LEAD_IN:
        i -= 1
    return i < 0 or text[i] in _BOUNDARY


def extract_entities(text: str) -> tuple[str, ...]:
    """Names mentioned in ``text``: ``@mentions`` and capitalised proper nouns (see module).

    The names of a text up to :data:`CACHED_CHARS` long are kept (the last 4,096 such
    texts): a remembered fact's text is read for its names when it is checked, when its
    bullet is written and read back, and again when it moves to the archive."""
    if len(text) <= CACHED_CHARS:
        return _cached(text)
    return _extract(text)


CACHED_CHARS = 2_000


@lru_cache(maxsize=1)
def _scanner() -> re.Pattern[str]:
    """The pattern :func:`_extract` walks a text with: each match ends on a mention or
    on a word that may be capitalised (its group ``word``), after every other word,
    digit and sign since the last one; the last match ends the text. It finds the words
    one pass over every word (letter first, then ``[\\w'’-]*\\w``) would: what it
    reads past is never given back, so no match starts inside a word ("iPhone"), and
    what stops it is always a mention, a word or the end, so no match fails."""
    letter = re.compile(r"[^\W\d_]")
    lower = "".join(
        re.escape(chr(c))
        for start, stop in _LOWER_BLOCKS
        for c in range(start, stop)
        if letter.match(chr(c)) and not chr(c).isupper()
    )
    # what no mention or capital starts, read past whole and never given back: words
    # of a small first letter, signs and spaces, digits, an "@" no mention begins with
    passed = rf"(?>[{lower}]{_WORD_TAIL})|[^\w@]+|[\d_]+|@(?!\w)|(?<=\w)@"
    word = rf"(?P<word>(?![{lower}])[^\W\d_]{_WORD_TAIL})"
    return re.compile(rf"(?:{passed})*+(?:{_MENTION}|{word}|\Z)")


def _extract(text: str) -> tuple[str, ...]:
    if "@" not in text and text.islower():
        return ()
    # Each run: (words, first word starts a sentence); mentions are single-word runs
    # flagged as not sentence-initial so they are always kept. A word that is not
    # capitalised ends the run before it; so does anything between two words but one
    # space (the check of ``last_end`` below), which is why the words the scanner reads
    # past need no look.
    runs: list[tuple[list[str], bool]] = []
    mid_sentence: set[str] = set()
    current: list[str] | None = None
    last_end = -2
    for match in _scanner().finditer(text):
        mention, word = match.group("mention", "word")
        if mention is not None:
            runs.append(([mention], False))
            current = None
            continue
        if word is None:  # the end of the text
            break
        if not word[0].isupper():
            current = None
            continue
        start, end = match.span("word")
        possessive = word.endswith(_POSSESSIVE)
        if possessive:
            word = word[:-2]
        folded = word.casefold()
        if folded in _STOP_WORDS:
            current = None
            last_end = end
            continue
        initial = _starts_sentence(text, start)
        if not initial:
            mid_sentence.add(folded)
        if current is not None and start == last_end + 1 and text[last_end] == " ":
            current.append(word)
        else:
            current = [word]
            runs.append((current, initial))
        last_end = end
        # a possessive ends the name: "Anna's Car" is not one name
        if possessive:
            current = None

    found: dict[str, str] = {}
    for words, initial in runs:
        if initial and words[0].casefold() not in mid_sentence:
            words = words[1:]
        if words:
            name = " ".join(words)
            found.setdefault(normalize_entity(name), name)
    return tuple(found.values())


_cached = lru_cache(maxsize=4096)(_extract)
