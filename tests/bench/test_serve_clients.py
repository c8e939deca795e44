"""The load generators of ``kronika bench serve`` against a real HTTP server on
127.0.0.1: an answer counts only when it is a 200 read whole and is the answer asked
for; everything else is an error, and no answer is counted before its last byte."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kronika.bench.serve import _asyncio_load, _recall_check, _threads

QUERIES = [f"question {n}" for n in range(40)]
PAUSE_S = 0.15


class _Handler(BaseHTTPRequestHandler):
    """Answers a recall by the request's path: ``ok`` the answer asked for, in pieces
    with a pause between them; ``fail`` a 500; ``short`` fewer bytes than its
    ``Content-Length``, then it hangs up; ``other`` the answer to another query."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        sent = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        kind = self.path.rsplit("/", 1)[-1]
        query = sent["query"] if kind != "other" else "not what was asked"
        body = json.dumps({"query": query, "hits": [{"pad": "x" * 5000}]}).encode()
        self.send_response(500 if kind == "fail" else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if kind == "short":
            self.wfile.write(body[:100])
            self.wfile.flush()
            self.close_connection = True
            return
        half = len(body) // 2
        self.wfile.write(body[:half])
        self.wfile.flush()
        if kind == "ok":
            time.sleep(PAUSE_S)  # the client must wait for the rest
        self.wfile.write(body[half:])

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


Sender = Callable[..., Callable[[], tuple[list[float], int]]]
SENDERS = [pytest.param(_asyncio_load, id="asyncio"), pytest.param(_threads, id="threads")]


def _send(sender: Sender, port: int, kind: str, requests: int, clients: int = 3) -> Any:
    def body(n: int) -> tuple[str, dict[str, Any]]:
        return f"/v1/agents/default/{kind}", {"query": QUERIES[n], "k": 10}

    return sender(port, "kro_test", clients, requests, 30.0, body, _recall_check(QUERIES, 0))()


@pytest.mark.parametrize("sender", SENDERS)
def test_every_whole_answer_counts_and_waits_for_its_last_byte(sender: Sender, port: int) -> None:
    latencies, errors = _send(sender, port, "ok", requests=9)
    assert errors == 0
    assert len(latencies) == 9
    assert min(latencies) >= PAUSE_S  # counted only once the second half came


@pytest.mark.parametrize("sender", SENDERS)
@pytest.mark.parametrize("kind", ["fail", "short", "other"])
def test_anything_but_the_answer_asked_for_is_an_error(
    sender: Sender, port: int, kind: str
) -> None:
    latencies, errors = _send(sender, port, kind, requests=6)
    assert latencies == []
    assert errors == 6


@pytest.mark.parametrize("sender", SENDERS)
def test_after_an_error_the_connection_goes_on_with_the_next_answer(
    sender: Sender, port: int
) -> None:
    """One client, one connection: a 500 read whole leaves the next answer intact."""

    def body(n: int) -> tuple[str, dict[str, Any]]:
        kind = "fail" if n % 3 == 1 else "ok"
        return f"/v1/agents/default/{kind}", {"query": QUERIES[n], "k": 10}

    check = _recall_check(QUERIES, 0)
    latencies, errors = sender(port, "kro_test", 1, 9, 30.0, body, check)()
    assert (len(latencies), errors) == (6, 3)


@pytest.mark.parametrize("sender", SENDERS)
def test_a_server_gone_is_an_error_per_request_not_a_hang(sender: Sender) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    closed = server.server_address[1]
    server.server_close()  # nothing listens there now
    latencies, errors = _send(sender, closed, "ok", requests=5, clients=2)
    assert (latencies, errors) == ([], 5)
