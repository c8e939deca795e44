"""The values a keyed fact had, read against a question: "where did she live in June?"
(the value true then) and "where did she work before Google?" (the value before the one
that names Google).

Pure functions over :class:`~kronika.core.model.MemoryItem` versions of one key, oldest
first as ``Memory.history`` gives them; :mod:`kronika.engine.then` brings them into recall.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from kronika.core.keywords import FUNCTION_WORDS
from kronika.core.model import MemoryItem
from kronika.core.text import fold, folded_words

# "before X" / "after X" in English, Polish, Spanish and Ukrainian (folded, casefolded).
# Ukrainian "до" also means "to" ("переїхала до Варшави", moved to Warsaw): after a
# verb of going it is not read as "before".
_DIRECTION = re.compile(
    r"(?:^|(?<=\W))(?P<d>before|after|przed|zanim|po|antes\s+de\s+que|antes\s+del?"
    r"|despues\s+de\s+que|despues\s+del?|перед\s+тим\s+як|перед|до\s+того\s+як|до|після\s+того\s+як"
    r"|після)\s+(?P<x>[^.,;:!?¿¡()\"]+)"
)
_AFTER = ("after", "po", "despues", "після")
_GOING = re.compile(
    r"(?:"
    + "|".join(fold("їх їзд їжд ход йшл йду йде ішл пішл прийш летіл летів повер прибу").split())
    + r")\w*\s*$"
)
# words of the clause after "before" that tell of a move (of home): "before I moved",
# "przed przeprowadzką", "antes de mudarme", "до переїзду"
_MOVING_WORDS = frozenset(
    folded_words(
        "moved move moving relocated relocating relocation"
        " przeprowadzila przeprowadzil przeprowadzilam przeprowadzilem przeprowadzilismy"
        " przeprowadzilysmy przeprowadzka przeprowadzce przeprowadzki przeprowadzeniem"
        " przeprowadzeniu przeniosla przeniosl przenieslismy"
        " mudarse mudarme mudarnos mudarte mudo mude mudamos mudaste mudara mudaras mudanza"
        " переїхала переїхав переїхали переїзду переїзд переїздом переїзді переїхати"
    )
)
# words of the clause after "before" that tell of the change, not of the value
_CHANGE_WORDS = _MOVING_WORDS | frozenset(
    folded_words(
        "started start joined join left leave got became switched"
        " zaczela zaczal empezar empezo почала почав"
    )
)


@dataclass(frozen=True, slots=True)
class OrderPhrase:
    """ "before X" (``after`` False) or "after X": the content words of X, folded;
    ``during``: "when X" / "while X" instead (``after`` is then False); ``moved``: X
    tells of a move of home ("before I moved", "przed przeprowadzką"), so when its
    words name no value, the latest move is the moment meant."""

    after: bool
    words: tuple[str, ...]
    during: bool = False
    moved: bool = False
    previous: bool = False
    """ "before" with nothing after it ("Where did I live before?", "wcześniej",
    "antes", "раніше"): the value before the key's current one."""


def order_phrases(question: str) -> list[OrderPhrase]:
    """The "before X" / "after X" phrases of ``question`` with content words in X:
    "before Google", "before she moved to Warsaw", "przed Warszawą", "antes de Madrid",
    "до Варшави", "después de Google", "після Львова"; or telling of a move alone
    ("before I moved", "antes de mudarme", "до переїзду"). "Before bed" is one too: whether
    it names a value is for :func:`matching_version` to say."""
    folded = fold(question).casefold().replace(",", " ")
    found: list[OrderPhrase] = []
    for m in _DIRECTION.finditer(folded):
        word = " ".join(m.group("d").split())
        if word == "до" and _GOING.search(folded[: m.start("d")]):
            continue
        words = _clause_words(m.group("x"))
        moved = any(w in _MOVING_WORDS for w in folded_words(m.group("x")))
        if words or moved:
            found.append(OrderPhrase(word.startswith(_AFTER), words, moved=moved))
    return found


# "before" alone: the word at the end of its clause, or one that means "previously"
_END = r"(?=\s*(?:$|[^\w\s]))"
_PREVIOUSLY = re.compile(
    r"(?:^|(?<=\W))(?:previously|formerly|earlier|used\s+to|use\s+to|before"
    + _END
    + r"|wczesniej|przedtem|poprzednio|dawniej|antes"
    + _END
    + r"|anteriormente|solia|solias|soliamos|solian|раніше|колись|до\s+того"
    + _END
    + r"|перед\s+тим"
    + _END
    + r"|до\s+цього)(?!\w)"
)


