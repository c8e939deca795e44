"""Time expressions for recall filters (``--since 30d``) and importers' loose dates.

Accepted by :func:`parse_since` / :func:`parse_until` (case-insensitive):

* relative durations ``<n><unit>`` counted back from ``now``: ``90m`` minutes,
  ``12h`` hours, ``30d`` days, ``2w`` weeks, ``6mo`` months (calendar), ``1y`` years;
* calendar periods: ``2025`` (a year), ``2025-11`` (a month), ``2025-11-01`` (a day);
* full ISO datetimes ``2025-11-01T10:30[:00][+02:00]`` (naive ones are UTC);
* words ``now``, ``today``, ``yesterday``, ``last week``, ``last month``.

``since`` takes the START of a period and ``until`` its END (the last microsecond
of that day, month or year), so ``--since 2025-11 --until 2025-11`` covers all of
November inclusive. ``last week`` is the previous calendar week (Monday to
Sunday) and ``last month`` the previous calendar month, so ``--since "last week"``
starts on last week's Monday. Every result is timezone-aware UTC.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import NamedTuple

from kronika.core.seasons import season_periods
from kronika.core.tense import tense_of
from kronika.core.text import fold, folded_words
from kronika.errors import InvalidQuery

ACCEPTED_FORMS = (
    "relative durations like 90m, 12h, 30d, 2w, 6mo, 1y; "
    "dates 2025-11-01, months 2025-11, years 2025; ISO datetimes 2025-11-01T10:30; "
    "words now, today, yesterday, last week, last month"
)

_RELATIVE = re.compile(r"^(\d+)\s*(mo|min|m|h|d|w|y)$")
_YEAR = re.compile(r"^(\d{4})$")
_MONTH = re.compile(r"^(\d{4})-(\d{1,2})$")

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
# LoCoMo: "1:56 pm on 8 May, 2023"
_LOCOMO = re.compile(
    r"^(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})$", re.IGNORECASE
)
# LongMemEval: "2023/05/30 (Tue) 23:40"
_SLASHED = re.compile(
    r"^(\d{4})/(\d{1,2})/(\d{1,2})(?:\s*\([a-z]+\))?(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?)?$",
    re.IGNORECASE,
)


def _utc(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def _add_months(dt: datetime, months: int) -> datetime:
    """Calendar month arithmetic, clamping the day (31 March − 1 month = 28/29 February)."""
    index = dt.year * 12 + (dt.month - 1) + months
    year, month = divmod(index, 12)
    month += 1
    day = min(dt.day, _days_in_month(year, month))
    return dt.replace(year=year, month=month, day=day)


def _days_in_month(year: int, month: int) -> int:
    nxt = datetime(year + month // 12, month % 12 + 1, 1)
    return (nxt - timedelta(days=1)).day


def _day_start(dt: datetime) -> datetime:
    return dt.replace(hour=0, minute=0, second=0, microsecond=0)


_TICK = timedelta(microseconds=1)
Period = tuple[datetime, datetime]
"""A period, ``(start, end_inclusive)`` in UTC."""


def _period(expr: str, now: datetime) -> tuple[datetime, datetime] | None:
    """``(start, end_inclusive)`` of a calendar expression, or ``None`` if it is not one."""
    today = _day_start(now)
    if expr == "today":
        return today, today + timedelta(days=1) - _TICK
    if expr == "yesterday":
        start = today - timedelta(days=1)
        return start, today - _TICK
    if expr == "last week":
        this_monday = today - timedelta(days=today.weekday())
        return this_monday - timedelta(days=7), this_monday - _TICK
    if expr == "last month":
        first = today.replace(day=1)
        return _add_months(first, -1), first - _TICK
    if m := _YEAR.match(expr):
        year = int(m.group(1))
        if year < 1:
            return None
        return datetime(year, 1, 1, tzinfo=UTC), _before(
            lambda: datetime(year + 1, 1, 1, tzinfo=UTC)
        )
    if m := _MONTH.match(expr):
        year, month = int(m.group(1)), int(m.group(2))
        if not 1 <= month <= 12 or year < 1:
            return None
        start = datetime(year, month, 1, tzinfo=UTC)
        return start, _before(lambda: _add_months(start, 1))
    if len(expr) == 10 and expr[4] == "-":
        try:
            day = datetime.strptime(expr, "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            return None
        return day, _before(lambda: day + timedelta(days=1))
    return None


def _before(next_start: Callable[[], datetime]) -> datetime:
    """The last moment before ``next_start()``; the last representable moment when the
    period runs to the end of the calendar (``9999-12-31`` has no next day)."""
    try:
        return next_start() - _TICK
    except (OverflowError, ValueError):
        return datetime.max.replace(tzinfo=UTC)


def _relative(expr: str, now: datetime) -> datetime | None:
    m = _RELATIVE.match(expr)
    if m is None:
        return None
    amount, unit = int(m.group(1)), m.group(2)
    try:
        if unit == "mo":
            return _add_months(now, -amount)
        if unit == "y":
            return _add_months(now, -12 * amount)
        seconds = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}[unit]
        return now - timedelta(seconds=amount * seconds)
    except (OverflowError, ValueError):
        return None


def _iso(expr: str) -> datetime | None:
    if "t" not in expr and " " not in expr:
        return None
    try:
        return _utc(datetime.fromisoformat(expr.upper().replace("Z", "+00:00")))
    except ValueError:
        return None


def _parse(expr: str, now: datetime, *, end: bool) -> datetime:
    now = _utc(now)
    text = " ".join(expr.strip().casefold().split())
    if text == "now":
        return now
    result = _relative(text, now)
    if result is None:
        period = _period(text, now)
        if period is not None:
            result = period[1] if end else period[0]
    if result is None:
        result = _iso(text)
    if result is None:
        raise InvalidQuery(f"cannot understand the time {expr!r}; accepted: {ACCEPTED_FORMS}")
    return result


def parse_since(expr: str, now: datetime) -> datetime:
    """The earliest moment ``expr`` admits (the start of a day/month/year), UTC."""
    return _parse(expr, now, end=False)


def parse_until(expr: str, now: datetime) -> datetime:
    """The latest moment ``expr`` admits (the END of a day/month/year, inclusive), UTC."""
    return _parse(expr, now, end=True)


def parse_loose_datetime(text: str) -> datetime | None:
    """Read a timestamp written by a dataset or a person; ``None`` when it is not one.

    Understands LoCoMo's ``"1:56 pm on 8 May, 2023"``, LongMemEval's
    ``"2023/05/30 (Tue) 23:40"``, ISO dates and datetimes (``2023-05-30``,
    ``2023-05-30T23:40:00Z``). Naive values are taken as UTC; the result is UTC.
    """
    raw = " ".join(text.strip().split())
    if not raw:
        return None
    try:
        if m := _LOCOMO.match(raw):
            hour, minute = int(m.group(1)) % 12, int(m.group(2))
            if m.group(3).lower() == "p":
                hour += 12
            month = _MONTHS.get(m.group(5).lower())
            if month is None:
                return None
            return datetime(int(m.group(6)), month, int(m.group(4)), hour, minute, tzinfo=UTC)
        if m := _SLASHED.match(raw):
            year, month, day = (int(m.group(i)) for i in (1, 2, 3))
            hour, minute, second = (int(m.group(i) or 0) for i in (4, 5, 6))
            return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
        return _utc(datetime.fromisoformat(raw.replace("Z", "+00:00")))
    except ValueError:
        return None


# -- dates a question mentions ("in October 2023", "13 października 2023") ---------------


def _folded(words: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(fold(w).casefold() for w in words.split()))


class _LazyPattern:
    """A regular expression compiled when first used. The four long ones below take
    10-25 ms to compile, which every command paid at start though only a recall that
    looks for a time in its question uses them."""

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: re.Pattern[str] | None = None

    def _pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self._pattern().search(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self._pattern().finditer(text)


def _alternatives(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first (so "marca" is not read as "mar")."""
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))


