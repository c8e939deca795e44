"""The Qdrant implementation of :class:`kronika.ports.VectorIndex`.

One collection holds one point per embedded item: its vector (unit length, compared by
dot product, which is cosine) and the payload of :mod:`.payload`. Point ids are UUIDs
derived from item ids (Qdrant takes integers or UUIDs only); the item id itself is
``memory_item_id``. The collection records the embedding model it was built with
(collection metadata): opened with another model or dimension it is created anew and
the caller refills it.

Two ways to reach Qdrant: ``url`` (a server or a cluster: what teams run) or ``path``
(the client's local mode, a folder on disk: one process at a time, a brute-force
search in Python, meant for tests and small memories).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from qdrant_client import QdrantClient
from qdrant_client.http import models as qm
from qdrant_client.http.exceptions import ApiException

from kronika.core.model import RecallFilter
from kronika.errors import IndexError_
from kronika.ports import Vector, VectorPoint
from kronika.stores.qdrant.payload import payload, recall_filter

log = logging.getLogger("kronika")

_NAMESPACE = uuid.UUID("6f1c2f52-4d0e-4a55-9a8e-6b7f5e0c9a11")
_BATCH = 256  # points per upsert request
_KEYWORDS = (
    *("agent", "scope", "status", "type", "user", "channel", "team", "path"),
    *("key_h", "speaker_h", "entities_h", "tags", "source"),
)
_NUMBERS = ("created_at", "valid_start", "valid_to")


def point_id(item_id: str) -> str:
    """The Qdrant id of an item's point: a UUID derived from the item id."""
    return str(uuid.uuid5(_NAMESPACE, item_id))


@contextlib.contextmanager
def _translated(where: str, doing: str) -> Iterator[None]:
    """Qdrant's and the transport's errors become :class:`IndexError_`."""
    try:
        yield
    except (ApiException, httpx.HTTPError, OSError, RuntimeError, ValueError) as exc:
        raise IndexError_(f"the Qdrant vector index at {where} failed ({doing}): {exc}") from exc


