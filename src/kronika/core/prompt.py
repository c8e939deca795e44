"""Plain-text blocks that put memory into a prompt (SPEC I6, R4, M1, M2).

Every renderer returns ``""`` when it has nothing to show, so a caller can join
blocks without leaving empty headings in the prompt. One fact is always one line:
``- key: value`` for a keyed fact, ``- content`` otherwise, with line breaks inside
a fact folded into spaces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from kronika.core.decay import weakest_first
from kronika.core.model import BrainSection, MemoryItem

_SECTION_ORDER = tuple(section.value for section in BrainSection)
_BY_FOLDED = {name.casefold(): name for name in _SECTION_ORDER}


def fact_line(item: MemoryItem) -> str:
    """``"- key: value"`` for a keyed fact (value falls back to content), else ``"- content"``."""
    if item.key:
        value = item.value if item.value is not None else item.content
        text = f"{item.key}: {value}"
    else:
        text = item.content
    return "- " + " ".join(text.split())


def _grouped(
    facts: Sequence[MemoryItem], default: str | None
) -> list[tuple[str | None, list[MemoryItem]]]:
    """Facts grouped by section: Brain sections in their fixed order, then others as met.

    A section name matching a Brain section case-insensitively is that section; a fact
    without a section goes to ``default``.
    """
    groups: dict[str | None, list[MemoryItem]] = {}
    for item in facts:
        section = item.section.strip() if item.section else default
        if section is not None:
            section = _BY_FOLDED.get(section.casefold(), section)
        groups.setdefault(section, []).append(item)

    def rank(name: str | None) -> int:
        if name is None:
            return -1
        return _SECTION_ORDER.index(name) if name in _SECTION_ORDER else len(_SECTION_ORDER)

    # sorted() is stable, so non-Brain sections keep their first-appearance order
    return sorted(groups.items(), key=lambda pair: rank(pair[0]))


def render_memory_block(facts: Sequence[MemoryItem]) -> str:
    """The ``<memory>`` block of SPEC I6; ``""`` when there are no facts.

    Facts without a section come first, then ``## Section`` groups (User, Preferences,
    Decisions, Current, then any other section in order of first appearance)::

        <memory>
        - favourite food: pierogi
        ## Preferences
        - prefers short answers
        </memory>
    """
    if not facts:
        return ""
    lines = ["<memory>"]
    for section, items in _grouped(facts, default=None):
        if section is not None:
            lines.append(f"## {section}")
        lines.extend(fact_line(item) for item in items)
    lines.append("</memory>")
    return "\n".join(lines)


def _day(moment: datetime) -> str:
    return moment.date().isoformat()


def render_long_term_block(relevant: Sequence[MemoryItem], static: Sequence[MemoryItem]) -> str:
    """The ``LONG_TERM_MEMORY:`` block of SPEC R4; ``""`` when both lists are empty.

    Static long-term facts first, then the relevant ones in the order given; an item
    appearing twice (same id) is listed once, at its first place. Each line carries
    the day the item was created: ``- [2025-11-27] city: Kraków``.
    """
    seen: set[str] = set()
    lines = ["LONG_TERM_MEMORY:"]
    for item in (*static, *relevant):
        if item.id in seen:
            continue
        seen.add(item.id)
        lines.append(f"- [{_day(item.created_at)}] {fact_line(item)[2:]}")
    return "\n".join(lines) if seen else ""


def render_brain(agent: str, facts: Sequence[MemoryItem]) -> str:
    """The Brain (SPEC M2) as the agent sees it; ``""`` when there are no facts.

    ``# Brain of <agent>`` then ``## User``, ``## Preferences``, ``## Decisions``,
    ``## Current`` (empty ones omitted; a fact without a section counts as User;
    any other section follows, in order of first appearance). Render only the facts
    the agent should see: current, not archived ones.
    """
    if not facts:
        return ""
    lines = [f"# Brain of {agent}"]
    for section, items in _grouped(facts, default=BrainSection.USER.value):
        lines.append("")
        lines.append(f"## {section}")
        lines.extend(fact_line(item) for item in items)
    return "\n".join(lines)


def choose_archive(
    facts: Sequence[MemoryItem],
    *,
    budget: int,
    count: Callable[[str], int],
    now: datetime | None = None,
    half_life_days: float = 90.0,
) -> list[str]:
    """Ids of the facts to move to the archive so the rendered Brain fits ``budget`` tokens.

    With ``now``, the weakest leave first: importance that decays while unused,
    reinforced by use (:func:`kronika.core.decay.strength`). Without it, the least used
    first: ``access_count`` ascending, then the oldest ``last_accessed_at`` (else
    ``updated_at``), then id for a stable order. Facts are removed one at a time until
    ``count(render_brain(...)) <= budget``; nothing is archived when the Brain already
    fits. The returned ids are in removal order.
    """
    if not facts:
        return []
    agent = facts[0].agent
    remaining = list(facts)
    if count(render_brain(agent, remaining)) <= budget:
        return []
    order = (
        weakest_first(facts, now, half_life_days)
        if now is not None
        else sorted(
            facts,
            key=lambda f: (
                f.access_count,
                f.last_accessed_at if f.last_accessed_at is not None else f.updated_at,
                f.id,
            ),
        )
    )
    archived: list[str] = []
    for victim in order:
        remaining = [f for f in remaining if f.id != victim.id]
        archived.append(victim.id)
        if count(render_brain(agent, remaining)) <= budget:
            break
    return archived
