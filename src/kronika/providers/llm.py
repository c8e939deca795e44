"""A chat-model client for any OpenAI-compatible server (the :class:`kronika.ports.LLM` port).

Works with OpenAI, OpenRouter, Ollama (``http://localhost:11434/v1``), llama.cpp's
``llama-server``, LM Studio, vLLM and others that speak ``POST /chat/completions``.
It uses only the standard library (``urllib``), sends nothing but the request it is
asked to send, and never writes the API key into an error message or a ``repr``.

>>> config = LLMConfig("http://localhost:11434/v1", model="qwen3:8b", api_key="sk-secret")
>>> "sk-secret" in repr(config)
False
>>> strip_think("<think>the user wants a city</think>Kraków")
'Kraków'
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kronika.errors import LLMOutputError, LLMRequestError, LLMUnavailable
from kronika.ports import ChatMessage, LLMReply, ToolCall
from kronika.providers.http import (
    JsonEndpoint,
    Refused,
    Unreachable,
    check_choice,
    config_repr,
    json_reply,
    server_message,
)

__all__ = ["JSON_MODES", "LLMConfig", "OpenAICompatibleLLM", "strip_think"]

JSON_MODES = ("json_object", "none")
_BAD_REQUEST = frozenset({400, 422})  # FastAPI-based servers answer 422 to unknown fields


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Where a chat model lives and how to talk to it.

    ``base_url`` is the API root, e.g. ``http://localhost:11434/v1`` (Ollama) or
    ``https://api.openai.com/v1``; a trailing ``/`` or ``/chat/completions`` is
    tolerated. ``retries`` counts the extra attempts after the first on transient
    failures; the wait before retry *n* is ``backoff * 2**n`` seconds capped at 8, or
    the server's ``Retry-After`` (seconds, capped at 30). ``json_mode`` ``"json_object"``
    sends ``response_format`` when JSON output is asked for; ``"none"`` never does.
    ``extra_headers`` go with every request (e.g. OpenRouter's ``HTTP-Referer``).
    """

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 60.0
    retries: int = 2
    backoff: float = 0.5
    json_mode: str = "json_object"
    extra_headers: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return config_repr(self)


_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def strip_think(text: str) -> str:
    """``text`` without the ``<think>…</think>`` reasoning of DeepSeek-R1, Qwen3 and kin.

    Also drops an unclosed ``<think>`` block (the model ran out of tokens while
    reasoning) and everything before a lone ``</think>`` (servers that put the opening
    tag in the prompt). Surrounding whitespace is trimmed.
    """
    text = _THINK_BLOCK.sub("", text)
    lowered = text.lower()
    if "</think>" in lowered:
        text = text[lowered.rindex("</think>") + len("</think>") :]
        lowered = text.lower()
    if "<think>" in lowered:
        text = text[: lowered.index("<think>")]
    return text.strip()


def _endpoint(base_url: str) -> str:
    base = base_url.strip().rstrip("/")
    if base.endswith("/chat/completions"):
        base = base[: -len("/chat/completions")].rstrip("/")
    return base + "/chat/completions"


