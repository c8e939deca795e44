"""What one recall reads of its candidates once both searches have answered.

Recall asks the index for the best candidates' conversation neighbours, the score
columns of every candidate (and of those neighbours), and the text of a few items.
An index in this process answers each question in microseconds; an index on a
server answers each in a round trip, which on a busy machine costs more than the
question. Such an index implements :class:`~kronika.ports.CandidateReader` and
:class:`CandidateReads` asks it everything at once, before recall knows which of
the rows it will use; questions outside what was read ahead go to the index as
before. Either way recall gets the same answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kronika.core.model import MemoryItem, RecallFilter
from kronika.ports import (
    CandidateReader,
    FeatureRow,
    ItemIndex,
    ItemTexts,
    ScoreFeatures,
    Usage,
    UsageApart,
)

NEIGHBOUR_SEEDS = 50
"""Candidates whose conversation neighbours are looked up (the best by relevance), and
the most whose text a recall reads for one of its preferences."""


class CandidateReads:
    """Neighbours, score columns and items of one recall's candidates.

    ``candidates`` are the ids both searches found, ``seeds`` the best of them whose
    neighbours (``window`` places around) are wanted (none: no neighbours).
    """

    def __init__(
        self,
        index: ItemIndex,
        candidates: Sequence[str],
        seeds: Sequence[str],
        flt: RecallFilter,
        window: int,
    ) -> None:
        self._index = index
        self._features: dict[str, FeatureRow] = {}
        self._items: Mapping[str, MemoryItem] = {}
        self._asked: set[str] = set()
        self._apart = index if isinstance(index, UsageApart) else None
        if not seeds:
            self.links: dict[str, list[tuple[str, int]]] = {}
        elif isinstance(index, CandidateReader):
            rows = index.read_candidates(candidates, seeds, flt, window)
            self.links = rows.neighbours
            self._features = rows.features
            self._items = rows.items
            self._asked = set(candidates) | {n for pairs in self.links.values() for n, _ in pairs}
        else:
            self.links = index.neighbours(seeds, flt, window)

    def score_features(self, ids: Sequence[str]) -> ScoreFeatures:
        """As :meth:`ItemIndex.score_features` (read ahead when ``ids`` were asked), the
        usage columns possibly unread (``usage_read`` False; then :meth:`usage` reads
        them for the ids that need them)."""
        wanted = list(dict.fromkeys(ids))
        if not self._asked.issuperset(wanted):
            if self._apart is not None:
                return self._apart.score_columns(wanted)
            return self._index.score_features(wanted)
        held = self._features
        return ScoreFeatures.from_rows({i: held[i] for i in wanted if i in held})

    def usage(self, ids: Sequence[str]) -> Usage:
        """Usage statistics of ``ids`` that :meth:`score_features` left unread; only an
        index that keeps them apart (:class:`~kronika.ports.UsageApart`) leaves them so."""
        if self._apart is None:
            raise ValueError("this index gives usage with the score features")
        return self._apart.usage(ids)

    def texts(self, ids: Sequence[str]) -> dict[str, str]:
        """``{id: content}`` of ``ids`` (unknown skipped): from the items read ahead, else
        from an index that reads text alone (:class:`~kronika.ports.ItemTexts`), else
        from whole items."""
        found = {i: self._items[i].content for i in ids if i in self._items}
        unread = [i for i in dict.fromkeys(ids) if i not in found]
        if not unread:
            return found
        return found | read_texts(self._index, unread)

    def get_items(self, ids: Sequence[str]) -> list[MemoryItem]:
        """As :meth:`ItemIndex.get_items`: items in the order of ``ids``, unknown skipped."""
        unread = [i for i in dict.fromkeys(ids) if i not in self._items]
        found = {item.id: item for item in self._index.get_items(unread)} if unread else {}
        return [
            item for item in (self._items.get(i) or found.get(i) for i in ids) if item is not None
        ]


def read_texts(index: ItemIndex, ids: Sequence[str]) -> dict[str, str]:
    """``{id: content}`` of ``ids`` (unknown skipped): from an index that reads text alone
    (:class:`~kronika.ports.ItemTexts`), else from whole items."""
    if isinstance(index, ItemTexts):
        return index.item_texts(ids)
    return {item.id: item.content for item in index.get_items(ids)}
