"""A write's new texts are embedded once, whichever index holds them: an index that
re-indexes a fact file whole where a few of its rows changed (a vector service;
``patches_rows`` False) is not first asked for a patch it refuses, whose vectors were
made and then made again by the re-index; and a patch refused (PostgreSQL, when
another worker wrote the file since) keeps the vectors it was given for the re-index.
With a hosted embedding model every text embedded is paid for."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory, load_settings
from kronika.providers.embedders import HashingEmbedder


class _Counting(HashingEmbedder):
    """The hashing model, counting every text it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return super().embed_documents(texts)


@pytest.mark.parametrize("team", [False, True], ids=["local", "team"])
def test_each_remembered_fact_is_embedded_once(
    request: pytest.FixtureRequest, tmp_path: Path, team: bool
) -> None:
    url = ""
    if team:
        pytest.importorskip("psycopg", reason="the postgres extra is not installed")
        url = request.getfixturevalue("postgres_url")
    settings = load_settings(tmp_path / "home", environ={}, embedder="hashing", database_url=url)
    embedder = _Counting()
    with build_memory(settings, create=True, embedder=embedder) as memory:
        memory.remember("the first fact", key="first")
        for n, city in enumerate(["Gdańsk", "Toruń", "Lublin", "Opole"]):
            embedder.texts.clear()
            memory.remember(f"I visited {city} in spring", key=f"trip_{n}")
            assert len(embedder.texts) == 1, embedder.texts
            assert city in embedder.texts[0]
        embedder.texts.clear()
        memory.remember("I moved to Kraków", key="city")
        memory.remember("I moved to Wrocław", key="city")  # Kraków becomes history
        assert len(embedder.texts) == 2, embedder.texts
        embedder.texts.clear()
        memory.remember_many([f"a batch fact number {n}" for n in range(6)])
        assert len(embedder.texts) == 6, embedder.texts
        found = memory.recall("Wrocław", k=3)
        assert found.hits and "Wrocław" in found.hits[0].item.content


def test_two_workers_in_turn_embed_each_fact_once(postgres_url: str, tmp_path: Path) -> None:
    """Two workers of one team remembering facts of one agent in turn: each finds the
    Brain rewritten by the other, so its patch of the rows is refused and the file is
    re-indexed; the vectors the patch was given are kept for the re-index, which embeds
    nothing again."""
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    workers = []
    for name in ("a", "b"):
        settings = load_settings(
            tmp_path / name, environ={}, embedder="hashing", database_url=postgres_url
        )
        workers.append(build_memory(settings, create=True, embedder=_Counting()))
    try:
        for n, city in enumerate(["Gdańsk", "Toruń", "Lublin", "Opole", "Sopot", "Łomża"]):
            memory = workers[n % 2]
            embedder = memory.embedder
            assert isinstance(embedder, _Counting)
            embedder.texts.clear()
            memory.remember(f"I visited {city} in spring", key=f"trip_{n}")
            assert len(embedder.texts) == 1, (city, embedder.texts)
        for memory in workers:  # each finds every fact, the other's too
            found = memory.recall("I visited Łomża in spring", k=1)
            assert found.hits and "Łomża" in found.hits[0].item.content
    finally:
        for memory in workers:
            memory.close()