# Month names as they appear in running text: English, Polish (nominative, genitive,
# locative, instrumental), Spanish and Ukrainian (nominative, genitive, locative). They are matched
# accent-folded (core.text.fold) and casefolded, as the question is.
_MONTH_WORDS: tuple[str, ...] = (
    "january jan styczeń stycznia styczniu styczniem enero січень січня січні",
    "february feb luty lutego lutym febrero лютий лютого лютому",
    "march mar marzec marca marcu marcem marzo березень березня березні",
    "april apr kwiecień kwietnia kwietniu kwietniem abril квітень квітня квітні",
    "may maj maja maju majem mayo травень травня травні",
    "june jun czerwiec czerwca czerwcu czerwcem junio червень червня червні",
    "july jul lipiec lipca lipcu lipcem julio липень липня липні",
    "august aug sierpień sierpnia sierpniu sierpniem agosto серпень серпня серпні",
    "september sep sept wrzesień września wrześniu wrześniem septiembre setiembre"
    " вересень вересня вересні",
    "october oct październik października październiku październikiem octubre"
    " жовтень жовтня жовтні",
    "november nov listopad listopada listopadzie listopadem noviembre листопад листопада листопаді",
    "december dec grudzień grudnia grudniu grudniem diciembre грудень грудня грудні",
)
_MONTH_OF = {word: n for n, words in enumerate(_MONTH_WORDS, 1) for word in _folded(words)}
# A month named alone ("in May") only counts after a preposition: "may" and "march"
# are English verbs too, and a bare month of no year is the weakest hint.
_MONTH_PREPOSITIONS = ("in", "during", "of", "w", "we", "en", "de", "у", "в")
_YEAR_PREPOSITIONS = (*_MONTH_PREPOSITIONS, "del")
# A part of a month named before it: "early May", "mid-June", "late July", "na początku
# marca", "pod koniec lipca", "w połowie maja", "на початку травня", "наприкінці квітня",
# "в середині червня" (Spanish says "a principios de mayo": after "de", above). The
# month is the period: where in it a memory was said is rarely that exact.
_MONTH_PARTS = _folded(
    "early late mid początku początek koniec końcu końca połowie połowy"
    " початку наприкінці кінці кінця середині"
)
_MONTH_RE = _alternatives(_MONTH_OF)
# alone after a preposition, English abbreviations do not count ("the car of Jan")
_ABBREVIATIONS = frozenset(
    ["jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"]
)
_MONTH_NAME_RE = _alternatives(n for n in _MONTH_OF if n not in _ABBREVIATIONS)
_DAY_RE = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th|\.)?"
_YEAR_RE = r"(?P<{}>(?:19|20)\d\d)"
# "before June", "przed 2024", "antes de junio", "до червня", "after March", "po 2023",
# "después de 2023", "після червня": the period as long as the one named, just before
# (or after) it.
_BEFORE_STARTS = ("before", "przed", "antes", "перед", "до")
_BOUND_RE = r"(?:before|after|przed|po|antes\s+del?|despues\s+del?|перед|до|після)"
_BOUNDED_BEFORE = re.compile(r"(?:^|\W)(?P<d>" + _BOUND_RE + r")\s+$")
_MENTIONS = _LazyPattern(
    "|".join(
        (
            # 2023-10-13
            r"\b(?P<iy>(?:19|20)\d\d)-(?P<im>[01]?\d)-(?P<id>[0-3]?\d)\b",
            # 13 October 2023, 13 października 2023, 13 de octubre de 2023, 13 жовтня 2023
            r"\b" + _DAY_RE.format("dd") + r"\s+(?:de\s+)?(?P<dm>" + _MONTH_RE + r")\b"
            r"(?:,?\s+(?:de\s+|del\s+)?" + _YEAR_RE.format("dy") + r"\b)?",
            # October 13, 2023 / October 13th
            r"\b(?P<md>" + _MONTH_RE + r")\s+" + _DAY_RE.format("mdd") + r"(?!\d)"
            r"(?:,?\s+" + _YEAR_RE.format("mdy") + r"\b)?",
            # October 2023, octubre de 2023, жовтні 2023
            r"\b(?P<my>" + _MONTH_RE + r"),?\s+(?:de\s+|del\s+)?" + _YEAR_RE.format("myy") + r"\b",
            # in October, the month of October, w październiku, en octubre, у жовтні
            r"\b(?:" + "|".join(_MONTH_PREPOSITIONS) + r")\s+(?P<mo>" + _MONTH_NAME_RE + r")\b"
            r"(?!,?\s+(?:de\s+|del\s+)?(?:19|20)\d\d)",
            # early May, mid-June, pod koniec lipca, наприкінці квітня
            r"\b(?:" + "|".join(_MONTH_PARTS) + r")(?:\s+|-)(?P<mp>" + _MONTH_NAME_RE + r")\b"
            r"(?!,?\s+(?:de\s+|del\s+)?(?:19|20)\d\d)",
            # in 2023, w 2023 roku, en 2023, у 2023 році
            r"\b(?:" + "|".join(_YEAR_PREPOSITIONS) + r")\s+" + _YEAR_RE.format("yy") + r"\b",
            # before June, przed czerwcem, antes de junio, до червня; after 2023
            r"\b(?P<bd>" + _BOUND_RE + r")\s+(?P<bm>" + _MONTH_NAME_RE + r")\b"
            r"(?!,?\s+(?:de\s+|del\s+)?(?:19|20)\d\d|\s+\d)",
            r"\b(?P<bd2>" + _BOUND_RE + r")\s+" + _YEAR_RE.format("by") + r"\b",
        )
    )
)


