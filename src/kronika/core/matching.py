"""Which remembered facts a spoken topic refers to ("forget my job", "wyczyść pamięć o pracy").

Deterministic and offline: a topic names a Brain section ("preferences", "ustalenia",
"preferencias", "вподобання") or is matched word by word against each fact's key and
value, accent-insensitively. Two words match when they are equal, share their first
five letters (``Krakowie`` ↔ ``Kraków``: inflection), or sit in one small group of
translations (``job`` ↔ ``praca`` ↔ ``trabajo`` ↔ ``робота``). Function words of
English, Polish, Spanish and Ukrainian never match on their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from kronika.core.model import BrainSection, MemoryItem
from kronika.core.text import fold, folded_words

_MIN_PREFIX = 4

_STOP_WORDS = """
    a an the my your our his her their me i you we it this that these those about of on in
    at to for and or with all everything anything what which is are was be do
    o w we z ze na do i a oraz moj moja moje moim moją mojej moich mnie mi ja ty to ten ta
    te tym tego wszystko wszystkim cala cały całą pamięć pamiec
    el la los las un una unos unas mi mis tu tus de del sobre en con y o que todo toda lo
    me te se su sus acerca
    мій моя моє мої мого моєї моїм мене мені я ти ти це цей ця ці про на в у з і й та що
    все всю весь усе
    """
_STOP = frozenset(fold(w) for w in _STOP_WORDS.split())

# Section names and the common words people use for them, folded.
_SECTION_WORDS: dict[BrainSection, frozenset[str]] = {
    BrainSection.USER: frozenset({"user", "uzytkownik", "usuario", "користувач"}),
    BrainSection.PREFERENCES: frozenset(
        {"preferences", "preferencje", "preferencias", "вподобання", "уподобання", "tastes"}
    ),
    BrainSection.DECISIONS: frozenset(
        {"decisions", "ustalenia", "decyzje", "decisiones", "acuerdos", "рішення", "домовленості"}
    ),
    BrainSection.CURRENT: frozenset(
        {"current", "projects", "biezace", "projekty", "proyectos", "actual", "проєкти", "поточне"}
    ),
}

# A few topics whose words differ from the stored key across languages.
_SYNONYMS: tuple[frozenset[str], ...] = tuple(
    frozenset(fold(w) for w in group.split())
    for group in (
        "job work employer career praca pracy pracuje pracuję zawód trabajo empleo работа "
        "робота роботу роботи працюю",
        "name imię imie nazywam nombre llamo ім'я імя звати",
        "city location live lives mieszkam miasto mieszka vivo ciudad живу місто",
        "diet vegan vegetarian dieta weganka weganin wegetarianka vegana vegano дієта веган",
        "allergy allergic alergia uczulona uczulony alérgica alérgico алергія",
        "pet dog cat pies psa kot kota perro gato собака кіт",
        "partner wife husband żona mąż esposa esposo pareja дружина чоловік",
        "birthday urodziny cumpleaños день народження",
    )
)


def words(text: str) -> list[str]:
    """Folded, lower-case words of ``text`` without function words."""
    return [w for w in folded_words(text) if w not in _STOP]


def _related(a: str, b: str) -> bool:
    if a == b:
        return True
    if len(a) >= _MIN_PREFIX and len(b) >= _MIN_PREFIX:
        n = min(len(a), len(b), 5)
        if a[:n] == b[:n] and min(len(a), len(b)) >= n:
            return True
    return any(a in group and b in group for group in _SYNONYMS)


def topic_section(topic: str) -> BrainSection | None:
    """The Brain section ``topic`` names, if it names one and nothing else."""
    found = words(topic)
    if len(found) != 1:
        return None
    for section, names in _SECTION_WORDS.items():
        if found[0] in {fold(n).casefold() for n in names}:
            return section
    return None


def facts_about(topic: str, facts: Sequence[MemoryItem]) -> list[MemoryItem]:
    """The facts a topic refers to: every fact of a named section, or the facts whose key
    or value shares a (non-function) word with the topic."""
    section = topic_section(topic)
    if section is not None:
        return [f for f in facts if f.section == section.value]
    wanted = words(topic)
    if not wanted:
        return []
    matched = []
    for fact in facts:
        have = words(f"{fact.key or ''} {fact.value or fact.content}".replace("_", " "))
        if any(_related(w, h) for w in wanted for h in have):
            matched.append(fact)
    return matched


def topic_overlap(topic: str, fact: MemoryItem) -> tuple[bool, bool]:
    """Whether the topic shares a word with the fact's key, and with its value (the
    whole content for a fact without a key); a section name matches neither."""
    wanted = words(topic)
    key_words = words((fact.key or "").replace("_", " "))
    value_words = words((fact.value if fact.key else None) or fact.content)
    on_key = any(_related(w, h) for w in wanted for h in key_words)
    on_value = any(_related(w, h) for w in wanted for h in value_words)
    return on_key, on_value
