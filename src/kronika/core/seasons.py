"""Seasons a question names: "last spring", "this summer", "in winter", "zeszłej wiosny",
"el verano pasado", "минулої весни", "in the summer of 2023".

Read on accent-folded, casefolded text (:func:`kronika.core.text.fold`), as
:func:`kronika.core.timeexpr.mentioned_period` reads a question. Seasons are the
meteorological ones of the northern hemisphere: spring March to May, summer June to
August, autumn September to November, winter December to February. A winter named by
a year ("winter 2023", "zimą 2023") is the one whose January falls in that year.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from kronika.core.tense import Tense
from kronika.core.text import fold

_TICK = timedelta(microseconds=1)


def _forms(words: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(fold(w).casefold() for w in words.split()))


# Each season's words: English, Polish (every case), Spanish, Ukrainian (every case).
_SEASON_WORDS: tuple[str, ...] = (
    "spring wiosna wiosny wiosnę wiośnie wiosną primavera весна весни весну весні весною",
    "summer lato lata lecie latem verano літо літа літу літі літом",
    "autumn fall jesień jesieni jesienią otoño осінь осені осінню",
    "winter zima zimy zimę zimie zimą invierno зима зими зиму зимі зимою",
)
_SEASON_OF = {word: n for n, words in enumerate(_SEASON_WORDS) for word in _forms(words)}
# Words that are a season on their own, meaning "in that season": Polish instrumental
# ("latem", "zimą"), Ukrainian adverbs ("влітку", "навесні").
_ON_THEIR_OWN = {
    **{w: _SEASON_OF[w] for w in _forms("wiosną latem jesienią zimą весною літом зимою")},
    **{w: n for n, w in enumerate(_forms("навесні влітку восени взимку"))},
}
# Words that need "last", "this" or a preposition: "fall" is a verb, "lata" also means
# years ("dwa lata temu"), so it counts only after a singular "last" or "this".
_NEEDS_MODIFIER = frozenset(_forms("fall lata"))
_SINGULAR_MODIFIERS = frozenset(_forms("zeszłego ubiegłego minionego ostatniego tego"))
_LAST = frozenset(
    _forms(
        "last past previous zeszłej zeszłego zeszłą ubiegłej ubiegłego ubiegłą minionej"
        " minionego ostatniej ostatniego pasado pasada минулої минулого минулу минуле"
    )
)
_THIS = frozenset(_forms("this tej tego tę este esta цієї цього цю це"))
_PREPOSITIONS = frozenset(_forms("in during w we na en durante у в на протягом"))
_ARTICLES = ("the", "el", "la")


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))


_SEASON_RE = re.compile(
    r"\b(?:(?P<mod>" + _alternatives({*_LAST, *_THIS, *_PREPOSITIONS}) + r")\s+)?"
    r"(?:(?:" + "|".join(_ARTICLES) + r")\s+)?"
    r"(?P<season>" + _alternatives({*_SEASON_OF, *_ON_THEIR_OWN}) + r")\b"
    r"(?:\s+(?P<after>pasado|pasada))?"
    r"(?:,?\s+(?:of\s+|de\s+|del\s+)?(?P<year>(?:19|20)\d\d)\b)?"
)


def season_span(season: int, year: int) -> tuple[datetime, datetime]:
    """``(start, end_inclusive)`` of ``season`` (0 spring … 3 winter) of ``year``; a winter
    is the one whose January is in ``year``."""
    if season == 3:
        start = datetime(year - 1, 12, 1, tzinfo=UTC)
        return start, datetime(year, 3, 1, tzinfo=UTC) - _TICK
    start = datetime(year, 3 + 3 * season, 1, tzinfo=UTC)
    return start, datetime(year, 6 + 3 * season, 1, tzinfo=UTC) - _TICK


def _latest(season: int, now: datetime, *, ended: bool) -> tuple[datetime, datetime]:
    """The latest ``season`` begun (or, with ``ended``, over) by ``now``."""
    for year in (now.year + 1, now.year, now.year - 1, now.year - 2):
        start, end = season_span(season, year)
        if (end if ended else start) <= now:
            return start, end
    raise AssertionError("a season of the last two years is always over")  # pragma: no cover


def _either(season: int, now: datetime, tense: Tense | None = None) -> tuple[datetime, datetime]:
    """ "In spring" said in November may be the last spring or the coming one ("we go to
    a wedding in spring"): from the start of the one before to the end of the next,
    or the one under way. Said of the past ("what did I do in spring?"), the latest
    begun (:func:`kronika.core.tense.tense_of`). Said of the future it stays both: what
    a memory holds of the coming spring was written before it, in the one before or
    since ("I signed up for the January half marathon" answers "which race will I run
    in winter?")."""
    start, end = _latest(season, now, ended=False)
    if end >= now or tense == "past":
        return start, end
    return start, season_span(season, end.year + 1)[1]


def _this(season: int, now: datetime) -> tuple[datetime, datetime]:
    """This year's ``season``; for winter, the one around the coming (or this) January."""
    if season == 3 and now.month > 2:
        return season_span(3, now.year + 1)
    return season_span(season, now.year)


Found = tuple[tuple[int, int], tuple[datetime, datetime]]


def season_periods(folded: str, now: datetime, tense: Tense | None = None) -> list[Found]:
    """Where each season named in ``folded`` (folded, casefolded text) is in it (start and
    end of the words), with its ``(start, end_inclusive)`` period. ``now`` is UTC;
    ``tense``: what the text is said of, for a season named on its own (:func:`_either`)."""
    found: list[Found] = []
    for m in _SEASON_RE.finditer(folded):
        word, modifier = m.group("season"), m.group("mod")
        season = _SEASON_OF.get(word, _ON_THEIR_OWN.get(word))
        if season is None:  # pragma: no cover - the pattern only matches known words
            continue
        if word in _NEEDS_MODIFIER and not (
            modifier in _SINGULAR_MODIFIERS or (word == "fall" and modifier is not None)
        ):
            continue
        if m.group("year"):
            found.append((m.span(), season_span(season, int(m.group("year")))))
        elif modifier in _LAST or m.group("after"):
            found.append((m.span(), _latest(season, now, ended=True)))
        elif modifier in _THIS:
            found.append((m.span(), _this(season, now)))
        elif modifier in _PREPOSITIONS or word in _ON_THEIR_OWN:
            found.append((m.span(), _either(season, now, tense)))
    return found
