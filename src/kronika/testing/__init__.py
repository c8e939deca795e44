"""Fakes kronika ships so you can test your own agents without models or wall-clock time.

* :class:`FrozenClock` — a clock that moves only when told to.
* :class:`HashingEmbedder` — a deterministic embedder with no model.
* :class:`ListAuditLog` — an in-memory audit trail.
* :func:`conversation` — a session to import, from ``(turn id, speaker, text)`` rows.
* :class:`ScriptedChatServer` — a real OpenAI-compatible chat server on 127.0.0.1 that
  answers from a script, so an agent's LLM calls can be tested over real HTTP.
* :class:`ScriptedRerankServer` — a real reranking service on 127.0.0.1 that scores
  with the function you give it.
* :class:`RoundTripProxy` — a TCP proxy before a database server that counts the
  times a client waits for it, and can hold its answers back.

For measuring one of kronika's inner parts alone (what ``kronika bench`` does for a
few of its figures), :mod:`kronika.testing.parts` reaches them, and its names are
offered here too: :class:`RecallReplay`, :func:`empty_index_like` (and
:class:`SourceRows`, the files a bulk load hands it),
:func:`exact_index_like`, :func:`postgres_database`, :func:`postgres_index`,
:class:`LocalPostgres`, :func:`is_postgres_url`, :func:`archive_document`,
:func:`archived_fact`, :func:`history_document`, and the
benchmark readers :func:`read_locomo` and :func:`iter_longmemeval` (its questions are
:class:`LongMemEvalQuestion`).

>>> from datetime import UTC, datetime
>>> clock = FrozenClock(datetime(2025, 11, 27, 9, 0, tzinfo=UTC))
>>> clock.advance(minutes=31)
>>> clock.now().isoformat()
'2025-11-27T09:31:00+00:00'

>>> embedder = HashingEmbedder()
>>> vectors = embedder.embed_documents(["I love jazz", "jazz concerts", "tax forms"])
>>> bool(vectors[0] @ vectors[1] > vectors[0] @ vectors[2])
True

>>> from kronika.ports import ChatMessage
>>> from kronika.providers.llm import LLMConfig, OpenAICompatibleLLM
>>> with ScriptedChatServer(["Hello, Lucas!"]) as server:
...     llm = OpenAICompatibleLLM(LLMConfig(server.base_url, model="any"))
...     llm.chat([ChatMessage("user", "hi, I am Lucas")]).content
'Hello, Lucas!'
>>> server.requests[0].body["messages"]
[{'role': 'user', 'content': 'hi, I am Lucas'}]
"""

from __future__ import annotations

import json
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Self, TypeAlias

from kronika.core.model import SessionRecord, TurnRecord
from kronika.core.redaction import Phrases
from kronika.ports import AuditEntry
from kronika.providers.embedders import HashingEmbedder
from kronika.testing.parts import (
    LocalPostgres,
    LongMemEvalQuestion,
    RecallReplay,
    SourceRows,
    archive_document,
    archived_fact,
    empty_index_like,
    exact_index_like,
    history_document,
    is_postgres_url,
    iter_longmemeval,
    postgres_database,
    postgres_index,
    read_locomo,
)
from kronika.testing.roundtrips import COUNTING_HOLD_S, RoundTripProxy

__all__ = [
    "COUNTING_HOLD_S",
    "FrozenClock",
    "HashingEmbedder",
    "ListAuditLog",
    "LocalPostgres",
    "LongMemEvalQuestion",
    "RecallReplay",
    "RecordedRequest",
    "RoundTripProxy",
    "ScriptedChatServer",
    "ScriptedDrop",
    "ScriptedFailure",
    "ScriptedReply",
    "ScriptedRerankServer",
    "SourceRows",
    "archive_document",
    "archived_fact",
    "conversation",
    "empty_index_like",
    "exact_index_like",
    "history_document",
    "is_postgres_url",
    "iter_longmemeval",
    "postgres_database",
    "postgres_index",
    "read_locomo",
]

_DEFAULT_START = datetime(2025, 1, 1, tzinfo=UTC)


