"""Recall's two searches: keyword and vector, under one filter.

An index on a server answers each search in a round trip. Such an index implements
:class:`~kronika.ports.HybridSearch` and :class:`Searches` asks it both at once; an
index in this process is asked one search at a time. Either way recall gets the same
lists, best first (ties by id: a rebuilt index ranks as before).
"""

from __future__ import annotations

from kronika.core.model import RecallFilter
from kronika.core.ranking import best_first
from kronika.ports import Found, HybridSearch, IndexSearch, Vector


class Searches:
    """The keyword and vector search of one index (what it can do is asked once)."""

    def __init__(self, index: IndexSearch) -> None:
        self._index = index
        # an isinstance of a runtime Protocol is slow: asked once, not at every recall
        self._hybrid = index.search_hybrid if isinstance(index, HybridSearch) else None

    def run(
        self,
        words: str | None,
        vector: Vector | None,
        flt: RecallFilter,
        limit: int,
        *,
        whole_phrase: bool = True,
    ) -> tuple[Found | None, Found | None]:
        """The keyword search of ``words`` and the vector search of ``vector`` (None: that
        search is not run, and its list is None), best first."""
        if words is not None and vector is not None and self._hybrid is not None:
            lexical, dense = self._hybrid(words, vector, flt, limit, whole_phrase=whole_phrase)
            return best_first(lexical), best_first(dense)
        return (
            None
            if words is None
            else best_first(
                self._index.search_lexical(words, flt, limit, whole_phrase=whole_phrase)
            ),
            None if vector is None else best_first(self._index.search_vector(vector, flt, limit)),
        )
