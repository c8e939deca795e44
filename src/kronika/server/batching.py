"""Query embeddings of concurrent recalls, computed together in one forward pass.

Embedding a recall's query is one of the largest parts of its cost with the default
model, and the model's cost per text falls steeply with the batch: measured on a
2-core machine with one BLAS thread, 2.7 ms for one query alone, 1.3 ms each in a
batch of 4, 0.9 ms each in a batch of 16 (docs/benchmarks.md). So the server does not
embed each query on its own: :class:`QueryBatcher` collects the queries of the recalls
that arrive together and embeds them in one call of the embedder's ``embed_documents``.

* A query is queued, and the batch goes when the event loop next comes round (or at
  once when ``max_batch`` queries are queued): every request the loop read meanwhile
  has reached the batcher by then, since nothing on the way to it waits. A recall alone
  waits for one turn of the loop, microseconds, not for a timer. (Deciding "alone" by
  the recalls in progress embedded every query by itself under load: the requests
  read together each ran to the batcher before the next one started, each finding no
  other recall in progress.)
* The batch's vectors are handed to each index that will search them
  (``score_together``, :mod:`kronika.stores.sqlite.batch`), so their vector searches
  read the matrix of stored vectors once for the whole batch, not once per query.

The forward pass runs on the event loop's thread, like the search. In a thread of its
own it was slower, not faster: the model's tokenizer is Python, and with the search
holding the interpreter lock on the loop's thread the two waited on each other
(measured: 2 × the time per recall at 16 clients).

A batch that fails is embedded again text by text, so one bad text fails only its own
recall; a text that still fails gets ``None``, and the recall then embeds it itself and
reports the error as it always does. Nothing is cached: every query is embedded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from kronika.ports import Embedder, Vector

MAX_BATCH = 32

_Waiting = list[tuple[str, "ScoresTogether | None", "asyncio.Future[Vector | None]"]]


@runtime_checkable
class ScoresTogether(Protocol):
    """An index that can score a batch of query vectors in one pass (the SQLite index)."""

    def score_together(self, queries: Sequence[Vector]) -> None: ...


class QueryBatcher:
    """Embeds the queries handed to :meth:`embed` in shared batches (module docstring).
    Used from one event loop."""

    def __init__(self, embedder: Embedder, *, max_batch: int = MAX_BATCH) -> None:
        self._embedder = embedder
        self._max_batch = max_batch
        self._queued: _Waiting = []
        self._pending: asyncio.Handle | None = None
        self.batches = 0
        """Forward passes run so far (benchmarks and tests read it)."""
        self.texts = 0
        """Texts embedded so far."""

    async def embed(self, text: str, *, index: object = None) -> Vector | None:
        """``text``'s query vector, or ``None`` when the model could not embed it.
        ``index``: where the recall will search, told of the batch's vectors when it can
        score them together (:class:`ScoresTogether`)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Vector | None] = loop.create_future()
        scorer = index if isinstance(index, ScoresTogether) else None
        self._queued.append((text, scorer, future))
        if len(self._queued) >= self._max_batch:
            self._flush()
        elif self._pending is None:
            self._pending = loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        batch, self._queued = self._queued, []
        if not batch:
            return
        vectors = self._compute([text for text, _, _ in batch])
        self.batches += 1
        self.texts += len(batch)
        scorers = {id(s): s for _, s, _ in batch if s is not None}
        for key, scorer in scorers.items():
            mine = [v for (_, s, _), v in zip(batch, vectors, strict=True) if id(s) == key]
            scorer.score_together([v for v in mine if v is not None])
        for (_, _, future), vector in zip(batch, vectors, strict=True):
            if not future.done():  # its request may have been cancelled meanwhile
                future.set_result(vector)

    def _compute(self, texts: Sequence[str]) -> list[Vector | None]:
        try:
            rows = self._embedder.embed_documents(texts)
        except Exception:
            if len(texts) == 1:
                return [None]
            return [self._compute([text])[0] for text in texts]
        return [rows[i] for i in range(len(texts))]