def _latest(month: int, day: int | None, now: datetime) -> tuple[int, int]:
    """The year of the latest ``month`` (and ``day``) not after ``now``, and the month."""
    year = now.year
    if (month, day or 1) > (now.month, now.day):
        year -= 1
    return year, month


def _mention_period(m: re.Match[str], now: datetime) -> tuple[datetime, datetime] | None:
    g = m.groupdict()
    try:
        if g["iy"]:
            day = datetime(int(g["iy"]), int(g["im"]), int(g["id"]), tzinfo=UTC)
            return day, day + timedelta(days=1) - _TICK
        for month_key, day_key, year_key in (("dm", "dd", "dy"), ("md", "mdd", "mdy")):
            if g[month_key]:
                month, number = _MONTH_OF[g[month_key]], int(g[day_key])
                if g[year_key]:
                    year = int(g[year_key])
                else:
                    year, month = _latest(month, number, now)
                day = datetime(year, month, number, tzinfo=UTC)
                return day, day + timedelta(days=1) - _TICK
        if g["my"] or g["mo"] or g["mp"] or g["bm"]:
            month = _MONTH_OF[g["my"] or g["mo"] or g["mp"] or g["bm"]]
            year = int(g["myy"]) if g["my"] else _latest(month, None, now)[0]
            start = datetime(year, month, 1, tzinfo=UTC)
            return start, _add_months(start, 1) - _TICK
        if g["yy"] or g["by"]:
            year = int(g["yy"] or g["by"])
            return datetime(year, 1, 1, tzinfo=UTC), _before(
                lambda: datetime(year + 1, 1, 1, tzinfo=UTC)
            )
    except ValueError:  # 31 February, month 13
        return None
    return None


