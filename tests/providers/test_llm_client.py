"""The OpenAI-compatible client against a real HTTP server on 127.0.0.1."""

import json
import socket
from collections.abc import Iterator

import pytest

from kronika.errors import ConfigError, LLMOutputError, LLMRequestError, LLMUnavailable
from kronika.ports import LLM, ChatMessage, ToolCall
from kronika.providers.llm import LLMConfig, OpenAICompatibleLLM, strip_think
from kronika.testing import ScriptedChatServer, ScriptedDrop, ScriptedFailure

USER = [ChatMessage("user", "where do I live?")]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


class Sleeps:
    """A fake ``sleep`` that records how long the client wanted to wait."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def client(base_url, sleeps=None, *, model="qwen3:8b", **options) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(LLMConfig(base_url, model, **options), sleep=sleeps or Sleeps())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---------------------------------------------------------------------- request shape
def test_request_goes_to_chat_completions_with_model_messages_and_headers():
    with ScriptedChatServer(["You live in Kraków."]) as server:
        llm = client(server.base_url)
        reply = llm.chat(
            [ChatMessage("system", "Be brief."), *USER], temperature=0.2, max_tokens=50
        )
    assert reply.content == "You live in Kraków."
    (request,) = server.requests
    assert request.method == "POST" and request.path == "/v1/chat/completions"
    assert request.body == {
        "model": "qwen3:8b",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "where do I live?"},
        ],
        "stream": False,
        "temperature": 0.2,
        "max_tokens": 50,
    }
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"].startswith("kronika/")
    assert "authorization" not in request.headers


def test_api_key_and_extra_headers_are_sent():
    with ScriptedChatServer(["hi"], require_key="sk-test") as server:
        llm = client(
            server.base_url, api_key="sk-test", extra_headers={"HTTP-Referer": "https://x.dev"}
        )
        assert llm.chat(USER).content == "hi"
    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["http-referer"] == "https://x.dev"


@pytest.mark.parametrize("suffix", ["", "/", "/chat/completions", "/chat/completions/"])
def test_base_url_may_end_with_slash_or_the_endpoint(suffix: str):
    with ScriptedChatServer(["ok"]) as server:
        llm = client(server.base_url + suffix)
        assert llm.url == server.base_url + "/chat/completions"
        assert llm.chat(USER).content == "ok"
    assert server.requests[0].path == "/v1/chat/completions"


def test_json_output_sends_response_format_unless_json_mode_is_none():
    with ScriptedChatServer(['{"a": 1}', '{"a": 2}', "plain"]) as server:
        client(server.base_url).chat(USER, json_output=True)
        client(server.base_url, json_mode="none").chat(USER, json_output=True)
        client(server.base_url).chat(USER)
    bodies = [r.body for r in server.requests]
    assert bodies[0]["response_format"] == {"type": "json_object"}
    assert "response_format" not in bodies[1]
    assert "response_format" not in bodies[2]


def test_tools_and_a_tool_round_trip_serialise_per_the_openai_protocol():
    call = ToolCall(id="call_7", name="get_weather", arguments='{"city": "Kraków"}')
    history = [
        *USER,
        ChatMessage("assistant", "", tool_calls=(call,)),
        ChatMessage("tool", '{"temp": -3}', tool_call_id="call_7", name="get_weather"),
    ]
    with ScriptedChatServer(["It is -3 °C in Kraków."]) as server:
        reply = client(server.base_url).chat(history, tools=[WEATHER_TOOL])
    assert reply.content == "It is -3 °C in Kraków."
    body = server.requests[0].body
    assert body["tools"] == [WEATHER_TOOL]
    assert body["messages"][1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_7",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Kraków"}'},
            }
        ],
    }
    assert body["messages"][2] == {
        "role": "tool",
        "content": '{"temp": -3}',
        "name": "get_weather",
        "tool_call_id": "call_7",
    }


# ---------------------------------------------------------------------- reply parsing
def test_tool_calls_usage_and_model_are_parsed():
    scripted = {
        "content": None,
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Kraków"}, "id": "call_1"},
            {"name": "get_weather", "arguments": '{"city": "Łódź"}'},
        ],
    }
    with ScriptedChatServer([scripted]) as server:
        reply = client(server.base_url).chat(USER, tools=[WEATHER_TOOL])
    assert reply.content == ""
    assert reply.model == "qwen3:8b"
    assert [c.name for c in reply.tool_calls] == ["get_weather", "get_weather"]
    assert reply.tool_calls[0].id == "call_1"
    assert json.loads(reply.tool_calls[0].arguments) == {"city": "Kraków"}
    assert reply.tool_calls[1].arguments == '{"city": "Łódź"}'
    assert reply.tool_calls[1].id  # the server made one up; the client keeps it
    assert reply.prompt_tokens == 4  # the scripted server counts words
    assert reply.completion_tokens == 0


def test_usage_is_reported():
    with ScriptedChatServer(["you live in Kraków"]) as server:
        reply = client(server.base_url).chat(USER)
    assert (reply.prompt_tokens, reply.completion_tokens) == (4, 4)


def test_think_blocks_of_reasoning_models_are_removed():
    script = [
        "<think>\nThe user said Kraków earlier.\n</think>\n\nYou live in Kraków.",
        "reasoning the server left unopened</think>Kraków",
        "<think>ran out of tokens while thinking",
    ]
    with ScriptedChatServer(script) as server:
        llm = client(server.base_url)
        assert [llm.chat(USER).content for _ in script] == ["You live in Kraków.", "Kraków", ""]


def test_strip_think_leaves_ordinary_text_alone():
    assert strip_think("  I think <b>so</b>  ") == "I think <b>so</b>"


@pytest.mark.parametrize(
    "body",
    [
        "<html>502 Bad Gateway</html>",
        '{"object": "chat.completion", "choices": []}',
        '{"choices": [{"index": 0}]}',
        '{"error": {"message": "model is loading"}}',
    ],
)
def test_a_reply_without_a_message_is_an_output_error(body: str):
    with (
        ScriptedChatServer([ScriptedFailure(200, body)]) as server,
        pytest.raises(LLMOutputError) as caught,
    ):
        client(server.base_url).chat(USER)
    assert server.base_url in str(caught.value)


def test_an_error_object_in_a_200_reply_is_quoted():
    body = '{"error": {"message": "model is loading"}}'
    with (
        ScriptedChatServer([ScriptedFailure(200, body)]) as server,
        pytest.raises(LLMOutputError, match="model is loading"),
    ):
        client(server.base_url).chat(USER)


# ---------------------------------------------------------------------- retries
def test_503_then_success_is_retried_with_doubling_backoff(sleeps: Sleeps):
    script = [ScriptedFailure(503), ScriptedFailure(502), "finally"]
    with ScriptedChatServer(script) as server:
        reply = client(server.base_url, sleeps, retries=2, backoff=0.5).chat(USER)
    assert reply.content == "finally"
    assert len(server.requests) == 3
    assert sleeps.calls == [0.5, 1.0]


def test_a_dropped_connection_is_retried(sleeps: Sleeps):
    with ScriptedChatServer([ScriptedDrop(), "after the drop"]) as server:
        reply = client(server.base_url, sleeps).chat(USER)
    assert reply.content == "after the drop"
    assert sleeps.calls == [0.5]


def test_retry_after_is_honoured_up_to_30_seconds(sleeps: Sleeps):
    script = [ScriptedFailure(429, retry_after=3), ScriptedFailure(429, retry_after=120), "ok"]
    with ScriptedChatServer(script) as server:
        assert client(server.base_url, sleeps, retries=2).chat(USER).content == "ok"
    assert sleeps.calls == [3.0, 30.0]


def test_backoff_is_capped_at_8_seconds(sleeps: Sleeps):
    with ScriptedChatServer([ScriptedFailure(500)] * 6 + ["ok"]) as server:
        assert client(server.base_url, sleeps, retries=6, backoff=1).chat(USER).content == "ok"
    assert sleeps.calls == [1, 2, 4, 8, 8, 8]


def test_persistent_5xx_raises_unavailable_naming_url_and_cause(sleeps: Sleeps):
    overloaded = ScriptedFailure(503, '{"error": {"message": "overloaded"}}')
    with ScriptedChatServer([overloaded] * 3) as server:
        llm = client(server.base_url, sleeps, retries=2)
        with pytest.raises(LLMUnavailable) as caught:
            llm.chat(USER)
    message = str(caught.value)
    assert server.base_url + "/chat/completions" in message
    assert "3 attempts" in message and "HTTP 503" in message and "overloaded" in message
    assert len(server.requests) == 3 and len(sleeps.calls) == 2


def test_an_exhausted_script_says_so(sleeps: Sleeps):
    with ScriptedChatServer([]) as server, pytest.raises(LLMUnavailable, match="script exhausted"):
        client(server.base_url, sleeps, retries=0).chat(USER)
    assert sleeps.calls == []


def test_nothing_listening_on_this_machine_is_said_at_once(sleeps: Sleeps):
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(LLMUnavailable, match="connection refused") as caught:
        client(url, sleeps, retries=3).chat(USER)
    assert f"nothing is listening at {url}/chat/completions" in str(caught.value)
    assert "start the LLM server" in str(caught.value)
    assert sleeps.calls == []  # no retry: waiting would not start the server


def test_a_server_that_never_answers_times_out(sleeps: Sleeps):
    with socket.socket() as listener:  # accepts connections (backlog) but never replies
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        with pytest.raises(LLMUnavailable, match="timed out"):
            client(url, sleeps, retries=1, timeout=0.2).chat(USER)
    assert sleeps.calls == [0.5]


# ---------------------------------------------------------------------- refusals
def test_400_to_response_format_is_retried_without_it_and_remembered():
    refusal = ScriptedFailure(400, '{"error": {"message": "response_format not supported"}}')
    with ScriptedChatServer([refusal, '{"city": "Kraków"}', '{"city": "Łódź"}']) as server:
        llm = client(server.base_url)
        assert llm.chat(USER, json_output=True).content == '{"city": "Kraków"}'
        assert llm.chat(USER, json_output=True).content == '{"city": "Łódź"}'
    sent = ["response_format" in r.body for r in server.requests]
    assert sent == [True, False, False]
    assert not llm.sends_response_format


def test_400_that_is_not_about_response_format_is_not_remembered():
    refusal = ScriptedFailure(400, '{"error": {"message": "context too long"}}')
    with ScriptedChatServer([refusal, refusal]) as server:
        llm = client(server.base_url)
        with pytest.raises(LLMRequestError, match="context too long"):
            llm.chat(USER, json_output=True)
    assert llm.sends_response_format
    assert len(server.requests) == 2


def test_400_to_tools_says_the_model_does_not_accept_tools():
    refusal = ScriptedFailure(400, '{"error": {"message": "llama3 does not support tools"}}')
    with (
        ScriptedChatServer([refusal]) as server,
        pytest.raises(LLMRequestError, match="does not accept tools") as caught,
    ):
        client(server.base_url).chat(USER, tools=[WEATHER_TOOL])
    assert caught.value.status == 400
    assert "llama3 does not support tools" in str(caught.value)
    assert len(server.requests) == 1


def test_401_is_a_request_error_that_never_shows_the_key(sleeps: Sleeps):
    with ScriptedChatServer(["never sent"], require_key="sk-right") as server:
        llm = client(server.base_url, sleeps, api_key="sk-wrong-SECRET")
        with pytest.raises(LLMRequestError) as caught:
            llm.chat(USER)
    message = str(caught.value)
    assert caught.value.status == 401
    assert "401" in message and "Incorrect API key provided." in message
    assert "SECRET" not in message and "SECRET" not in repr(llm)
    assert sleeps.calls == [] and server.remaining == 1


def test_a_server_message_echoing_the_key_is_redacted():
    echo = ScriptedFailure(403, '{"error": {"message": "key sk-leaky-123 has no access"}}')
    with ScriptedChatServer([echo]) as server, pytest.raises(LLMRequestError) as caught:
        client(server.base_url, api_key="sk-leaky-123").chat(USER)
    assert "sk-leaky-123" not in str(caught.value)
    assert "has no access" in str(caught.value)


def test_404_hints_at_url_and_model():
    with (
        ScriptedChatServer([ScriptedFailure(404, "model 'nope' not found")]) as server,
        pytest.raises(LLMRequestError, match="model name") as caught,
    ):
        client(server.base_url, model="nope").chat(USER)
    assert "model 'nope' not found" in str(caught.value)


# ---------------------------------------------------------------------- configuration
def test_config_repr_masks_the_key():
    config = LLMConfig("https://api.openai.com/v1", "gpt-4o-mini", api_key="sk-live-abc")
    assert "sk-live-abc" not in repr(config) and "'***'" in repr(config)
    assert "api_key=None" in repr(LLMConfig("http://localhost:11434/v1", "qwen3"))


def test_no_model_configured_is_unavailable():
    with pytest.raises(LLMUnavailable, match="no chat model"):
        OpenAICompatibleLLM(LLMConfig("http://localhost:11434/v1", model=""))


@pytest.mark.parametrize(
    "options",
    [
        {"base_url": "localhost:11434/v1"},
        {"timeout": 0},
        {"retries": -1},
        {"json_mode": "grammar"},
    ],
)
def test_bad_settings_are_config_errors(options: dict[str, object]):
    values: dict[str, object] = {"base_url": "http://localhost:11434/v1", "model": "m"}
    values.update(options)
    with pytest.raises(ConfigError):
        OpenAICompatibleLLM(LLMConfig(**values))


def test_the_client_satisfies_the_llm_port():
    llm: LLM = OpenAICompatibleLLM(LLMConfig("http://127.0.0.1:9/v1", model="m"))
    assert llm.model == "m"


@pytest.fixture
def echo_server() -> Iterator[ScriptedChatServer]:
    def responder(body):
        return f"you said {len(body['messages'])} messages"

    with ScriptedChatServer(responder=responder) as server:
        yield server


def test_a_responder_answers_from_the_request(echo_server: ScriptedChatServer):
    llm = client(echo_server.base_url)
    assert llm.chat(USER).content == "you said 1 messages"
    assert llm.chat([*USER, *USER]).content == "you said 2 messages"
