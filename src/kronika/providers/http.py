"""JSON over HTTP for the model providers (chat model, reranker): one request, retried.

Only the standard library (``urllib``). A :class:`JsonEndpoint` posts a JSON body to
one URL and returns the body of a 2xx answer. Transient failures (connection errors,
timeouts, HTTP 429 and 5xx) are retried ``retries`` times, waiting ``backoff * 2**n``
seconds capped at 8, or the server's ``Retry-After`` (seconds, capped at 30); then
:class:`Unreachable` is raised. A server on this machine that refuses the connection
is not running at all: :class:`Unreachable` at once, without waiting. Any other 4xx
or 3xx answer raises :class:`Refused` at once. A loopback server is never reached
through a proxy set in the environment, and the API key never appears in an error
message.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from http.client import HTTPException
from importlib import metadata
from typing import Any, Protocol, Self

from kronika.errors import ConfigError

__all__ = ["JsonEndpoint", "Refused", "Unreachable", "server_message"]

TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})
_MAX_BACKOFF = 8.0
_MAX_RETRY_AFTER = 30.0
_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class Unreachable(Exception):
    """The server could not be reached, or kept failing, after every attempt."""


class Refused(Exception):
    """The server answered with an error that retrying will not mend (HTTP 400, 401…)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Transient(Exception):
    def __init__(self, cause: str, retry_after: float | None = None) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retry_after = retry_after


class _NotListening(Exception):
    """A server on this machine refused the connection: nothing listens on that port."""


def user_agent() -> str:
    try:
        version = metadata.version("kronika")
    except metadata.PackageNotFoundError:
        version = "dev"
    return f"kronika/{version}"


def server_message(raw: bytes) -> str:
    """The explanation in an error body: OpenAI's ``{"error": {"message": …}}`` or kin."""
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            for key in ("message", "detail", "error"):
                if isinstance(error.get(key), str):
                    return str(error[key])
        elif isinstance(error, str):
            return error
        if isinstance(data.get("detail"), str):
            return str(data["detail"])
    text = " ".join(text.split())
    return text[:300] + ("…" if len(text) > 300 else "") if text else "no explanation given"


def check_choice(value: str, choices: Sequence[str], what: str) -> None:
    """:class:`ConfigError` naming the choices unless ``value`` is one of them."""
    if value not in choices:
        raise ConfigError(f"unknown {what} {value!r} (choices: {', '.join(choices)})")


def config_repr(config: Any) -> str:
    """An endpoint's config dataclass as ``Name(field=value, …)``, its ``api_key`` shown
    as ``'***'`` and its ``extra_headers`` by their names only (they may hold secrets)."""
    parts = []
    for item in dataclasses.fields(config):
        value = getattr(config, item.name)
        if item.name == "api_key" and value is not None:
            value = "***"
        elif item.name == "extra_headers":
            value = sorted(value)
        parts.append(f"{item.name}={value!r}")
    return f"{type(config).__name__}({', '.join(parts)})"


def json_reply(raw: bytes, error: type[Exception], server: str) -> tuple[Any, str]:
    """The JSON value ``raw`` holds and a one-line preview of ``raw`` (200 characters);
    ``error`` saying ``server`` did not answer with JSON when it holds none."""
    preview = " ".join(raw.decode("utf-8", errors="replace").split())[:200]
    try:
        return json.loads(raw), preview
    except ValueError:
        raise error(f"{server} did not answer with JSON: {preview!r}") from None


def _retry_after(headers: Any) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date; the ordinary backoff applies
    return max(0.0, seconds)


def _network_cause(exc: BaseException) -> str:
    reason: Any = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, TimeoutError):
        return "timed out"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, socket.gaierror):
        return f"cannot resolve the host name ({reason.strerror or reason})"
    if isinstance(reason, ConnectionResetError | HTTPException):
        return f"the connection was closed without an answer ({reason or type(reason).__name__})"
    return str(reason) or type(reason).__name__


class EndpointConfig(Protocol):
    """What a provider's configuration says of its transport."""

    @property
    def api_key(self) -> str | None: ...
    @property
    def timeout(self) -> float: ...
    @property
    def retries(self) -> int: ...
    @property
    def backoff(self) -> float: ...
    @property
    def extra_headers(self) -> Mapping[str, str]: ...


