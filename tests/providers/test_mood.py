"""Vectors without the question/statement direction (kronika.providers.mood), with the
default model itself."""

import threading
from collections.abc import Sequence

import numpy as np
import pytest

from kronika.errors import EmbedderError
from kronika.providers.embedders import UniversalSentenceEncoder, build_embedder
from kronika.providers.mood import MOOD_PAIRS, WithoutMood, mood_direction, shipped_direction

# sentences of none of the calibration pairs
QUESTIONS = ["Where did you park the car?", "¿Cuándo llega el tren?", "Czy masz psa?"]
STATEMENTS = ["I parked the car behind the library.", "El tren llega a las cinco.", "Mam psa."]


@pytest.fixture(scope="module")
def use() -> UniversalSentenceEncoder:
    return UniversalSentenceEncoder(threads=1)


@pytest.fixture(scope="module")
def moodless(use: UniversalSentenceEncoder) -> WithoutMood:
    return WithoutMood(use)


def test_the_direction_tells_questions_from_statements_it_was_not_made_from(
    use: UniversalSentenceEncoder, moodless: WithoutMood
) -> None:
    direction = moodless.direction
    assert direction.shape == (use.dim,) and abs(float(np.linalg.norm(direction)) - 1) < 1e-5
    assert all(float(v @ direction) > 0.1 for v in use.embed_documents(QUESTIONS))
    assert all(float(v @ direction) < 0 for v in use.embed_documents(STATEMENTS))


def test_every_vector_is_a_unit_vector_with_no_mood_left(moodless: WithoutMood) -> None:
    rows = moodless.embed_documents(QUESTIONS + STATEMENTS + [""])
    assert rows.shape == (7, moodless.dim) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1, atol=1e-5)
    assert np.abs(rows @ moodless.direction).max() < 1e-5
    query = moodless.embed_query(QUESTIONS[0])
    assert np.allclose(query, rows[0], atol=1e-6)
    assert moodless.embed_documents([]).shape == (0, moodless.dim)


def test_a_question_comes_closer_to_its_answer_than_to_an_unrelated_question(
    use: UniversalSentenceEncoder, moodless: WithoutMood
) -> None:
    question = "Where do I live now?"
    answer, errand = "my city is Bristol", "user: what's the capital of Australia?"
    plain = use.embed_documents([question, answer, errand])
    assert plain[0] @ plain[2] > plain[0] @ plain[1]  # the plain model prefers the errand
    without = moodless.embed_documents([question, answer, errand])
    assert without[0] @ without[1] > without[0] @ without[2]


def test_the_model_id_says_the_vectors_are_not_the_plain_models(
    use: UniversalSentenceEncoder,
) -> None:
    wrapped = build_embedder("use-multilingual", threads=1)
    assert wrapped.model_id == f"{use.model_id}/without-mood" != use.model_id
    plain = build_embedder("use-multilingual", threads=1, without_mood=False)
    assert plain.model_id == use.model_id


def test_the_direction_is_computed_once_for_threads_asking_at_once(
    use: UniversalSentenceEncoder,
) -> None:
    calls = []

    class Counting:
        model_id, dim = "counting/512", use.dim

        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            calls.append(len(texts))
            return use.embed_documents(texts)

        def embed_query(self, text: str) -> np.ndarray:
            return use.embed_query(text)

    wrapped = WithoutMood(Counting())
    threads = [threading.Thread(target=wrapped.embed_query, args=("hi?",)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == [len(MOOD_PAIRS), len(MOOD_PAIRS)]  # questions, then statements


@pytest.mark.parametrize("name", ["use-multilingual", "minilm", "e5-small"])
def test_the_shipped_direction_is_the_models_own(name: str) -> None:
    model = build_embedder(name, threads=1, without_mood=False)
    try:
        computed = mood_direction(model)
    except EmbedderError as exc:
        pytest.skip(f"{name} is not installed: {exc}")
    shipped = shipped_direction(model.model_id, model.dim)
    assert shipped is not None, "run scripts/gen-mood-directions"
    assert float(shipped @ computed) > 0.9999


def test_the_default_models_direction_needs_no_model_loaded() -> None:
    wrapped = build_embedder("use-multilingual", threads=1)
    assert isinstance(wrapped, WithoutMood)
    assert wrapped.direction.shape == (wrapped.dim,)
    inner = wrapped.inner
    assert isinstance(inner, UniversalSentenceEncoder)
    assert not wrapped.loaded and not inner.loaded
    inner.embed_query("hello")  # the model in memory: the shipped direction costs nothing
    assert WithoutMood(inner).loaded


def test_an_embedder_without_moods_is_refused() -> None:
    class Flat:
        model_id, dim = "flat", 3

        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            return np.tile(np.array([1.0, 0, 0], dtype=np.float32), (len(texts), 1))

        def embed_query(self, text: str) -> np.ndarray:
            return np.array([1.0, 0, 0], dtype=np.float32)

    with pytest.raises(EmbedderError, match="same vectors"):
        mood_direction(Flat())