def previous_phrases(question: str) -> list[OrderPhrase]:
    """ "before" that names nothing ("Where did I live before?", "Where did I use to
    work?", "Gdzie mieszkałam wcześniej?", "¿Dónde vivía antes?", "Де я жила раніше?"):
    one phrase (``previous``) asking for the value before the current one of the keys
    the question names, or none."""
    folded = fold(question).casefold()
    return [OrderPhrase(False, (), previous=True)] if _PREVIOUSLY.search(folded) else []


def move_words(question: str) -> frozenset[str]:
    """The words of ``question`` (folded) that tell of a move in a "before X" / "after
    X" phrase ("before I *moved*", "zanim się *przeprowadziłam*"): they name a moment,
    not what is asked."""
    if not any(p.moved for p in order_phrases(question)):
        return frozenset()
    return frozenset(w for w in folded_words(question) if w in _MOVING_WORDS)


_DURING = re.compile(
    r"(?<=\w)\W+(?P<d>when|while|whilst|kiedy|gdy|podczas\s+gdy|cuando|mientras|коли|поки)"
    r"\s+(?P<x>[^.,;:!?¿¡()\"]+)"
)
"""A clause of the question "when X" / "while X" after a word of its own ("Where did I
live when I worked at Monzo?"): a "when" that opens the question asks for a time."""


def during_phrases(question: str) -> list[OrderPhrase]:
    """The "when X" / "while X" clauses of ``question`` with content words in X: "when I
    worked at Monzo", "kiedy pracowałam w Monzo", "cuando trabajaba en Monzo", "коли я
    працювала в Monzo". Whether X names a value is for :func:`matching_version` to say."""
    folded = fold(question).casefold().replace(",", " ")
    found: list[OrderPhrase] = []
    for m in _DURING.finditer(folded):
        words = _clause_words(m.group("x"))
        if words:
            found.append(OrderPhrase(after=False, words=words, during=True))
    return found


def _clause_words(clause: str) -> tuple[str, ...]:
    """The folded words of the clause after "before" / "when" that may name a value:
    function words, verbs of change ("moved", "przeprowadzka") and numbers left out."""
    return tuple(
        w
        for w in folded_words(clause)
        if w not in FUNCTION_WORDS and w not in _CHANGE_WORDS and not w.isdigit()
    )


def same_word(a: str, b: str) -> bool:
    """Whether two folded words are one word in different forms: equal, or sharing a
    beginning of at least four letters that leaves at most two letters of the shorter
    ("Warszawa" / "Warszawą" / "Warszawy", "Google" / "Google's", "Warsaw" / "Warszawa")."""
    if a == b:
        return True
    shortest = min(len(a), len(b))
    if shortest < 4:
        return False
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= max(4, shortest - 2)


def value_words(item: MemoryItem) -> set[str]:
    """The folded content words of a fact's value (its text when it has none)."""
    return {w for w in folded_words(item.value or item.content) if w not in FUNCTION_WORDS}


def matching_version(phrase: OrderPhrase, versions: Sequence[MemoryItem]) -> int | None:
    """The place in ``versions`` (one key's, oldest first) of the version that ``phrase``
    names, or ``None``. A version is named by a word of its value that the other
    versions' values do not share ("Google" names "works at Google", "works" names
    none); with "before", the earliest such version, with "after", the latest."""
    if len(versions) < 2:
        return None
    words = [value_words(v) for v in versions]
    named: list[int] = []
    for place, own in enumerate(words):
        others = set().union(*(w for n, w in enumerate(words) if n != place))
        distinctive = [w for w in own if not any(same_word(w, o) for o in others)]
        if any(same_word(x, w) for x in phrase.words for w in distinctive):
            named.append(place)
    if not named:
        return None
    return max(named) if phrase.after else min(named)


def true_during(item: MemoryItem, start: datetime, end: datetime) -> bool:
    """Whether ``item`` was the value of its key at some moment of ``[start, end]``:
    valid from ``valid_from`` (else its creation) until ``valid_to`` (excluded)."""
    since = item.valid_from or item.created_at
    return since <= end and (item.valid_to is None or item.valid_to > start)


def validity(item: MemoryItem) -> str:
    """``2025-01-03 → 2025-07-02`` (``→ now`` for a current value)."""
    since = (item.valid_from or item.created_at).date().isoformat()
    until = item.valid_to.date().isoformat() if item.valid_to else "now"
    return f"{since} → {until}"
