""" "Where did I work before I moved?": the move a question tells of without naming where
to, read as the latest change of the keys that say where the user lives.

"Before she moved to Warsaw" names a value (:func:`kronika.core.versions.matching_version`
finds ``city: Warsaw``); "before I moved", "przed przeprowadzką", "antes de mudarme",
"до переїзду" name none, yet mean one moment: when the place the user lives last
changed. The keys that say where one lives are those whose concept is ``location``
(:func:`kronika.core.dedup.key_concept`: ``city``, ``miasto``, ``ciudad``, ``місто``,
``location``, ``residence`` …); their histories are read from the index, and the key
whose current value began last gives the move. A key of one value has no move to give.
"""

from __future__ import annotations

from dataclasses import replace

from kronika.core.dedup import key_concept
from kronika.core.model import FACT_TYPES, MemoryItem, RecallFilter
from kronika.core.versions import move_words
from kronika.engine.held import reader_scope
from kronika.engine.keys import KEYS_READ
from kronika.ports import IndexReads

Chains = dict[tuple[str, str], list[MemoryItem]]
"""One key's values of one agent, oldest first, by ``(agent, key)``."""


def home_histories(index: IndexReads, flt: RecallFilter) -> Chains:
    """The histories of the reader's keys that say where one lives, by ``(agent, key)``,
    oldest first, under the recall's narrowing and its reader's view."""
    keys = index.list_keys(reader_scope(flt, types=FACT_TYPES), limit=KEYS_READ)
    chains: Chains = {}
    for key in (k for k in keys if key_concept(k) == "location"):
        for value in key_versions(index, flt, key, flt.agents):
            if value.key == key:
                chains.setdefault((value.agent, key), []).append(value)
    return chains


def key_versions(
    index: IndexReads, flt: RecallFilter, key: str, agents: tuple[str, ...]
) -> list[MemoryItem]:
    """The values ``key`` had in the memory of ``agents`` (multi-valued facts left out),
    oldest first, under the recall's own narrowing (channel, scopes, archive) and its
    reader's view."""
    values = index.list_items(
        replace(
            reader_scope(flt, keys=(key,), types=FACT_TYPES),
            agents=agents,
            scopes=flt.scopes,
            include_superseded=True,
            include_archived=flt.include_archived,
        )
    )
    return sorted(
        (v for v in values if not v.multi), key=lambda v: (v.valid_from or v.created_at, v.id)
    )


def latest_move(chains: Chains) -> tuple[tuple[str, str], int] | None:
    """The ``(agent, key)`` and place of the value a move began last, or ``None`` when no
    key says where one lives with more than one value."""
    moved = [(owner, versions) for owner, versions in chains.items() if len(versions) > 1]
    if not moved:
        return None
    owner, versions = max(
        moved, key=lambda pair: (pair[1][-1].valid_from or pair[1][-1].created_at, pair[0])
    )
    return owner, len(versions) - 1


def moment_words(index: IndexReads, flt: RecallFilter, query: str) -> frozenset[str]:
    """The words of ``query`` that tell of a move ("zanim się *przeprowadziłam*") when
    the reader's keys hold one: they name the moment, and a turn that says
    "przeprowadziłam się" is no answer to where the user worked before it. Empty when
    the question tells of no move or no key says where the user lived before."""
    said = move_words(query)
    if not said or latest_move(home_histories(index, flt)) is None:
        return frozenset()
    return said


__all__ = ["Chains", "home_histories", "key_versions", "latest_move", "moment_words"]
