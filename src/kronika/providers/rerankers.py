"""A reranker client for the common ``POST …/rerank`` services (the :class:`Reranker` port).

Two request shapes cover the servers that run cross-encoders:

- ``api = "cohere"`` (the default) sends ``{"model", "query", "documents", "top_n"}``
  and reads ``{"results": [{"index", "relevance_score"}]}``: Cohere (``/v2/rerank``),
  Jina, vLLM, llama.cpp's ``llama-server --reranking``, Infinity, LocalAI.
- ``api = "tei"`` sends ``{"query", "texts", "truncate": true}`` and reads
  ``[{"index", "score"}]``: Hugging Face text-embeddings-inference.

The URL is the API root (``http://localhost:8080/v1``, ``https://api.cohere.com/v2``);
``/rerank`` is added unless it is there already. Either answer shape is read whichever
was asked for. Only the standard library; the API key never appears in an error.

>>> config = RerankerConfig("http://localhost:8080/v1", model="bge-reranker-v2-m3", api_key="k")
>>> HttpReranker(config).url
'http://localhost:8080/v1/rerank'
>>> "'k'" in repr(config)
False
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kronika.errors import ConfigError, RerankerError, RerankerUnavailable
from kronika.providers.http import (
    JsonEndpoint,
    Refused,
    Unreachable,
    check_choice,
    config_repr,
    json_reply,
)

__all__ = ["RERANKER_APIS", "HttpReranker", "RerankerConfig"]

RERANKER_APIS = ("cohere", "tei")
MAX_DOCUMENT_CHARS = 2000
"""Characters of one memory sent to the reranker (cross-encoders read ~512 tokens)."""


@dataclass(frozen=True, slots=True)
class RerankerConfig:
    """Where a reranker lives and how to talk to it (see the module's docstring).

    ``retries`` counts the extra attempts after the first on transient failures.
    """

    base_url: str
    model: str = ""
    api: str = "cohere"
    api_key: str | None = None
    timeout: float = 10.0
    retries: int = 1
    backoff: float = 0.5
    extra_headers: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return config_repr(self)


def _endpoint(base_url: str) -> str:
    base = base_url.strip().rstrip("/")
    return base if base.endswith("/rerank") else base + "/rerank"


class HttpReranker:
    """Scores documents against a query with a reranking service over HTTP.

    Raises :class:`RerankerUnavailable` when the service cannot be reached (after
    ``config.retries`` retries of connection errors, timeouts, HTTP 429 and 5xx) and
    :class:`RerankerError` when it refuses the request or answers in another shape.
    """

    def __init__(
        self, config: RerankerConfig, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        if not config.base_url.strip():
            raise ConfigError("no reranker is configured (the server URL is empty)")
        check_choice(config.api, RERANKER_APIS, "reranker api")
        self._config = config
        self._endpoint = JsonEndpoint.configured(
            _endpoint(config.base_url), config, name="the reranker", what="reranker", sleep=sleep
        )

    @property
    def model(self) -> str:
        return self._config.model or self._endpoint.url

    @property
    def url(self) -> str:
        """The endpoint requests go to."""
        return self._endpoint.url

    def __repr__(self) -> str:
        return f"HttpReranker({self._config!r})"

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        texts = [document[:MAX_DOCUMENT_CHARS] for document in documents]
        body: dict[str, Any]
        if self._config.api == "tei":
            body = {"query": query, "texts": texts, "truncate": True}
        else:
            body = {"query": query, "documents": texts, "top_n": len(texts)}
            if self._config.model:
                body["model"] = self._config.model
        try:
            raw = self._endpoint.post(body)
        except Unreachable as exc:
            raise RerankerUnavailable(str(exc)) from None
        except Refused as refused:
            raise RerankerError(
                self._endpoint.refusal(
                    refused, not_found="the server URL, that the server reranks, and the model name"
                )
            ) from None
        return self._scores(raw, len(texts))

    def _scores(self, raw: bytes, count: int) -> list[float]:
        data, preview = json_reply(raw, RerankerError, f"the reranker at {self.url}")
        rows = data.get("results", data.get("data")) if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise RerankerError(f"the reranker at {self.url} sent no results: {preview!r}")
        scores: list[float | None] = [None] * count
        for row in rows:
            index = row.get("index") if isinstance(row, dict) else None
            score = row.get("relevance_score", row.get("score")) if isinstance(row, dict) else None
            if (
                not isinstance(index, int)
                or isinstance(index, bool)
                or not 0 <= index < count
                or scores[index] is not None
                or not isinstance(score, int | float)
                or isinstance(score, bool)
                or not math.isfinite(score)
            ):
                raise RerankerError(
                    f"the reranker at {self.url} sent a result that names no document "
                    f"of the {count} sent, twice, or without a score: {preview!r}"
                )
            scores[index] = float(score)
        if any(score is None for score in scores):
            raise RerankerError(
                f"the reranker at {self.url} scored {sum(s is not None for s in scores)} "
                f"of the {count} documents sent"
            )
        return [score for score in scores if score is not None]