class JsonEndpoint:
    """Posts JSON to ``url``; ``name`` says what the server is in error messages
    ("the LLM server", "the reranker"), ``what`` names the setting family in
    configuration errors ("LLM", "reranker")."""

    def __init__(
        self,
        url: str,
        *,
        name: str,
        what: str,
        api_key: str | None,
        timeout: float,
        retries: int,
        backoff: float,
        extra_headers: Mapping[str, str],
        sleep: Callable[[float], None],
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"the {what} server URL must start with http:// or https:// (got {url!r})"
            )
        if timeout <= 0:
            raise ConfigError(f"the {what} timeout must be positive")
        if retries < 0 or backoff < 0:
            raise ConfigError(f"the {what} retries and backoff must not be negative")
        self.url = url
        self._name = name
        self._api_key = api_key
        self._timeout = timeout
        self._retries = retries
        self._backoff = backoff
        self._sleep = sleep
        # a local server is never reached through the proxy set in the environment
        self._local = parts.hostname in _LOOPBACK_HOSTS
        handlers = [urllib.request.ProxyHandler({})] if self._local else []
        self._opener = urllib.request.build_opener(*handlers)
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": user_agent(),
            **extra_headers,
        }
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"

    @classmethod
    def configured(
        cls,
        url: str,
        config: EndpointConfig,
        *,
        name: str,
        what: str,
        sleep: Callable[[float], None],
    ) -> Self:
        """An endpoint with the key, timeout, retries, backoff and headers of ``config``."""
        return cls(
            url,
            name=name,
            what=what,
            api_key=config.api_key,
            timeout=config.timeout,
            retries=config.retries,
            backoff=config.backoff,
            extra_headers=config.extra_headers,
            sleep=sleep,
        )

    def post(self, body: Mapping[str, Any]) -> bytes:
        """The body of a 2xx answer, retrying transient failures.

        Raises :class:`Unreachable` (its message says where and why) or :class:`Refused`.
        """
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempts = self._retries + 1
        for attempt in range(attempts):
            try:
                return self._send(payload)
            except _NotListening:
                # waiting will not start a server on this machine: say so at once
                raise Unreachable(
                    f"nothing is listening at {self.url} (connection refused): start"
                    f" {self._name} there, or check its server URL"
                ) from None
            except _Transient as failure:
                if attempt == attempts - 1:
                    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
                    raise Unreachable(
                        f"{self._name} at {self.url} is unavailable after {tries}: "
                        f"{self.redact(failure.cause)}"
                    ) from None
                delay = min(self._backoff * 2**attempt, _MAX_BACKOFF)
                if failure.retry_after is not None:
                    delay = min(failure.retry_after, _MAX_RETRY_AFTER)
                self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def redact(self, text: str) -> str:
        """``text`` with the API key replaced by ``***``."""
        return text.replace(self._api_key, "***") if self._api_key else text

    def refusal(self, refused: Refused, *, not_found: str) -> str:
        """The server's refusal in words, with a hint for HTTP 401, 403 and 404
        (``not_found``: what to check) and the server's message without the API key."""
        hint = {
            401: " (check the API key)",
            403: " (the API key may lack access to this model)",
            404: f" (check {not_found})",
        }.get(refused.status, "")
        return (
            f"{self._name} at {self.url} refused the request with HTTP {refused.status}"
            f"{hint}: {self.redact(refused.message)}"
        )

    def _send(self, payload: bytes) -> bytes:
        request = urllib.request.Request(
            self.url, data=payload, headers=self._headers, method="POST"
        )
        try:
            with self._opener.open(request, timeout=self._timeout) as response:
                data: bytes = response.read()
                return data
        except urllib.error.HTTPError as exc:
            try:
                raw = exc.read()
            except (OSError, HTTPException):
                raw = b""
            finally:
                exc.close()
            message = server_message(raw)
            if exc.code in TRANSIENT_STATUSES:
                raise _Transient(f"HTTP {exc.code}: {message}", _retry_after(exc.headers)) from None
            raise Refused(exc.code, message) from None
        except (urllib.error.URLError, OSError, HTTPException) as exc:
            cause = _network_cause(exc)
            if cause == "connection refused" and self._local:
                raise _NotListening from None
            raise _Transient(cause) from None