class QdrantVectorIndex:
    """Item vectors in one Qdrant collection (see the module docstring)."""

    def __init__(
        self,
        client: QdrantClient,
        *,
        collection: str,
        embedding_model: str,
        dim: int,
        local_path: Path | None = None,
        where: str | None = None,
    ) -> None:
        self._client = client
        self._collection = collection
        self._model = embedding_model
        self._dim = dim
        self._local_path = local_path
        self._where = str(local_path) if local_path is not None else where or "a server"
        self.created = False
        """Whether opening made the collection (new, or anew for another model): it is
        then empty, and the caller fills it from the store of record."""
        with _translated(self._where, "setup"):
            self.created = self._ensure_collection()

    @classmethod
    def connect(
        cls,
        *,
        collection: str,
        embedding_model: str,
        dim: int,
        url: str | None = None,
        path: Path | None = None,
        api_key: str | None = None,
        timeout: float = 10.0,
    ) -> QdrantVectorIndex:
        """Open the collection on a server (``url``) or in a local folder (``path``)."""
        if (url is None) == (path is None):
            raise ValueError("give exactly one of url and path")
        with _translated(str(url or path), "connecting"):
            if url is not None:
                client = QdrantClient(
                    url=url, api_key=api_key, timeout=int(timeout), check_compatibility=False
                )
            else:
                assert path is not None
                Path(path).mkdir(parents=True, exist_ok=True, mode=0o700)
                client = QdrantClient(path=str(path))
        try:
            return cls(
                client,
                collection=collection,
                embedding_model=embedding_model,
                dim=dim,
                local_path=None if path is None else Path(path),
                where=url,
            )
        except BaseException:
            client.close()
            raise

    @property
    def embedding_model(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def collection(self) -> str:
        return self._collection

    def _ensure_collection(self) -> bool:
        if self._client.collection_exists(self._collection):
            config = self._client.get_collection(self._collection).config
            vectors = config.params.vectors
            size = vectors.size if isinstance(vectors, qm.VectorParams) else None
            model = (config.metadata or {}).get("embedding_model")
            if size == self._dim and model == self._model:
                return False
            log.warning(
                "the Qdrant collection %s holds vectors of %s (%s dimensions); it is made anew"
                " for %s (%d)",
                self._collection,
                model,
                size,
                self._model,
                self._dim,
            )
            self._client.delete_collection(self._collection)
        self._create()
        return True

    def _create(self) -> None:
        self._client.create_collection(
            self._collection,
            vectors_config=qm.VectorParams(size=self._dim, distance=qm.Distance.DOT),
            metadata={"embedding_model": self._model, "made_by": "kronika"},
        )
        if self._local_path is not None:
            return  # the local mode has no payload indexes (it scans every point)
        self._client.create_payload_index(
            self._collection,
            "tenant",
            qm.KeywordIndexParams(type=qm.KeywordIndexType.KEYWORD, is_tenant=True),
        )
        for name in _KEYWORDS:
            self._client.create_payload_index(self._collection, name, qm.PayloadSchemaType.KEYWORD)
        for name in _NUMBERS:
            self._client.create_payload_index(self._collection, name, qm.PayloadSchemaType.FLOAT)

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        structs: list[qm.PointStruct] = []
        for point in points:
            flat = np.asarray(point.vector, dtype=np.float64).reshape(-1)
            if flat.size != self._dim:
                raise IndexError_(
                    f"the vector of {point.item.id} has {flat.size} dimensions;"
                    f" model {self._model} has {self._dim}"
                )
            norm = float(np.linalg.norm(flat))
            unit = flat / norm if norm > 0 else flat
            structs.append(
                qm.PointStruct(
                    id=point_id(point.item.id),
                    vector=unit.astype(np.float32).tolist(),
                    payload=payload(point.item, point.text_hash),
                )
            )
        with _translated(self._where, "write"):
            for start in range(0, len(structs), _BATCH):
                self._client.upsert(
                    self._collection, points=structs[start : start + _BATCH], wait=True
                )

    def delete(self, ids: Sequence[str] = (), *, source: tuple[str, str] | None = None) -> None:
        with _translated(self._where, "delete"):
            if ids:
                wanted: list[qm.ExtendedPointId] = sorted({point_id(i) for i in ids})
                for start in range(0, len(wanted), _BATCH):
                    chunk = wanted[start : start + _BATCH]
                    self._client.delete(
                        self._collection, points_selector=qm.PointIdsList(points=chunk), wait=True
                    )
            if source is not None:
                agent, path = source
                where = qm.Filter(
                    must=[
                        qm.FieldCondition(key="agent", match=qm.MatchValue(value=agent)),
                        qm.FieldCondition(key="path", match=qm.MatchValue(value=path)),
                    ]
                )
                self._client.delete(
                    self._collection, points_selector=qm.FilterSelector(filter=where), wait=True
                )

    def search(self, query: Vector, flt: RecallFilter, limit: int) -> list[tuple[str, float]]:
        flat = np.asarray(query, dtype=np.float64).reshape(-1)
        if flat.size != self._dim:
            raise IndexError_(
                f"query vector has {flat.size} dimensions; model {self._model} has {self._dim}"
            )
        if limit <= 0:
            return []
        norm = float(np.linalg.norm(flat))
        unit = flat / norm if norm > 0 else flat
        with _translated(self._where, "search"):
            found = self._client.query_points(
                self._collection,
                query=unit.astype(np.float32).tolist(),
                query_filter=recall_filter(flt),
                limit=limit,
                with_payload=["memory_item_id"],
            ).points
        return [(str((p.payload or {})["memory_item_id"]), float(p.score)) for p in found]

    def count(self, flt: RecallFilter | None = None) -> int:
        with _translated(self._where, "count"):
            return self._client.count(
                self._collection,
                count_filter=None if flt is None else recall_filter(flt),
                exact=True,
            ).count

    def reset(self) -> None:
        with _translated(self._where, "reset"):
            self._client.delete_collection(self._collection)
            self._create()

    def compact(self) -> None:
        """In the local mode, rewrite the collection's file so that deleted points leave
        no bytes behind (SQLite keeps deleted rows in free pages). A server removes
        deleted points when it optimizes its segments (see docs/deployment.md)."""
        if self._local_path is None:
            return
        storage = self._local_path / "collection" / self._collection / "storage.sqlite"
        if not storage.is_file():
            return
        with (
            _translated(self._where, "compaction"),
            contextlib.closing(sqlite3.connect(storage)) as conn,
        ):
            # SQLite built with SECURE_DELETE (Debian's) already zeroes deleted rows; the
            # client's connection has the same default as this one
            (secure,) = conn.execute("PRAGMA secure_delete").fetchone()
            if secure != 1:
                conn.execute("VACUUM")

    def stats(self) -> dict[str, Any]:
        return {
            "engine": "qdrant",
            "where": str(self._local_path) if self._local_path is not None else "server",
            "collection": self._collection,
            "points": self.count(),
        }

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._client.close()