# -- periods a question names relative to when it is asked ("two weeks ago") ------------


# Length of each unit in days, and its words: English, Polish, Spanish, Ukrainian.
_UNITS: tuple[tuple[int, str], ...] = (
    (1, "day days dzień dni dnia día días день дні днів дня"),
    (
        7,
        "week weeks tydzień tygodnie tygodni tygodnia tygodniu semana semanas"
        " тиждень тижні тижнів тижня тижні тижню",
    ),
    (
        30,
        "month months miesiąc miesiące miesięcy miesiąca miesiącu mes meses"
        " місяць місяці місяців місяця місяці місяцю",
    ),
    (365, "year years rok lata lat roku año años рік роки років року році"),
)
_UNIT_DAYS = {word: days for days, words in _UNITS for word in _folded(words)}
# A unit word meaning one of it without a number ("tydzień temu", "тиждень тому").
_ONE_UNIT = frozenset(_folded("dzień tydzień miesiąc rok день тиждень місяць рік"))
_NUMBER_WORDS: tuple[tuple[int, str], ...] = (
    (1, "a an one jeden jedna jedną un una uno один одна одну"),
    (2, "two dwa dwie dos два дві couple"),
    (3, "three trzy tres три few several kilka kilku unos unas varios varias кілька декілька"),
    (4, "four cztery cuatro чотири"),
    (5, "five pięć cinco п'ять п’ять пять"),
    (6, "six sześć seis шість"),
    (7, "seven siedem siete сім"),
    (8, "eight osiem ocho вісім"),
    (9, "nine dziewięć nueve дев'ять дев’ять девять"),
    (10, "ten dziesięć diez десять"),
)
_NUMBER = {word: n for n, words in _NUMBER_WORDS for word in _folded(words)}
# "the last two weeks" in Polish: "ostatnich dwóch tygodni" (read only after "last")
_GENITIVE_NUMBER = {word: n for n, word in enumerate(_folded("dwóch trzech czterech"), 2)}
_WEEKDAY_WORDS: tuple[str, ...] = (  # Monday first, as datetime.weekday()
    "monday poniedziałek lunes понеділок понеділка понеділку",
    "tuesday wtorek martes вівторок вівторка вівторку",
    "wednesday środa środę miércoles середа середу середи",
    "thursday czwartek jueves четвер четверга четвергу",
    "friday piątek viernes п'ятниця п'ятницю п'ятниці п’ятниця п’ятницю п’ятниці",
    "saturday sobota sobotę sábado субота суботу суботи",
    "sunday niedziela niedzielę domingo неділя неділю неділі",
)
_WEEKDAY = {word: n for n, words in enumerate(_WEEKDAY_WORDS) for word in _folded(words)}
_WEEKEND = frozenset(_folded("weekend weekendzie вихідні вихідних"))
_LAST = _folded(
    "last past previous zeszły zeszłą zeszłym zeszłej ubiegły ubiegłą ubiegłym ubiegłej"
    " ostatni ostatnią ostatnim ostatniej ostatnie ostatnich miniony minioną minionym"
    " pasado pasada último última últimos últimas"
    " минулий минулу минулого минулої минулому минулих минулі останній останню"
    " останнього останньої останні останніх"
)
_THIS = _folded("this tym este esta цей цього цієї цю цьому")