def conversation(
    session_id: str, started_at: datetime, turns: Sequence[tuple[str, str, str]]
) -> SessionRecord:
    """A session of ``(turn id, speaker, text)`` turns, ready for ``Memory.import_sessions``.

    >>> talk = conversation("s1", _DEFAULT_START, [("1", "Ana", "Hi!"), ("2", "Bo", "Hey")])
    >>> [(t.turn_id, t.speaker) for t in talk.turns]
    [('1', 'Ana'), ('2', 'Bo')]
    """
    return SessionRecord(
        session_id=session_id,
        started_at=started_at,
        turns=tuple(TurnRecord(turn_id=t, speaker=s, content=c) for t, s, c in turns),
    )


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class FrozenClock:
    """A clock that moves only when told to (the :class:`kronika.ports.Clock` port).

    Starts at ``start`` (default 2025-01-01 00:00 UTC); naive datetimes are taken as
    UTC. ``advance(days=1, hours=2)`` takes :class:`datetime.timedelta` arguments.

    >>> clock = FrozenClock()
    >>> clock.set(datetime(2030, 5, 1))
    >>> clock.now().year, clock.now().tzinfo
    (2030, datetime.timezone.utc)
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._now = _utc(start) if start is not None else _DEFAULT_START

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> None:
        """Move forward (or back, with negative values) by ``timedelta(**delta)``."""
        self._now += timedelta(**delta)

    def set(self, moment: datetime) -> None:
        """Jump to ``moment``."""
        self._now = _utc(moment)


class ListAuditLog:
    """An in-memory audit trail (the :class:`kronika.ports.AuditLog` port).

    ``read`` returns entries oldest first; with ``limit`` it returns the newest
    ``limit`` of them (still oldest first), like ``tail``.

    >>> log = ListAuditLog()
    >>> log.append(AuditEntry(datetime(2025, 1, 1, tzinfo=UTC), "remember", "jaskier",
    ...     "jaskier", "User", "f1", "city: Kraków", "applied"))
    >>> [entry.summary for entry in log.read("jaskier")]
    ['city: Kraków']
    >>> log.read("other")
    []
    """

    def __init__(self) -> None:
        self.entries: list[AuditEntry] = []

    def append(self, entry: AuditEntry) -> None:
        self.entries.append(entry)

    def read(self, agent: str | None = None, limit: int | None = None) -> list[AuditEntry]:
        chosen = [e for e in self.entries if agent is None or e.target_agent == agent]
        if limit is not None:
            chosen = chosen[-limit:] if limit > 0 else []
        return chosen

    def mentioning(self, agent: str, pattern: Phrases) -> int:
        return sum(1 for e in self.read(agent) if pattern.search(e.summary))

    def redact(self, agent: str, pattern: Phrases, marker: str) -> int:
        changed = 0
        for n, entry in enumerate(self.entries):
            summary = pattern.sub(marker, entry.summary)
            if entry.target_agent == agent and summary != entry.summary:
                self.entries[n] = replace(entry, summary=summary)
                changed += 1
        return changed


# ---------------------------------------------------------------------- chat server
@dataclass(frozen=True, slots=True)
class ScriptedFailure:
    """Answer with HTTP ``status`` and ``body`` as is.

    ``body`` defaults to an OpenAI-style error object; ``retry_after`` (seconds) adds
    a ``Retry-After`` header. ``ScriptedFailure(200, "<html>oops")`` makes a garbage
    reply.
    """

    status: int = 503
    body: str | None = None
    retry_after: float | None = None


@dataclass(frozen=True, slots=True)
class ScriptedDrop:
    """Close the connection without answering."""


ScriptedReply: TypeAlias = str | Mapping[str, Any] | ScriptedFailure | ScriptedDrop
"""One answer: assistant text, ``{"content": …, "tool_calls": [{"name", "arguments"}]}``,
a :class:`ScriptedFailure` or a :class:`ScriptedDrop`."""


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received; header names are lower-case.

    ``body`` is the parsed JSON body (``None`` when there was none or it was not JSON).
    """

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class _LocalServer:
    """An HTTP server on 127.0.0.1 in a daemon thread that records every request.

    It answers ``POST`` to one of ``_routes`` (the first is named in the 404 to
    anything else) and, with ``require_key``, only requests carrying
    ``Authorization: Bearer <require_key>`` (the others get an OpenAI-style 401).
    """

    _thread_name = "kronika-local-server"
    _routes: tuple[str, ...] = ()

    def __init__(self, *, require_key: str | None = None, port: int = 0) -> None:
        self._require_key = require_key
        self._port = port
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._httpd: _LocalHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._base_url: str | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        """Listen and serve in a background thread; returns ``self``."""
        if self._httpd is not None:
            raise RuntimeError("the server is already running")
        httpd = _LocalHTTPServer(("127.0.0.1", self._port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self._thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port (safe to call twice)."""
        httpd, thread = self._httpd, self._thread
        self._httpd = self._thread = None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if thread is not None:
            thread.join(timeout=10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ what tests read
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` — the ``base_url`` to configure a client with.

        It stays readable after ``close()``, for assertions on messages naming it.
        """
        if self._base_url is None:
            raise RuntimeError("the server was never started (use start() or a with block)")
        return self._base_url

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    # ------------------------------------------------------------------ serving
    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length > 0 else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in handler.headers.items()}
        with self._lock:
            self._requests.append(RecordedRequest(handler.command, handler.path, headers, body))
        path = handler.path.split("?", 1)[0].rstrip("/")
        if handler.command != "POST" or path not in self._routes:
            message = f"no route {handler.command} {handler.path}: this server answers "
            _send_error(handler, 404, message + f"POST {self._routes[0]}", "not_found")
            return
        if self._require_key is not None and headers.get("authorization") != (
            f"Bearer {self._require_key}"
        ):
            _send_error(handler, 401, "Incorrect API key provided.", "invalid_api_key")
            return
        self._serve(handler, body)

    def _serve(self, handler: _Handler, body: Any) -> None:
        raise NotImplementedError


class ScriptedChatServer(_LocalServer):
    """An OpenAI-compatible chat-completions server on 127.0.0.1 that answers from a script.

    ``script`` is consumed in order, one reply per ``POST /v1/chat/completions``:
    a ``str`` is the assistant's text; a mapping may hold ``content`` (text or
    ``None``) and ``tool_calls`` (each ``{"name": …, "arguments": {…} or "json",
    "id": optional}``); :class:`ScriptedFailure` and :class:`ScriptedDrop` fail on
    purpose. Once the script is exhausted every request gets HTTP 500
    ``script exhausted``. Instead of a script, ``responder`` computes each reply from
    the request body. With ``require_key``, a request whose ``Authorization`` is not
    ``Bearer <require_key>`` gets an OpenAI-style 401 (and consumes nothing).

    Every request is recorded in :attr:`requests`. Replies carry ``usage`` counted in
    whitespace-separated words. The server runs in a daemon thread from ``start()``
    (or ``with``) to ``close()``; ``port=0`` picks a free port.

    >>> with ScriptedChatServer([ScriptedFailure(503), "ok"]) as server:
    ...     server.base_url.startswith("http://127.0.0.1:"), server.remaining
    (True, 2)
    """

    def __init__(
        self,
        script: Sequence[ScriptedReply] | None = None,
        *,
        responder: Callable[[dict[str, Any]], ScriptedReply] | None = None,
        require_key: str | None = None,
        port: int = 0,
    ) -> None:
        if script is not None and responder is not None:
            raise ValueError("give a script or a responder, not both")
        super().__init__(require_key=require_key, port=port)
        self._script = list(script or ())
        self._responder = responder
        self._served = 0

    @property
    def remaining(self) -> int:
        """Scripted replies not yet used (0 with a responder)."""
        with self._lock:
            return max(0, len(self._script) - self._served) if self._responder is None else 0

    # ------------------------------------------------------------------ serving
    _thread_name = "kronika-scripted-chat"
    _routes = ("/v1/chat/completions",)

    def _serve(self, handler: _Handler, body: Any) -> None:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            _send_error(handler, 400, "the body must be a JSON object with messages", None)
            return
        try:
            reply = self._next_reply(body)
        except Exception as exc:
            _send_error(handler, 500, f"scripted reply failed: {exc!r}", "server_error")
            return
        if isinstance(reply, ScriptedDrop):
            handler.close_connection = True
            return
        if isinstance(reply, ScriptedFailure):
            _send_failure(handler, reply)
            return
        try:
            completion = _completion(body, reply, self._served)
        except (TypeError, ValueError, KeyError) as exc:
            _send_error(handler, 500, f"bad scripted reply {reply!r}: {exc}", "server_error")
            return
        _send_json(handler, 200, completion)

    def _next_reply(self, body: dict[str, Any]) -> ScriptedReply:
        with self._lock:
            self._served += 1
            number = self._served
            if self._responder is None and number > len(self._script):
                return ScriptedFailure(
                    500,
                    json.dumps(
                        {
                            "error": {
                                "message": f"script exhausted: request #{number} but only "
                                f"{len(self._script)} scripted replies",
                                "type": "server_error",
                            }
                        }
                    ),
                )
            if self._responder is None:
                return self._script[number - 1]
        return self._responder(body)


class ScriptedRerankServer(_LocalServer):
    """A reranking service on 127.0.0.1 that scores with ``scorer(query, document)``.

    ``POST /v1/rerank`` (or ``/rerank``) with the Cohere / Jina / vLLM / llama.cpp body
    ``{"query", "documents", "top_n"?, "model"?}`` is answered with
    ``{"results": [{"index", "relevance_score"}]}``, best first and cut to ``top_n``;
    with text-embeddings-inference's body ``{"query", "texts"}``, with
    ``[{"index", "score"}]``. ``failures`` (:class:`ScriptedFailure`,
    :class:`ScriptedDrop`) answer the first requests, one each. With ``require_key``, a
    request without ``Authorization: Bearer <require_key>`` gets a 401.

    >>> from kronika.providers.rerankers import HttpReranker, RerankerConfig
    >>> with ScriptedRerankServer(lambda query, doc: float(query in doc)) as server:
    ...     HttpReranker(RerankerConfig(server.base_url)).rerank("jazz", ["tax", "jazz club"])
    [0.0, 1.0]
    """

    _thread_name = "kronika-scripted-rerank"
    _routes = ("/v1/rerank", "/rerank")

    def __init__(
        self,
        scorer: Callable[[str, str], float],
        *,
        failures: Sequence[ScriptedFailure | ScriptedDrop] = (),
        require_key: str | None = None,
        port: int = 0,
    ) -> None:
        super().__init__(require_key=require_key, port=port)
        self._scorer = scorer
        self._failures = list(failures)

    def _serve(self, handler: _Handler, body: Any) -> None:
        with self._lock:
            failure = self._failures.pop(0) if self._failures else None
        if isinstance(failure, ScriptedDrop):
            handler.close_connection = True
            return
        if failure is not None:
            _send_failure(handler, failure)
            return
        tei = isinstance(body, dict) and "texts" in body
        documents = body.get("texts" if tei else "documents") if isinstance(body, dict) else None
        query = body.get("query") if isinstance(body, dict) else None
        if not isinstance(query, str) or not isinstance(documents, list):
            _send_error(handler, 422, "the body needs a query and documents (or texts)", None)
            return
        scores = [float(self._scorer(query, str(document))) for document in documents]
        order = sorted(range(len(scores)), key=lambda index: -scores[index])
        if tei:
            _send_json(handler, 200, [{"index": i, "score": scores[i]} for i in order])
            return
        top_n = body.get("top_n")
        if isinstance(top_n, int):
            order = order[:top_n]
        results = [{"index": i, "relevance_score": scores[i]} for i in order]
        _send_json(handler, 200, {"model": body.get("model", "scripted"), "results": results})


class _LocalHTTPServer(HTTPServer):
    owner: _LocalServer

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host name up in DNS; loopback needs no name
        socketserver.TCPServer.server_bind(self)
        self.server_name = "127.0.0.1"
        self.server_port = self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _LocalHTTPServer
    timeout = 10  # a client that never sends its request cannot block close()

    def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
        self.server.owner._handle(self)

    def do_GET(self) -> None:  # noqa: N802
        self.server.owner._handle(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _words(value: Any) -> int:
    return len(value.split()) if isinstance(value, str) else 0


def _arguments(call: Mapping[str, Any]) -> str:
    arguments = call.get("arguments", {})
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _completion(request: Mapping[str, Any], reply: ScriptedReply, number: int) -> dict[str, Any]:
    if isinstance(reply, str):
        content: str | None = reply
        calls: list[Any] = []
    elif isinstance(reply, Mapping):
        unknown = set(reply) - {"content", "tool_calls"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)} (use content, tool_calls)")
        content = reply.get("content")
        calls = list(reply.get("tool_calls") or ())
    else:
        raise TypeError(f"not a scripted reply: {type(reply).__name__}")
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": str(call.get("id") or f"call_{number}_{index}"),
                "type": "function",
                "function": {"name": call["name"], "arguments": _arguments(call)},
            }
            for index, call in enumerate(calls)
        ]
    prompt = sum(_words(m.get("content")) for m in request["messages"] if isinstance(m, dict))
    completion = _words(content)
    return {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.get("model") or "scripted"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _send(
    handler: BaseHTTPRequestHandler,
    status: int,
    payload: bytes,
    content_type: str,
    headers: Mapping[str, str] | None = None,
) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(payload)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(payload)


def _send_json(handler: BaseHTTPRequestHandler, status: int, data: Any) -> None:
    _send(handler, status, json.dumps(data, ensure_ascii=False).encode("utf-8"), "application/json")


def _send_error(
    handler: BaseHTTPRequestHandler, status: int, message: str, code: str | None
) -> None:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    _send_json(handler, status, {"error": {"message": message, "type": kind, "code": code}})


def _send_failure(handler: BaseHTTPRequestHandler, failure: ScriptedFailure) -> None:
    body = failure.body
    if body is None:
        body = json.dumps(
            {"error": {"message": f"scripted failure (HTTP {failure.status})", "type": "error"}}
        )
    try:
        json.loads(body)
        content_type = "application/json"
    except ValueError:
        content_type = "text/plain; charset=utf-8"
    headers = {}
    if failure.retry_after is not None:
        headers["Retry-After"] = f"{failure.retry_after:g}"
    _send(handler, failure.status, body.encode("utf-8"), content_type, headers)
