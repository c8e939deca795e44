"""Which Brain section a remembered fact belongs in (SPEC M2).

The person may always name the section; when they do not, a few multilingual cue
words (English, Polish, Spanish, Ukrainian) in the key or the value decide, and
everything else is a fact about the User.
"""

from __future__ import annotations

import re

from kronika.core.model import BrainSection

_CUES: tuple[tuple[BrainSection, re.Pattern[str]], ...] = (
    (
        BrainSection.PREFERENCES,
        re.compile(
            r"pref|like|love|hate|favou?rit|enjoy|dislike|lubi|woli|ulubion|nie znosi|"
            r"gusta|prefier|favorit|odia|encanta|подоба|люб|улюблен|ненавид|вподоб",
            re.IGNORECASE,
        ),
    ),
    (
        BrainSection.DECISIONS,
        re.compile(
            r"decid|decision|agreed|always|never|rule|ustal|zdecydow|zawsze|nigdy|zasad|"
            r"decisi|acord|siempre|nunca|regla|виріш|домовил|завжди|ніколи|правил",
            re.IGNORECASE,
        ),
    ),
    (
        BrainSection.CURRENT,
        re.compile(
            r"project|working on|current|goal|deadline|projekt|pracuje nad|obecn|cel\b|"
            r"proyecto|trabaja en|actual|meta\b|проєкт|проект|працює над|поточн|мета\b",
            re.IGNORECASE,
        ),
    ),
)

_ALIASES = {
    "user": BrainSection.USER,
    "użytkownik": BrainSection.USER,
    "preferences": BrainSection.PREFERENCES,
    "preferencje": BrainSection.PREFERENCES,
    "decisions": BrainSection.DECISIONS,
    "ustalenia": BrainSection.DECISIONS,
    "current": BrainSection.CURRENT,
    "bieżące": BrainSection.CURRENT,
}

SECTION_NAMES = tuple(_ALIASES)
"""Every name :func:`parse_section` reads (in any case, spaces around allowed)."""


def guess_section(key: str | None, value: str) -> BrainSection:
    """The section whose cue words appear first in the key, then the value; else User."""
    for text in (key or "", value):
        for section, pattern in _CUES:
            if pattern.search(text):
                return section
    return BrainSection.USER


def parse_section(name: str) -> BrainSection:
    """A section named by a person (any case, English or Polish) → :class:`BrainSection`."""
    try:
        return _ALIASES[name.strip().casefold()]
    except KeyError:
        choices = ", ".join(s.value for s in BrainSection)
        raise ValueError(f"unknown Brain section {name!r}; choose one of {choices}") from None