_NUM_RE = r"(?:\d{1,3}|" + _alternatives(_NUMBER) + r")"
_UNIT_RE = _alternatives(_UNIT_DAYS)
_AGO = _LazyPattern(
    "|".join(
        (
            # two weeks ago / a month ago; dwa tygodnie temu / tydzień temu; два тижні тому
            rf"\b(?:(?:a\s+)?(?P<an>{_NUM_RE})(?:\s+of)?\s+)?(?P<au>{_UNIT_RE})\s+(?:ago|temu|тому)\b",
            # hace dos semanas / hace un mes
            rf"\bhace\s+(?P<hn>{_NUM_RE})\s+(?P<hu>{_UNIT_RE})\b",
        )
    )
)
_LAST_RE = _alternatives(_LAST)
_DAYNAME_RE = _alternatives([*_WEEKDAY, *_WEEKEND, "fin de semana"])
_LAST_DAY = _LazyPattern(
    "|".join(
        (
            # last Saturday, zeszłą sobotę, минулої суботи, el pasado sábado
            rf"\b(?:{_LAST_RE})\s+(?P<ld>{_DAYNAME_RE})\b",
            # el sábado pasado, el fin de semana pasado
            rf"\b(?P<dl>{_DAYNAME_RE})\s+(?:pasado|pasada)\b",
        )
    )
)
_SPAN = _LazyPattern(
    "|".join(
        (
            # the past two weeks, w ciągu ostatnich dwóch tygodni, las últimas dos semanas,
            # за останні два тижні; the last month; el mes pasado; минулого місяця
            rf"\b(?P<sl>{_LAST_RE})\s+(?:(?P<sn>{_NUM_RE}|{_alternatives(_GENITIVE_NUMBER)})\s+)?(?P<su>{_UNIT_RE})\b",
            rf"\b(?P<su2>{_UNIT_RE})\s+(?:pasado|pasada)\b",
            # this week / this month; w tym miesiącu; este año; цього тижня
            rf"\b(?:{_alternatives(_THIS)})\s+(?P<tu>{_UNIT_RE})\b",
        )
    )
)
# A day named by its distance from today: the day it names up to now (what happened
# yesterday is told yesterday or today). Longest first: "the day before yesterday"
# before "yesterday", "antes de ayer" before "ayer".
_DAY_WORDS: tuple[tuple[int, str], ...] = (
    (2, "the day before yesterday|day before yesterday|przedwczoraj|anteayer|antier"),
    (2, "antes de ayer|позавчора|позаучора"),
    (1, "yesterday|last night|wczoraj|zeszłej nocy|ostatniej nocy|ayer|anoche"),
    (1, "вчора|учора|минулої ночі"),
    (0, "today|this morning|earlier today|dzisiaj|dziś|dzisiejszego ranka|hoy|esta mañana"),
    (0, "сьогодні|цього ранку"),
    (-1, "hoy en día|hoy día|nowadays|the last night"),  # no day: "the last night of May"
)
# A year by its distance from this one, in one word or phrase: "торік" as "last year"
# (read with "last month", below), "the year before last" that year and the next
# (told after, as a named year is).
_YEAR_WORDS: tuple[tuple[int, str], ...] = (
    (1, "торік|торiк"),
    (2, "the year before last|позаторік|el año antepasado"),
)


def _phrases_back(table: tuple[tuple[int, str], ...]) -> dict[str, int]:
    """Each folded phrase of ``table`` (``|``-separated) with its distance back."""
    return {
        " ".join(_folded(phrase)): back for back, phrases in table for phrase in phrases.split("|")
    }


def _phrase_pattern(group: str, phrases: Iterable[str]) -> _LazyPattern:
    """One of ``phrases``, as whole words, caught as ``group``."""
    return _LazyPattern(rf"(?<!\w)(?P<{group}>{_alternatives(phrases)})(?!\w)")


