"""A configured reranker consulted by recall (:mod:`kronika.engine.recall`): it reads the
best ``reranker_depth`` candidates beside the query and its scores are blended into
theirs. If it cannot be used, recall keeps its own order, says so in the result's notes,
and leaves it alone for a while (:data:`RERANKER_REST`, doubling with each failure in a
row up to :data:`RERANKER_LONGEST_REST`)."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from datetime import datetime

from kronika.core.model import MemoryItem, RecallFilter
from kronika.core.scoring import ScoreWeights
from kronika.engine.best import best
from kronika.engine.candidates import CandidateReads
from kronika.engine.held import audience_of
from kronika.errors import RerankerError
from kronika.ports import Reranker, ScoreFeatures

log = logging.getLogger("kronika.recall")

RERANKER_REST = 30.0
"""Seconds a reranker that failed is left alone (recall keeps its own order meanwhile);
the rest doubles with each failure in a row, up to :data:`RERANKER_LONGEST_REST`."""
RERANKER_LONGEST_REST = 600.0


class Reranking:
    """The reranker of one :class:`~kronika.engine.recall.Recaller`, and how long it
    rests after failures in a row (read on ``monotonic``)."""

    def __init__(
        self,
        reranker: Reranker,
        depth: int,
        weights: ScoreWeights,
        monotonic: Callable[[], float],
    ) -> None:
        self._reranker = reranker
        self._depth = depth
        self._weights = weights
        self._monotonic = monotonic
        self._rests_until = 0.0
        self._failures = 0

    def scores(
        self,
        query: str,
        flt: RecallFilter,
        features: ScoreFeatures,
        relevance: Mapping[str, float],
        moment: datetime,
        fetched: dict[str, MemoryItem],
        reads: CandidateReads,
    ) -> tuple[dict[str, float], str | None]:
        """The reranker's scores of the best ``reranker_depth`` candidates (by R3
        score), and a note when it could not be used. ``fetched`` gains their items."""
        left = self._rests_until - self._monotonic()
        if left > 0:
            return {}, (
                f"the reranker failed {self._failures} time(s) in a row and is asked "
                f"again in {left:.0f} s; results keep recall's own order"
            )
        top = best(features, relevance, moment, self._weights, self._depth, reads.usage)
        ids = [w.item_id for w in top]
        unread = [item_id for item_id in ids if item_id not in fetched]
        fetched |= audience_of(reads.get_items(unread), flt)  # nothing else is sent
        ids = [item_id for item_id in ids if item_id in fetched]
        if len(ids) < 2:
            return {}, None
        documents = [rerank_text(fetched[item_id]) for item_id in ids]
        try:
            scores = self._reranker.rerank(query, documents)
        except RerankerError as exc:
            return {}, self._failed(str(exc))
        if len(scores) != len(ids) or not all(math.isfinite(score) for score in scores):
            return {}, self._failed(
                f"the reranker gave {len(scores)} scores for {len(ids)} candidates"
                if len(scores) != len(ids)
                else "the reranker gave a score that is not a finite number"
            )
        self._failures = 0
        log.debug("reranked the best %d candidates", len(ids))
        return dict(zip(ids, scores, strict=True)), None

    def _failed(self, why: str) -> str:
        """Rest the reranker (longer after each failure in a row); the note to give."""
        rest = min(RERANKER_REST * 2 ** min(self._failures, 10), RERANKER_LONGEST_REST)
        self._failures += 1
        self._rests_until = self._monotonic() + rest
        log.warning("reranking skipped for %.0f s: %s", rest, why)
        return f"results keep recall's own order: {why}"


def rerank_text(item: MemoryItem) -> str:
    """What the reranker reads of a memory: its text, after its speaker's name if any."""
    return f"{item.speaker}: {item.content}" if item.speaker else item.content
