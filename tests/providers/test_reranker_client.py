"""The reranking client against a real HTTP server on 127.0.0.1."""

import json
import socket

import pytest

from kronika.errors import ConfigError, RerankerError, RerankerUnavailable
from kronika.ports import Reranker
from kronika.providers.rerankers import MAX_DOCUMENT_CHARS, HttpReranker, RerankerConfig
from kronika.testing import ScriptedDrop, ScriptedFailure, ScriptedRerankServer

DOCS = ["I filed my taxes", "I just finished Dune by Frank Herbert", "We went hiking"]


def books(query: str, document: str) -> float:
    """A stand-in cross-encoder: Dune answers a question about books."""
    return 4.5 if "Dune" in document and "book" in query else -1.0


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def reranker(base_url: str, sleeps: Sleeps | None = None, **options: object) -> HttpReranker:
    return HttpReranker(RerankerConfig(base_url, **options), sleep=sleeps or Sleeps())  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_scores_come_back_in_the_order_the_documents_were_sent():
    with ScriptedRerankServer(books) as server:
        client = reranker(server.base_url, model="bge-reranker-v2-m3")
        scores = client.rerank("what books has John read?", DOCS)
    assert scores == [-1.0, 4.5, -1.0]  # the server answers best first
    (request,) = server.requests
    assert request.path == "/v1/rerank"
    assert request.body == {
        "query": "what books has John read?",
        "documents": DOCS,
        "top_n": 3,
        "model": "bge-reranker-v2-m3",
    }
    assert request.headers["user-agent"].startswith("kronika/")
    assert "authorization" not in request.headers


def test_without_a_model_name_none_is_sent_and_the_url_is_not_doubled():
    with ScriptedRerankServer(books) as server:
        client = reranker(server.base_url + "/rerank/")
        client.rerank("books?", DOCS[:2])
    assert client.url == server.base_url + "/rerank"
    assert "model" not in server.requests[0].body


def test_text_embeddings_inference_is_asked_with_texts():
    with ScriptedRerankServer(books) as server:
        scores = reranker(server.base_url, api="tei").rerank("books?", DOCS)
    assert scores == [-1.0, 4.5, -1.0]
    assert server.requests[0].body == {"query": "books?", "texts": DOCS, "truncate": True}


def test_long_memories_are_cut_before_they_are_sent():
    with ScriptedRerankServer(lambda q, d: float(len(d))) as server:
        scores = reranker(server.base_url).rerank("q", ["x" * 10_000, "short"])
    assert scores == [float(MAX_DOCUMENT_CHARS), 5.0]


def test_nothing_to_score_sends_nothing():
    with ScriptedRerankServer(books) as server:
        assert reranker(server.base_url).rerank("books?", []) == []
    assert server.requests == []


def test_the_api_key_is_sent_and_never_shown():
    with ScriptedRerankServer(books, require_key="rk-secret") as server:
        assert reranker(server.base_url, api_key="rk-secret").rerank("books?", DOCS)[1] == 4.5
        with pytest.raises(RerankerError) as refused:
            reranker(server.base_url, api_key="rk-wrong").rerank("books?", DOCS)
    assert server.requests[0].headers["authorization"] == "Bearer rk-secret"
    assert "HTTP 401" in str(refused.value) and "check the API key" in str(refused.value)
    assert "rk-" not in str(refused.value)
    assert "rk-secret" not in repr(RerankerConfig(server.base_url, api_key="rk-secret"))


def test_transient_failures_are_retried_with_backoff():
    sleeps = Sleeps()
    with ScriptedRerankServer(books, failures=[ScriptedFailure(503)]) as server:
        scores = reranker(server.base_url, sleeps, retries=1).rerank("books?", DOCS)
    assert scores[1] == 4.5
    assert len(server.requests) == 2 and sleeps.calls == [0.5]


def test_a_server_that_keeps_failing_is_unavailable():
    failures = [ScriptedDrop(), ScriptedFailure(502)]
    with (
        ScriptedRerankServer(books, failures=failures) as server,
        pytest.raises(RerankerUnavailable) as down,
    ):
        reranker(server.base_url, retries=1).rerank("books?", DOCS)
    assert f"the reranker at {server.base_url}/rerank is unavailable after 2 attempts" in str(
        down.value
    )
    assert "HTTP 502" in str(down.value)


def test_no_server_at_all_is_unavailable_with_the_reason():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(RerankerUnavailable, match="connection refused"):
        reranker(url, retries=0).rerank("books?", DOCS)


def test_a_wrong_path_says_what_to_check():
    with (
        ScriptedRerankServer(books) as server,
        pytest.raises(RerankerError, match="HTTP 404 .check the server URL"),
    ):
        reranker(server.base_url.replace("/v1", "/v2")).rerank("books?", DOCS)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("<html>busy</html>", "did not answer with JSON"),
        (json.dumps({"object": "list"}), "sent no results"),
        (json.dumps({"results": [{"index": 0, "relevance_score": 1.0}]}), "scored 1 of the 2"),
        (json.dumps({"results": [{"index": 0, "relevance_score": 1}] * 2}), "twice"),
        (json.dumps({"results": [{"index": 5, "relevance_score": 1.0}]}), "names no document"),
        (json.dumps({"results": [{"index": 0, "relevance_score": "high"}]}), "without a score"),
        (json.dumps([{"index": 0, "score": float("nan")}, {"index": 1, "score": 1}]), "score"),
    ],
)
def test_an_answer_of_another_shape_is_an_error_not_a_guess(body: str, message: str):
    with (
        ScriptedRerankServer(books, failures=[ScriptedFailure(200, body)]) as server,
        pytest.raises(RerankerError, match=message),
    ):
        reranker(server.base_url).rerank("books?", DOCS[:2])


def test_bad_configuration_is_refused_up_front():
    with pytest.raises(ConfigError, match="no reranker is configured"):
        HttpReranker(RerankerConfig(" "))
    with pytest.raises(ConfigError, match="must start with http"):
        HttpReranker(RerankerConfig("ftp://example.org/v1"))
    with pytest.raises(ConfigError, match="unknown reranker api 'jina'"):
        HttpReranker(RerankerConfig("http://127.0.0.1:1/v1", api="jina"))
    with pytest.raises(ConfigError, match="timeout must be positive"):
        HttpReranker(RerankerConfig("http://127.0.0.1:1/v1", timeout=0))


def test_it_is_a_reranker():
    client: Reranker = reranker("http://127.0.0.1:1/v1")
    assert client.model == "http://127.0.0.1:1/v1/rerank"
    assert reranker("http://127.0.0.1:1/v1", model="m").model == "m"