_DAYS_BACK = _phrases_back(_DAY_WORDS)
_DAY = _phrase_pattern("day", _DAYS_BACK)
_YEARS_BACK = _phrases_back(_YEAR_WORDS)
_YEAR_SAID = _phrase_pattern("year", _YEARS_BACK)
# "How many days ago…", "ile dni temu", "¿hace cuántos días…", "скільки днів тому" ask
# for the distance, they do not point at a time.
_ASKS_HOW_LONG = re.compile(r"\b(?:how\s+(?:many|much|long)|ile|cuant[oa]s?|скільки)\b")


def _count(word: str | None) -> int:
    if not word:
        return 1
    if word.isdigit():
        return max(int(word), 1)
    return _NUMBER.get(word) or _GENITIVE_NUMBER.get(word, 1)


def relative_period(text: str, now: datetime) -> tuple[datetime, datetime] | None:
    """The period a question points at relative to ``now``, ``(start, end_inclusive)`` UTC.

    Reads English, Polish, Spanish and Ukrainian (accents optional):

    * "<n> <units> ago" ("two weeks ago", "dwa tygodnie temu", "hace dos semanas",
      "два тижні тому"): a window around that moment, a quarter of the distance (at
      least a day) either side, since people round ("two weeks" is 10 to 17 days);
    * "last <weekday>" / "last weekend" ("zeszłą sobotę", "el sábado pasado",
      "минулої суботи"): from that day a week before the latest one to the latest
      one before today, since people differ on which is meant ("last Saturday" said
      on a Tuesday); said on that day of the week, the day a week back;
    * "the past <n> <units>", "last month", "this week" ("w ciągu ostatnich dwóch
      tygodni", "el mes pasado", "цього тижня"): up to ``now``. "Last month" may be
      the calendar month before or the past 30 days; the span covers both.

    A question asking how long ago something was ("how many days ago…") names no
    period and gives ``None``.
    """
    return _pointed_back(fold(text).casefold(), _utc(now))


def _pointed_back(folded: str, moment: datetime) -> Period | None:
    """:func:`relative_period` of accent-folded, casefolded text."""
    today = _day_start(moment)
    day = timedelta(days=1)
    if not _ASKS_HOW_LONG.search(folded):
        for m in _AGO.finditer(folded):
            number, unit = m.group("an", "au") if m.group("au") else m.group("hn", "hu")
            if number is None and unit not in _ONE_UNIT:
                continue  # "days ago" alone: how many is not said
            span = _count(number) * _UNIT_DAYS[unit]
            centre = moment - span * day
            width = max(span / 4, 1) * day
            return centre - width, min(centre + width, moment)
    if (said := _DAY.search(folded)) and (back := _DAYS_BACK[said.group("day")]) >= 0:
        return today - back * day, moment
    if said := _YEAR_SAID.search(folded):
        if _YEARS_BACK[said.group("year")] == 1:  # "торік" is "last year" (below)
            return _last_unit(_UNIT_DAYS["year"], moment)
        start = today.replace(year=today.year - 2, month=1, day=1)
        return start, min(start.replace(year=start.year + 2) - _TICK, moment)
    if last := _LAST_DAY.search(folded):
        name = last.group("ld") or last.group("dl")
        # "Last Saturday" said on a Tuesday is three days back for some people and ten
        # for others (the Saturday of last week): the span covers both. Said on a
        # Saturday it can only be a week back.
        weekday = _WEEKDAY.get(name, 5)  # a weekend starts on Saturday
        back = (today.weekday() - weekday) % 7 or 7
        latest = today - back * day
        start = latest if back == 7 else latest - 7 * day
        length = day if name in _WEEKDAY else 2 * day
        return start, min(latest + length - _TICK, moment)
    for found in _SPAN.finditer(folded):
        unit = found.group("su") or found.group("su2") or found.group("tu")
        counted = bool(found.group("sn"))
        if _UNIT_DAYS[unit] == 1 and not counted:
            continue  # "the last day" is the final one, not yesterday
        if found.group("tu") is None and not counted:
            return _last_unit(_UNIT_DAYS[unit], moment)
        span = _count(found.group("sn")) * _UNIT_DAYS[unit]
        return moment - span * day, moment
    return None


def _last_unit(days: int, moment: datetime) -> Period:
    """ "Last month" (a unit of ``days``): the one before, or the past 30 days; twice
    the unit back covers both."""
    return moment - timedelta(days=2 * days), moment


