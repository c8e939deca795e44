"""Entity names for items parsed from Markdown.

``entities_of(text, *explicit)`` = the names the item states explicitly (``ent=``
metadata, the entity page it lives on) followed by what
:func:`kronika.core.entities.extract_entities` finds in the text (``@mentions`` and
proper nouns), deduplicated case-insensitively in order of first appearance.
"""

from __future__ import annotations

from collections.abc import Iterable

from kronika.core.entities import extract_entities, normalize_entity


def merge_entities(*groups: Iterable[str]) -> tuple[str, ...]:
    """Concatenate name lists, dropping blanks and case-insensitive duplicates."""
    seen: set[str] = set()
    out: list[str] = []
    for group in groups:
        for name in group:
            key = normalize_entity(name)
            if key and key not in seen:
                seen.add(key)
                out.append(name.strip())
    return tuple(out)


def entities_of(text: str, *explicit: str) -> tuple[str, ...]:
    """``explicit`` names, then the names found in ``text``."""
    return merge_entities(explicit, extract_entities(text))
