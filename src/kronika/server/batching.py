"""Query embeddings of concurrent recalls, computed together in one forward pass.

Embedding a recall's query is one of the largest parts of its cost with the default
model, and the model's cost per text falls steeply with the batch: measured on a
2-core machine with one BLAS thread, 2.7 ms for one query alone, 1.3 ms each in a
batch of 4, 0.9 ms each in a batch of 16 (docs/benchmarks.md). So the server does not
embed each query on its own: :class:`QueryBatcher` collects the queries of the recalls
that arrive together and embeds them in one call of the embedder's ``embed_documents``.

* A recall alone (no other recall in progress in this process) is embedded at once:
  a lone caller waits for nothing.
* Otherwise its query waits at most ``wait_s`` (1 ms), or until ``max_batch`` queries
  are queued, while the event loop reads the requests that arrived meanwhile; then
  the whole batch is embedded in one forward pass.

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

from kronika.ports import Embedder, Vector

MAX_BATCH = 32
WAIT_S = 0.001

_Waiting = list[tuple[str, "asyncio.Future[Vector | None]"]]


class QueryBatcher:
    """Embeds the queries handed to :meth:`embed` in shared batches (module docstring).
    Used from one event loop."""

    def __init__(
        self, embedder: Embedder, *, max_batch: int = MAX_BATCH, wait_s: float = WAIT_S
    ) -> None:
        self._embedder = embedder
        self._max_batch = max_batch
        self._wait_s = wait_s
        self._queued: _Waiting = []
        self._timer: asyncio.TimerHandle | None = None
        self.batches = 0
        """Forward passes run so far (benchmarks and tests read it)."""
        self.texts = 0
        """Texts embedded so far."""

    async def embed(self, text: str, *, alone: bool = False) -> Vector | None:
        """``text``'s query vector, or ``None`` when the model could not embed it.
        ``alone``: no other recall is in progress, so nothing waits for company."""
        if alone and not self._queued:
            self.batches += 1
            self.texts += 1
            return self._compute([text])[0]
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Vector | None] = loop.create_future()
        self._queued.append((text, future))
        if len(self._queued) >= self._max_batch:
            self._flush()
        elif self._timer is None:
            self._timer = loop.call_later(self._wait_s, self._flush)
        return await future

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._queued = self._queued, []
        if not batch:
            return
        vectors = self._compute([text for text, _ in batch])
        self.batches += 1
        self.texts += len(batch)
        for (_, future), vector in zip(batch, vectors, strict=True):
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
