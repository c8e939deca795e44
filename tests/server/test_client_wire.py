""":class:`kronika.client.Client` over real HTTP: a recall's times reach the server as
the moments they were, in the form ``/openapi.json`` documents, and an answer the
client cannot read is a clear error, not a ``KeyError``."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from tests.server.conftest import Served

from kronika.client import Client, ServerError
from kronika.core.query import RecallQuery

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema (the dev extra) is missing")

KOLKATA = timezone(timedelta(hours=5, minutes=30))


def _turns(served: Served) -> list[datetime]:
    """Three turns about tea, 0.4 s apart on the evening of 30 November (UTC)."""
    first = datetime(2025, 11, 30, 21, 0, 0, 100000, tzinfo=UTC)
    moments = [first + timedelta(milliseconds=400 * n) for n in range(3)]
    for n, at in enumerate(moments):
        served.memories["acme"].save_turn(
            "tea-time", "user", f"tea number {n} please", agent="alice", at=at
        )
    return moments


def test_a_recall_s_times_reach_the_server_to_the_microsecond(served: Served) -> None:
    moments = _turns(served)
    client = Client(served.url, served.keys["acme-admin"])
    # the same moments, said in another zone (and so on another day: 1 December)
    since = (moments[1] - timedelta(microseconds=1)).astimezone(KOLKATA)
    until = (moments[1] + timedelta(microseconds=1)).astimezone(KOLKATA)
    found = client.recall("tea", agent="alice", mode="lexical", since=since, until=until)
    assert [h.item.content for h in found.hits] == ["tea number 1 please"]
    later = client.recall(RecallQuery("tea", agent="alice", mode="lexical", since=since))
    assert sorted(h.item.content for h in later.hits) == [
        "tea number 1 please",
        "tea number 2 please",
    ]
    in_process = served.memories["acme"].recall(
        "tea", agent="alice", mode="lexical", since=since, record_access=False
    )
    assert {h.item.id for h in later.hits} == {h.item.id for h in in_process.hits}


def test_the_client_s_recall_body_is_one_the_api_document_accepts(served: Served) -> None:
    document = served.call("GET", "/openapi.json", key=None).body
    operation = document["paths"]["/v1/agents/{agent}/recall"]["post"]
    body_schema = operation["requestBody"]["content"]["application/json"]["schema"]
    validator = jsonschema.Draft202012Validator(
        {**body_schema, "components": document["components"]}
    )
    for moment in (
        datetime(2025, 11, 30, 21, 0, 0, 123456, tzinfo=UTC),
        datetime(2025, 12, 31, 23, 59, 59, 999999, tzinfo=KOLKATA),
        datetime(2024, 2, 29, 8, 15, tzinfo=timezone(-timedelta(hours=10))),
        datetime(2025, 6, 1, tzinfo=UTC),
    ):
        asked = RecallQuery("tea", since=moment, until=moment, as_of=moment)
        body = {k: v for k, v in asked.as_json().items() if k != "agent"}
        errors = [e.message for e in validator.iter_errors(body)]
        assert not errors, (moment, errors)


class _Garbled(http.server.BaseHTTPRequestHandler):
    """A server on 127.0.0.1 that answers every request with JSON kronika never sends."""

    def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        body = b'{"query": "tea", "hits": [{"item": {}}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def garbled() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Garbled)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_an_answer_the_client_cannot_read_is_a_server_error(garbled: str) -> None:
    client = Client(garbled, "kro_x", agent="alice")
    with pytest.raises(ServerError, match="answer cannot be read"):
        client.recall("tea")
    with pytest.raises(ServerError, match="answer cannot be read"):
        client.remember("tea")
