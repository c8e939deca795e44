"""Explicit personal statements found without a model (SPEC L8).

When no language model is available, :func:`extract_statements` still keeps what a
person plainly says about themselves, in English, Polish, Spanish and Ukrainian:

* name — "my name is Ana", "call me Ana", "mam na imię Ania", "nazywam się Jan",
  "me llamo Ana", "мене звати Олена" (also "Hi, I'm Ana", "Cześć, jestem Ania");
* location / origin — "I live in Berlin", "I moved to Rome", "mieszkam w Krakowie",
  "vivo en Buenos Aires", "я живу в Києві" / "I'm from Spain", "soy de Chile", "я з Києва";
* job / employer — "I work as a nurse", "pracuję jako programistka", "trabajo como
  diseñadora", "я працюю програмістом" / "I work at Acme", "pracuję dla Acme";
* preference / dislike — "I prefer / like / love X", "wolę / lubię X", "prefiero X",
  "me gusta X", "мені подобається X" / "I don't like / hate X", "nie lubię X",
  "no me gusta X", "мені не подобається X";
* favourite_<x> — "my favourite colour is blue", "mój ulubiony kolor to niebieski",
  "mi color favorito es el azul", "мій улюблений колір — синій" (``x`` in English when
  the word is known, else the word as said);
* allergy, diet, language, birthday, pet, partner — "I'm allergic to peanuts",
  "I'm vegan", "I speak Polish", "my birthday is May 5", "I have a dog named Rex",
  "my wife's name is Ana", and their Polish, Spanish and Ukrainian forms;
* rule (Decisions) — "I always/never want X", "zawsze chcę X", "nunca quiero X";
* project (Current) — "I'm working on X", "my project is X", "pracuję nad X".

Values are kept as said ("Krakowie" stays inflected), cut before ", but", " because",
" and I"…, without trailing punctuation. Precision comes first: a statement must open
its sentence or clause, questions and hypotheticals ("If I lived in Rome") are skipped,
other people's facts ("My friend lives in Rome") do not match, and names and places
must be capitalised.

Keys are English (``name``, ``location``…). When stored, a fact takes the key the Brain
already uses for its concept (``nombre``, ``miasto``…; see :mod:`kronika.core.dedup`),
so a new value supersedes the old one instead of standing beside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kronika.core import rule_phrases as phrases
from kronika.core.commands import compile_phrase, match_form
from kronika.core.model import BrainSection
from kronika.core.sections import guess_section

EXTRACTOR_VERSION = "rules@1"


@dataclass(frozen=True, slots=True)
class RuleFact:
    """One extracted statement: a key, its value as said, its Brain section and evidence."""

    key: str
    value: str
    section: str
    multi: bool
    evidence: str


Span = tuple[int, int]
Shape = Callable[[str, str, int, int, str], list[Span]]

_SECTIONS = {
    "preference": BrainSection.PREFERENCES,
    "dislike": BrainSection.PREFERENCES,
    "favourite": BrainSection.PREFERENCES,
    "diet": BrainSection.PREFERENCES,
    "rule": BrainSection.DECISIONS,
    "project": BrainSection.CURRENT,
}
_MULTI = frozenset({"preference", "dislike", "allergy", "pet", "language", "rule"})

# ------------------------------------------------------------------ value shapes
_TOKEN = re.compile(r"\s*([^\s,;:!?()\"“”«»]+)")


def _words(text: str) -> frozenset[str]:
    return frozenset(match_form(word) for word in text.split())


_PARTICLES = _words(phrases.PARTICLES)
_NOT_NAMES = _words(phrases.NOT_NAMES)
_NOT_THINGS = {lang: _words(words) for lang, words in phrases.NOT_THINGS.items()}
_ES_LANGUAGES = _words(phrases.ES_LANGUAGES)
_LEADING_FILLERS = compile_phrase(phrases.LEADING_FILLERS)
_TRAILING_FILLERS = compile_phrase(phrases.TRAILING_FILLERS)
_JOB_CUT = compile_phrase(phrases.JOB_CUT)
_NAMING = compile_phrase(phrases.NAMING)
_MONTHS = compile_phrase(phrases.MONTHS)
_DATE_TOKEN = compile_phrase(phrases.DATE_TOKEN)
_DATE_WORD = re.compile(r"[\s,]*([^\s,;:!?()]+)")
_LIST_SPLIT = compile_phrase(phrases.LIST_SPLIT)


def _untail(folded: str, s: int, e: int) -> int:
    """``e`` moved back past closing fillers ("jazz too", "el café también")."""
    while m := _TRAILING_FILLERS.search(folded, s, e):
        e = _trim(folded, s, m.start())[1]
    return e


def _trim(folded: str, s: int, e: int) -> Span:
    """``[s, e)`` without outer spaces, separators, quotes and closing punctuation."""
    while s < e and folded[s] in " \t,;:-–—\"'“„«":
        s += 1
    while s < e and folded[e - 1] in " \t,;:-–—.!…\"'”»":
        e -= 1
    return s, e


def _run(text: str, s: int, e: int, limit: int) -> int | None:
    """End of the capitalised words at ``s`` (particles such as "de" may join two)."""
    pos, end, words = s, None, 0
    while words < limit and (m := _TOKEN.match(text, pos, e)):
        word = m.group(1)
        if word[0].isupper():
            if end is None and match_form(word) in _NOT_NAMES:
                return None
            end, pos, words = m.end(), m.end(), words + 1
        elif match_form(word) in _PARTICLES:
            pos = m.end()
        else:
            break
    return end


def _name(text: str, folded: str, s: int, e: int, language: str) -> list[Span]:
    """Up to four capitalised words: "Ana", "Jan Kowalski"."""
    s, e = _trim(folded, s, e)
    end = _run(text, s, e, 4) if s < e and text[s].isupper() else None
    return [(s, end)] if end else []


def _place(text: str, folded: str, s: int, e: int, language: str) -> list[Span]:
    """Capitalised words, perhaps after "the": "Buenos Aires", "the Netherlands", "Acme"."""
    s, e = _trim(folded, s, e)
    end = _run(text, s, e, 5)
    return [(s, end)] if end else []


def _thing(text: str, folded: str, s: int, e: int, language: str, words: int = 8) -> list[Span]:
    """A short phrase without its article or "too", that is not a pronoun ("I like it")."""
    s, e = _trim(folded, s, e)
    e = _untail(folded, s, e)
    while m := _LEADING_FILLERS.match(folded, s, e):
        s = m.end()
    head = re.match(r"\w+", folded[s:e])
    if head is None or head[0] in _NOT_THINGS[language]:
        return []
    return [(s, e)] if len(folded[s:e].split()) <= words else []


def _job(text: str, folded: str, s: int, e: int, language: str) -> list[Span]:
    """A short phrase cut before "at", "in", "for"…: "nurse" from "a nurse at St Mary's"."""
    if m := _JOB_CUT.search(folded, s, e):
        e = m.start()
    return _thing(text, folded, s, e, language, words=5)


def _named_project(text: str, folded: str, s: int, e: int, language: str) -> list[Span]:
    """A capitalised, quoted or "a …" phrase ("my project is late" names no project)."""
    s, e = _trim(folded, s, e)
    opened = re.match(r"(?:a|an|the|un|una|el|la|mi|my)\s", folded[s:e])
    if s < e and (text[s].isupper() or opened or text[s - 1 : s] in ('"', "'", "“", "„", "«")):
        return _thing(text, folded, s, e, language)
    return []


def _date(text: str, folded: str, s: int, e: int, language: str) -> list[Span]:
    """Day, month and year words with at least a number or a month: "5 de mayo"."""
    s, e = _trim(folded, s, e)
    pos, end, dated = s, None, False
    while m := _DATE_WORD.match(folded, pos, e):
        word = m.group(1).rstrip(".")
        if _MONTHS.fullmatch(word) or word[:1].isdigit():
            dated, end = True, m.end()
        elif not _DATE_TOKEN.fullmatch(word):
            break
        pos = m.end()
    return [_trim(folded, s, end)] if dated and end else []


def _whole(text: str, folded: str, s: int, e: int, language: str) -> list[Span]:
    """The clause as said (rules keep their "always"/"never")."""
    s, e = _trim(folded, s, e)
    return [(s, e)] if len(folded[s:e].split()) >= 2 else []


def _diet(text: str, folded: str, s: int, e: int, language: str) -> list[Span]:
    """The matched word: "vegan", "weganką"."""
    return [_trim(folded, s, e)]


def _pet(text: str, folded: str, s: int, e: int, language: str) -> list[Span]:
    """The animal and its name, which must be capitalised: "dog named Rex"."""
    s, e = _trim(folded, s, e)
    if (m := _NAMING.search(folded, s, e)) and not text[m.end() : e][:1].isupper():
        return []
    return [(s, e)]


def _languages(text: str, folded: str, s: int, e: int, language: str) -> list[Span]:
    """Each language of a list: "Polish", "po polsku", "español", "українською"."""
    spans, pos = [], s
    for cut in [*_LIST_SPLIT.finditer(folded, s, e), None]:
        a, b = _trim(folded, pos, cut.start() if cut else e)
        pos = cut.end() if cut else e
        item = folded[a:b]
        if language == "en":
            b = _run(text, a, b, 2) or a
        elif language == "pl":
            b = b if re.fullmatch(r"(?:po\s+)?\w+[csz]ku", item) else a
        elif language == "es":
            b = b if item in _ES_LANGUAGES else a
        else:
            b = b if re.fullmatch(r"\w+(?:ськ|цьк|зьк)ою", item) else a
        if b > a:
            spans.append((a, b))
    return spans


@dataclass(frozen=True, slots=True)
class _Rule:
    key: str
    language: str
    pattern: re.Pattern[str]
    shape: Shape
    stop: re.Pattern[str]


_SHAPES: dict[str, Shape] = {
    "name": _name,
    "place": _place,
    "thing": _thing,
    "job": _job,
    "named_project": _named_project,
    "date": _date,
    "whole": _whole,
    "diet": _diet,
    "pet": _pet,
    "languages": _languages,
}
_FAVOURITES = {
    match_form(word).replace("_", " "): key
    for key, words in phrases.FAVOURITE_WORDS.items()
    for word in words.split()
}
_RULES = tuple(
    _Rule(
        key,
        language,
        compile_phrase(source),
        _SHAPES[shape],
        compile_phrase(phrases.STOP_ALL + "|" + phrases.STOPS[language]),
    )
    for language, table in phrases.STATEMENTS.items()
    for key, shape, source in table
)

# ------------------------------------------------------------------ sentences and clauses
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_HYPOTHETICAL = compile_phrase(phrases.HYPOTHETICAL)
_CONJUNCTIONS = phrases.CONJUNCTIONS
_BOUNDARY = compile_phrase(rf"[,;]\s*|(?<=\s)(?P<conj>{_CONJUNCTIONS})\s+")
_SUBJECT_I = re.compile(r"i(?:'|\s)")


@dataclass(frozen=True, slots=True)
class _Found:
    fact: RuleFact
    covers: bool  # the statement is the whole sentence


def _scan(text: str) -> list[_Found]:
    found: list[_Found] = []
    for raw in _SENTENCE_END.split(text):
        sentence = raw.strip()
        folded = match_form(sentence)
        if (
            not sentence
            or "?" in sentence
            or sentence[0] in "¿\"“„«'"
            or (_HYPOTHETICAL.match(folded))
        ):
            continue
        matched_at: set[int] = set()
        for pos, previous in _clause_starts(folded):
            if previous is not None and previous not in matched_at:
                continue  # "My wife and I live…": the subject is not the speaker alone
            for rule in _RULES:
                if m := rule.pattern.match(folded, pos):
                    facts = _facts(rule, m, sentence, folded)
                    if facts:
                        matched_at.add(pos)
                        whole = _untail(folded, *_trim(folded, 0, len(folded)))
                        found += [_Found(f, pos == 0 and end == whole) for f, end in facts]
                        break
    return found


def _clause_starts(folded: str) -> list[tuple[int, int | None]]:
    """Where a statement may begin; for "… and I …" also where the clause before began,
    which must itself hold a statement (or open with "I")."""
    starts: list[tuple[int, int | None]] = [(0, None)]
    last = 0
    for m in _BOUNDARY.finditer(folded):
        needs = (
            m["conj"] == "and"
            and _SUBJECT_I.match(folded, m.end()) is not None
            and _SUBJECT_I.match(folded, last) is None
        )
        starts.append((m.end(), last if needs else None))
        last = m.end()
    return starts


def _facts(rule: _Rule, m: re.Match[str], sentence: str, folded: str) -> list[tuple[RuleFact, int]]:
    s, e = m.span("v")
    if cut := rule.stop.search(folded, s, e):
        e = cut.start()
    key = rule.key
    if key == "favourite":
        word = " ".join(sentence[m.start("x") : m.end("x")].lower().split())
        key = "favourite_" + _FAVOURITES.get(match_form(word), word).replace(" ", "_")
    section = _SECTIONS.get(rule.key, BrainSection.USER).value
    return [
        (RuleFact(key, sentence[a:b], section, key in _MULTI, sentence), b)
        for a, b in rule.shape(sentence, folded, s, e, rule.language)
        if b > a
    ]


def extract_statements(text: str) -> list[RuleFact]:
    """Explicit first-person statements in ``text`` (en/pl/es/uk), in order, without repeats.

    See the module docstring for the phrasings. A sentence is split on ``. ! ?`` and
    newlines; each clause opening with a known statement gives its facts.
    """
    seen: set[tuple[str, str]] = set()
    out: list[RuleFact] = []
    for f in _scan(text):
        mark = (f.fact.key, match_form(f.fact.value))
        if mark not in seen:
            seen.add(mark)
            out.append(f.fact)
    return out


def fact_from_remember(content: str) -> RuleFact:
    """The fact a "remember …" command keeps.

    When ``content`` is one statement that :func:`extract_statements` reads whole (``I'm
    vegan``, ``mam na imię Ania``), that fact; otherwise a ``note`` holding ``content``,
    in the section :func:`~kronika.core.sections.guess_section` picks.
    """
    text = content.strip()
    found = _scan(text)
    sentences = [part for part in _SENTENCE_END.split(text) if part.strip()]
    if len(sentences) == 1 and len(found) == 1 and found[0].covers:
        return found[0].fact
    section = guess_section(None, text).value
    return RuleFact(key="note", value=text, section=section, multi=True, evidence=text)
