"""The server's limits: requests per key (a token bucket) and the size of a body."""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from kronika.errors import KronikaError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class RateLimited(KronikaError):
    """Too many requests with one API key (HTTP 429)."""


class RateLimiter:
    """A token bucket per key: ``rate`` requests a second on average, ``burst`` at once.

    A bucket holds at most ``burst`` tokens and gains ``rate`` a second; a request
    takes one token or is refused. ``rate <= 0`` turns the limit off.
    """

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.rate = rate
        self.burst = max(1, burst)
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        if self.rate <= 0:
            return True
        now = self._clock()
        with self._lock:
            tokens, then = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - then) * self.rate)
            if tokens < 1:
                self._buckets[key] = (tokens, now)
                return False
            self._buckets[key] = (tokens - 1, now)
            return True


class BodyLimit:
    """Refuse a request body over ``max_bytes`` with 413, whether it says its length
    (``Content-Length``) or streams it in chunks."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared < 0 or declared > self.max_bytes:
                    await _too_large(send, self.max_bytes)
                    return
        seen = 0
        answered = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def watched(message: Message) -> None:
            nonlocal answered
            if message["type"] == "http.response.start":
                answered = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge:
            if not answered:
                await _too_large(send, self.max_bytes)


class BodyTooLarge(Exception):
    """A streamed body went over the limit while it was being read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is over the limit of {limit} bytes")
        self.limit = limit


async def _too_large(send: Send, limit: int) -> None:
    body = (
        b'{"error":"RequestTooLarge","message":"the request body is over the limit of '
        + str(limit).encode()
        + b' bytes"}'
    )
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
