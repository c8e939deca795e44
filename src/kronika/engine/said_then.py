"""What was said in the period a question names, searched for on its own.

A question that names a period ("What did I do in August?", "Dokąd planowałyśmy
polecieć w styczniu?", "Що я розповідав у серпні про риболовлю?") asks about what was
said then. The searches of the whole memory bring the items closest to its words, and
no item's words hold the day it was said: a turn of that August reads no closer to the
question than a turn of any other month, so in a year of conversations it need not be
among the candidates at all, and the preference for the period (``time_focus``) then
has nothing to prefer. So, when the question names a period:

* the keyword and vector searches also run within it (as
  :func:`~kronika.core.fusion.said_in` reads it: the period and as long again after,
  what the time focus counts as said then), under the recall's other filters, and
  their candidates join those of the whole memory;
* the ``recall_k`` of them closest to the question in meaning (as many as a recall
  returns by default: asking for more results lets no more of the period in) have
  evidence for the relevance floor: the period is the part of the
  question their cosine cannot read. "went to Notting Hill Carnival with my
  housemates" has a cosine of 0.11 with "What did I do at the end of August?", under
  the floor of the default embedder.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from kronika.core.fusion import said_at_other_times, said_in
from kronika.core.model import RecallFilter
from kronika.core.ranking import best_ids, joined
from kronika.core.timeexpr import names_period
from kronika.engine.candidates import NEIGHBOUR_SEEDS, CandidateReads
from kronika.engine.searches import Searches
from kronika.ports import Found, Vector


@dataclass(frozen=True, slots=True)
class SaidThen:
    """The two searches run within the period (None: that search was not run)."""

    lexical: Found | None
    dense: Found | None

    def merged(
        self, lexical: Found | None, dense: Found | None
    ) -> tuple[Found | None, Found | None]:
        """The searches of the whole memory with the period's candidates, best first."""
        return joined(lexical, self.lexical or ()), joined(dense, self.dense or ())

    def closest(self, count: int, candidates: Container[str]) -> list[str]:
        """The ``count`` items said then closest to the question in meaning, of those
        still among ``candidates`` (what tells nothing was left out meanwhile)."""
        return [item_id for item_id, _ in self.dense or () if item_id in candidates][:count]


def search_period(
    searches: Searches,
    words: str | None,
    vector: Vector | None,
    flt: RecallFilter,
    limit: int,
    period: tuple[datetime, datetime],
    *,
    whole_phrase: bool,
) -> SaidThen | None:
    """The searches of ``words`` and ``vector`` among what was said in ``period`` (and
    passes ``flt``: its own ``since`` / ``until`` narrow it further); None when the two
    spans do not meet or there is nothing to search."""
    if words is None and vector is None:
        return None
    start, end = said_in((period[0].timestamp(), period[1].timestamp()))
    since = datetime.fromtimestamp(start, UTC)
    until = datetime.fromtimestamp(end, UTC)
    if flt.since is not None:
        since = max(since, flt.since)
    if flt.until is not None:
        until = min(until, flt.until)
    if since > until:
        return None
    within = replace(flt, since=since, until=until)
    lexical, dense = searches.run(words, vector, within, limit, whole_phrase=whole_phrase)
    return SaidThen(lexical, dense)


__all__ = ["SaidThen", "search_period"]


def naming_period(
    relevance: Mapping[str, float],
    said_at: Mapping[str, float],
    period: tuple[datetime, datetime],
    reads: CandidateReads,
    texts: dict[str, str],
) -> list[str]:
    """Of the best :data:`~kronika.engine.candidates.NEIGHBOUR_SEEDS` candidates, those
    whose text names a date or month within ``period``
    (:func:`~kronika.core.timeexpr.names_period`, read from when each was said): what
    they tell of happens then, whenever it was said. ``texts`` gains the texts read."""
    seeds = best_ids(relevance, NEIGHBOUR_SEEDS)
    texts |= reads.texts([item_id for item_id in seeds if item_id not in texts])
    return [
        item_id
        for item_id in seeds
        if item_id in texts
        and item_id in said_at
        and names_period(texts[item_id], datetime.fromtimestamp(said_at[item_id], UTC), period)
    ]


def said_also_outside(
    relevance: Mapping[str, float],
    said_at: Mapping[str, float],
    period: tuple[datetime, datetime],
    reads: CandidateReads,
    texts: dict[str, str],
) -> list[str]:
    """Of the best :data:`~kronika.engine.candidates.NEIGHBOUR_SEEDS` candidates said in
    ``period``, those a candidate said outside it says word for word
    (:func:`~kronika.core.fusion.said_at_other_times`). ``texts`` gains the texts read:
    every candidate's, once one of the best was said in the period."""
    span = said_in((period[0].timestamp(), period[1].timestamp()))
    seeds = best_ids(relevance, NEIGHBOUR_SEEDS)
    inside = [i for i in seeds if span[0] <= said_at.get(i, -math.inf) <= span[1]]
    if not inside:
        return []
    texts |= reads.texts([i for i in relevance if i not in texts])
    return said_at_other_times(inside, texts, said_at, span)
