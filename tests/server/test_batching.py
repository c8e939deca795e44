"""Queries of concurrent recalls are embedded together, and answer as recalls alone do."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.server.conftest import Served, build_tenants

from kronika import wire
from kronika.core.query import RecallQuery
from kronika.ports import Vector
from kronika.providers.embedders import HashingEmbedder
from kronika.server.access import Caller
from kronika.server.batching import QueryBatcher
from kronika.server.keys import ApiKey, Role
from kronika.server.service import Service

NOW = datetime(2030, 1, 1, tzinfo=UTC)


class Refusing(HashingEmbedder):
    """The hashing model, failing on any batch that holds the text ``boom``."""

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        if "boom" in texts:
            raise RuntimeError("cannot embed boom")
        return super().embed_documents(texts)


def test_queries_that_arrive_together_share_one_forward_pass() -> None:
    model = HashingEmbedder()
    texts = [f"where did parcel {n} go" for n in range(10)]

    async def main() -> list[Vector | None]:
        batcher = QueryBatcher(model)
        found = await asyncio.gather(*(batcher.embed(t) for t in texts))
        assert (batcher.batches, batcher.texts) == (1, 10)
        return list(found)

    for text, vector in zip(texts, asyncio.run(main()), strict=True):
        assert vector is not None
        assert np.allclose(vector, model.embed_query(text))


def test_a_recall_alone_waits_for_nobody_and_a_full_batch_goes_at_once() -> None:
    async def main() -> None:
        batcher = QueryBatcher(HashingEmbedder(), max_batch=4)
        assert await asyncio.wait_for(batcher.embed("alone"), 1) is not None
        assert batcher.batches == 1
        found = await asyncio.gather(*(batcher.embed(f"q{n}") for n in range(9)))
        assert all(vector is not None for vector in found)
        assert (batcher.batches, batcher.texts) == (4, 10)  # 4 + 4 at once, then 1

    asyncio.run(main())


def test_recalls_whose_requests_arrive_together_share_one_forward_pass(tmp_path: Path) -> None:
    """As the server runs them: each request runs to the batcher without waiting for
    anything, before the next one starts; their queries still go in one batch, and
    each recall finds what it finds in process."""
    memories = build_tenants(tmp_path)
    acme = memories["acme"]
    for n in range(60):
        acme.remember(f"crate {n} waits in bay{n}q beside the {n % 7} pallets", agent="alice")
    service = Service(memories)
    caller = Caller(ApiKey(id="k", tenant="acme", role=Role.ADMIN))
    queries = [f"which crate is in bay{n}q" for n in range(0, 60, 5)]
    try:
        alone = [
            wire.recall(acme.recall(q, agent="alice", k=5, record_access=False, now=NOW))
            for q in queries
        ]

        async def together() -> list[dict[str, Any]]:
            return list(
                await asyncio.gather(
                    *(
                        service.recall_batched(
                            caller, RecallQuery(q, agent="alice", k=5, record_access=False), now=NOW
                        )
                        for q in queries
                    )
                )
            )

        assert asyncio.run(together()) == alone
        batcher = next(iter(service._batchers.values()))
        assert (batcher.batches, batcher.texts) == (1, len(queries))
    finally:
        service.close()


def test_one_text_the_model_refuses_fails_only_itself() -> None:
    async def main() -> list[Vector | None]:
        batcher = QueryBatcher(Refusing())
        return list(await asyncio.gather(*(batcher.embed(t) for t in ("one", "boom", "two"))))

    one, boom, two = asyncio.run(main())
    assert boom is None
    assert one is not None and two is not None


def test_concurrent_recalls_through_the_server_find_what_one_recall_finds(
    served: Served,
) -> None:
    for n in range(12):
        made = served.call(
            "POST", "/v1/agents/alice/memories", {"content": f"crate {n} in bay{n}q"}
        )
        assert made.status == 200

    def body(n: int) -> dict[str, object]:
        return {"query": f"bay{n}q", "k": 3, "record_access": False}

    alone = {n: served.call("POST", "/v1/agents/alice/recall", body(n)).body for n in range(12)}
    together: dict[int, object] = {}

    def ask(n: int) -> None:
        together[n] = served.call("POST", "/v1/agents/alice/recall", body(n)).body

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for n in range(12):
        ids = [hit["item"]["id"] for hit in alone[n]["hits"]]
        assert ids == [hit["item"]["id"] for hit in together[n]["hits"]]  # type: ignore[index]
        assert alone[n]["hits"][0]["item"]["content"] == f"crate {n} in bay{n}q"
    batcher = next(iter(served.service._batchers.values()))
    assert batcher.texts == 24  # each query went through the batcher, none was cached


@pytest.mark.parametrize("mode", ["lexical", "vector"])
def test_recall_modes_still_answer(served: Served, mode: str) -> None:
    served.call("POST", "/v1/agents/alice/memories", {"content": "the kiln is in shed nine"})
    found = served.call("POST", "/v1/agents/alice/recall", {"query": "kiln shed", "mode": mode})
    assert found.status == 200
    assert found.body["hits"][0]["item"]["content"] == "the kiln is in shed nine"