def _message_json(message: ChatMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name is not None:
        out["name"] = message.name
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.tool_calls:
        if not message.content:
            out["content"] = None
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    return out


class OpenAICompatibleLLM:
    """Chat completions over HTTP from any OpenAI-compatible server.

    Transient failures (connection errors, timeouts, HTTP 429 and 5xx) are retried
    ``config.retries`` times, waiting with ``sleep``; then :class:`LLMUnavailable` is
    raised. A server that rejects ``response_format`` with HTTP 400 (llama.cpp,
    LM Studio, some vLLM builds) is asked again without it, and never sent it again
    by this client. A 400 to a request with ``tools`` raises :class:`LLMRequestError`
    saying the model does not accept tools, so callers can fall back. Other 4xx
    answers raise :class:`LLMRequestError`; a reply without choices raises
    :class:`LLMOutputError`. ``<think>`` blocks are removed from the content.
    """

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep) -> None:
        if not config.model.strip():
            raise LLMUnavailable("no chat model is configured (the model name is empty)")
        if not config.base_url.strip():
            raise LLMUnavailable("no chat model is configured (the server URL is empty)")
        check_choice(config.json_mode, JSON_MODES, "LLM json_mode")
        self._config = config
        self._endpoint = JsonEndpoint.configured(
            _endpoint(config.base_url), config, name="the LLM server", what="LLM", sleep=sleep
        )
        self._url = self._endpoint.url
        self._send_response_format = config.json_mode == "json_object"

    @property
    def model(self) -> str:
        return self._config.model

    @property
    def url(self) -> str:
        """The chat-completions endpoint requests go to."""
        return self._url

    @property
    def sends_response_format(self) -> bool:
        """Whether JSON output is asked for with ``response_format`` (false once refused)."""
        return self._send_response_format

    def __repr__(self) -> str:
        return f"OpenAICompatibleLLM({self._config!r})"

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_output: bool = False,
        tools: Sequence[Mapping[str, Any]] = (),
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LLMReply:
        body: dict[str, Any] = {
            "model": self._config.model,
            "messages": [_message_json(m) for m in messages],
            "stream": False,
        }
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if tools:
            body["tools"] = [dict(tool) for tool in tools]
        with_format = json_output and self._send_response_format
        if with_format:
            body["response_format"] = {"type": "json_object"}
        try:
            raw = self._post(body)
        except Refused as refused:
            if not (with_format and refused.status in _BAD_REQUEST):
                raise self._request_error(refused, tools=bool(tools)) from None
            del body["response_format"]
            try:
                raw = self._post(body)
            except Refused as again:  # response_format was not (only) what it disliked
                raise self._request_error(again, tools=bool(tools)) from None
            self._send_response_format = False
        return self._parse(raw)

    # ------------------------------------------------------------------ transport
    def _post(self, body: Mapping[str, Any]) -> bytes:
        """The body of a 2xx answer, retrying transient failures; raises ``Refused``."""
        try:
            return self._endpoint.post(body)
        except Unreachable as exc:
            raise LLMUnavailable(str(exc)) from None

    def _redact(self, text: str) -> str:
        return self._endpoint.redact(text)

    def _request_error(self, refused: Refused, *, tools: bool) -> LLMRequestError:
        message = self._redact(refused.message)
        if tools and refused.status in _BAD_REQUEST:
            return LLMRequestError(
                f"the model {self._config.model!r} at {self._url} does not accept tools "
                f"(HTTP {refused.status}: {message})",
                status=refused.status,
            )
        return LLMRequestError(
            self._endpoint.refusal(refused, not_found="the server URL and the model name"),
            status=refused.status,
        )

    # ------------------------------------------------------------------ reply
    def _parse(self, raw: bytes) -> LLMReply:
        data, preview = json_reply(raw, LLMOutputError, f"the LLM server at {self._url}")
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices:
            if isinstance(data, dict) and "error" in data:
                explanation = self._redact(server_message(raw))
                raise LLMOutputError(f"the LLM server at {self._url} answered: {explanation}")
            raise LLMOutputError(f"the reply from {self._url} has no choices: {preview!r}")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise LLMOutputError(f"the reply from {self._url} has no message: {preview!r}")
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        model = data.get("model")
        return LLMReply(
            content=strip_think(_content_text(message.get("content"))),
            model=model if isinstance(model, str) and model else self._config.model,
            tool_calls=self._tool_calls(message.get("tool_calls")),
            prompt_tokens=_count(usage.get("prompt_tokens")),
            completion_tokens=_count(usage.get("completion_tokens")),
        )

    def _tool_calls(self, raw: Any) -> tuple[ToolCall, ...]:
        if raw is None:
            return ()
        if not isinstance(raw, list):
            raise LLMOutputError(f"the reply from {self._url} has malformed tool_calls")
        calls = []
        for index, item in enumerate(raw):
            function = item.get("function") if isinstance(item, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            if not isinstance(function, dict) or not isinstance(name, str) or not name:
                raise LLMOutputError(
                    f"the reply from {self._url} has a tool call without a function name"
                )
            arguments = function.get("arguments", "")
            if not isinstance(arguments, str):  # some servers send the object itself
                arguments = json.dumps(arguments, ensure_ascii=False)
            call_id = item.get("id")
            calls.append(
                ToolCall(
                    id=call_id if isinstance(call_id, str) and call_id else f"call_{index}",
                    name=name,
                    arguments=arguments,
                )
            )
        return tuple(calls)


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