def mentioned_period(text: str, now: datetime) -> Period | None:
    """The period a question names, ``(start, end_inclusive)`` in UTC, or ``None``.

    Reads absolute dates in English, Polish, Spanish and Ukrainian: a day
    ("13 October 2023", "October 13th, 2023", "2023-10-13", "13 października 2023",
    "13 de octubre de 2023", "13 жовтня 2023"), a month ("October 2023", "in May",
    "w październiku", "en octubre", "у жовтні") or a year ("in 2023", "w 2023 roku").
    A day or month without a year is the latest one not after ``now``. Several
    mentions give the span from the earliest start to the latest end. A question
    naming no date may point at a time relative to when it is asked ("two weeks
    ago", "last Saturday", "in the past month"): :func:`relative_period`.
    """
    named = named_period(text, now)
    return None if named is None else named.period


class NamedPeriod(NamedTuple):
    """The period a question names (:func:`mentioned_period`) and the words of the dates
    that name it, folded and casefolded as :func:`~kronika.core.text.folded_words`
    gives them: "in March" gives ``{"in", "march"}``, "on 1 February, 2023" ``{"1",
    "february", "2023"}``. A season or a time counted back from now ("last spring",
    "two weeks ago", "last weekend") names a period but gives no words: memories tell
    of those in the same words ("this spring I took up climbing"), so they say what
    the question is about as much as when; a date in a memory ("birthday: 12 March")
    is one of its values, not the time it was said."""

    period: Period
    words: frozenset[str]


def named_period(text: str, now: datetime) -> NamedPeriod | None:
    """:func:`mentioned_period` and the words of the dates that name the period
    (:class:`NamedPeriod`), or ``None``."""
    folded, moment = fold(text).casefold(), _utc(now)
    seasons = season_periods(folded, moment, tense_of(text))
    periods = [_bounded(p, _bound_before(folded, at), moment) for (at, _), p in seasons]
    dates = [
        (m.span(), _bounded(p, direction, moment))
        for m in _MENTIONS.finditer(folded)
        if not any(start <= m.start() < end for (start, end), _ in seasons)  # "summer of 2023"
        and (p := _mention_period(m, moment))
        for direction in [m.group("bd") or m.group("bd2") or _bound_before(folded, m.start())]
    ]
    periods += [p for _, p in dates]
    if not periods:
        back = _pointed_back(folded, moment)
        return None if back is None else NamedPeriod(back, frozenset())
    words = frozenset(w for (start, end), _ in dates for w in folded_words(folded[start:end]))
    return NamedPeriod((min(p[0] for p in periods), max(p[1] for p in periods)), words)


def names_period(text: str, said: datetime, period: Period) -> bool:
    """Whether ``text``, said at ``said``, names a date or month within ``period``: "a
    trip to Lisbon in September", said in June, names the September after it or the one
    before (a month or day written without its year is either), "on 12 March 2026" that
    day. Seasons and times counted back ("last week") are not read here."""
    folded, moment = fold(text).casefold(), _utc(said)
    start, end = period
    for m in _MENTIONS.finditer(folded):
        if m.group("bd") or m.group("bd2"):
            continue  # "before June" names no time within June
        named = _mention_period(m, moment)
        if named is None:
            continue
        years = (0,) if _has_year(m) else (0, 1)
        for shift in years:
            try:
                since = named[0].replace(year=named[0].year + shift)
                until = named[1].replace(year=named[1].year + shift)
            except ValueError:  # 29 February
                continue
            if since <= end and until >= start:
                return True
    return False


def _has_year(m: re.Match[str]) -> bool:
    """Whether a mention of :data:`_MENTIONS` gives its year."""
    return any(m.group(g) for g in ("iy", "dy", "mdy", "myy", "yy", "by"))


def _bound_before(folded: str, at: int) -> str | None:
    """The word of "before" or "after" just before position ``at`` of ``folded``."""
    found = _BOUNDED_BEFORE.search(folded, 0, at)
    return found.group("d") if found else None


