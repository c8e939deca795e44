"""Qdrant as an optional vector index (the ``[qdrant]`` extra).

:func:`open_vector_index` is the way in: it imports the client only when asked, and
says how to install it when it is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kronika.errors import ConfigError

if TYPE_CHECKING:
    from kronika.stores.qdrant.index import QdrantVectorIndex

INSTALL_HINT = "pip install 'kronika[qdrant]'"


def open_vector_index(
    *,
    collection: str,
    embedding_model: str,
    dim: int,
    url: str | None = None,
    path: Path | None = None,
    api_key: str | None = None,
    timeout: float = 10.0,
) -> QdrantVectorIndex:
    """The Qdrant collection at ``url`` (a server) or ``path`` (local mode)."""
    try:
        from kronika.stores.qdrant.index import QdrantVectorIndex
    except ImportError as exc:
        raise ConfigError(
            f"a Qdrant vector index (qdrant_url / qdrant_path) needs the qdrant extra:"
            f" {INSTALL_HINT} ({exc})"
        ) from exc
    return QdrantVectorIndex.connect(
        collection=collection,
        embedding_model=embedding_model,
        dim=dim,
        url=url,
        path=path,
        api_key=api_key,
        timeout=timeout,
    )


__all__ = ["INSTALL_HINT", "open_vector_index"]