def _bounded(
    period: tuple[datetime, datetime], direction: str | None, now: datetime
) -> tuple[datetime, datetime]:
    """``period`` itself, or with "before" ("przed", "antes de", "до", "перед") the period
    as long just before it, with "after" ("po", "después de", "після") the one just
    after it (up to ``now``); months, seasons and years by the calendar, a shorter
    period as a week at least."""
    if direction is None:
        return period
    start, after = period[0], period[1] + _TICK
    months = (after.year - start.year) * 12 + after.month - start.month
    whole = start == _day_start(start) and start.day == 1 and after.day == 1 and months > 0
    # a day or a few: the week before (after) it, "the Monday before July 24"
    length = max(after - start, timedelta(days=7))
    try:
        if " ".join(direction.split()).startswith(_BEFORE_STARTS):
            # calendar months and years are counted in months: "before 2024" is 2023
            return (_add_months(start, -months) if whole else start - length), start - _TICK
        end = _add_months(after, months) if whole else after + length
    except (OverflowError, ValueError):
        return period
    return after, max(min(end - _TICK, now), after)


# -- questions that ask when, and text that says when ----------------------------------

# How a question asking for a time starts (folded, casefolded words): "When did…",
# "What date…", "Kiedy…", "O której…", "¿Cuándo…", "¿Qué día…", "Коли…", "Якого дня…".
_WHEN_STARTS: tuple[tuple[str, ...], ...] = tuple(
    tuple(fold(word).casefold() for word in start.split())
    for start in (
        "when",
        "what date",
        "what day",
        "what time",
        "which day",
        "on what date",
        "on which day",
        "kiedy",
        "o której",
        "którego dnia",
        "jakiego dnia",
        "cuándo",
        "qué día",
        "en qué fecha",
        "a qué hora",
        "коли",
        "якого дня",
        "о котрій",
    )
)
# Words that place what is said in time, by language; month names are added below.
_TIME_WORDS_TEXT = """
yesterday today tonight tomorrow ago last next recently soon since earlier weekend
weekends week weeks month months year years morning evening night monday tuesday
wednesday thursday friday saturday sunday
wczoraj dzisiaj dziś jutro temu zeszły zeszłym zeszłej zeszłego ostatnio ostatni
ostatnim ostatniej przyszły przyszłym przyszłej przyszłego niedawno wkrótce tydzień
tygodnia tygodniu tygodnie weekend weekendzie miesiąc miesiąca miesiącu rok roku
lat rano wieczorem wieczór nocy poniedziałek wtorek środa środę czwartek piątek
sobota sobotę niedziela niedzielę
ayer hoy mañana anoche hace pasado pasada próximo próxima recién recientemente
pronto desde semana semanas mes meses año años noche tarde lunes martes miércoles
jueves viernes sábado domingo
вчора сьогодні завтра тому минулого минулої минулий минулому минулої наступного
наступної наступний нещодавно скоро тиждень тижня тижні вихідні вихідних місяць
місяця місяці рік року році років вранці ввечері вечора ночі понеділок понеділка
вівторок вівторка середа середу четвер четверга п'ятниця п'ятницю субота суботу неділя неділю
"""
# With the month names, less the ones that are also common words or names ("may",
# "jan"). Matched as whole words of casefolded text, in both spellings (with accents
# and without): recall reads up to fifty candidates per question that asks when.
_TIME_FORMS = frozenset(
    form
    for word in (
        *_TIME_WORDS_TEXT.split(),
        *(name for names in _MONTH_WORDS for name in names.split() if len(name) > 3),
    )
    for form in (word, fold(word))
)
# words as the forms are written: letters and digits, with an inner apostrophe
# (Ukrainian "п'ятниця"); years 1900-2099 count too
_TEXT_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_APOSTROPHES = str.maketrans({"ʼ": "'", "’": "'"})
_YEAR_WORD = re.compile(r"(?:19|20)\d\d")
# "may" is a month only where the verb cannot be: "in May", "since May", "May 3"
_MAY = re.compile(
    r"\b(?:in|since|during|of|by|until|last|next|early|late|mid)[\s-]+may\b|\bmay\s+\d"
)


def asks_when(question: str) -> bool:
    """Whether ``question`` asks for a time: it starts with "when", "what date",
    "kiedy", "cuándo", "коли" and the like (English, Polish, Spanish, Ukrainian)."""
    words = tuple(islice(folded_words(question), 3))
    return any(words[: len(start)] == start for start in _WHEN_STARTS)


def mentions_time(text: str) -> bool:
    """Whether ``text`` places something in time: "yesterday", "last week", "two
    weeks ago", "in October", "2022", "wczoraj", "hace un mes", "минулого тижня"…"""
    folded = text.casefold().translate(_APOSTROPHES)
    words = set(_TEXT_WORD.findall(folded))
    return (
        not words.isdisjoint(_TIME_FORMS)
        or any(_YEAR_WORD.fullmatch(word) for word in words if word[:1] in "12")
        or ("may" in words and _MAY.search(folded) is not None)
    )
