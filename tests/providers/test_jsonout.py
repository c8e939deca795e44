"""Tolerant JSON parsing, the schema subset, and structured calls with repair."""

import doctest

import pytest

import kronika.providers.jsonout
from kronika.errors import LLMOutputError
from kronika.ports import ChatMessage
from kronika.providers.jsonout import parse_json_reply, structured_call, validate
from kronika.providers.llm import LLMConfig, OpenAICompatibleLLM
from kronika.testing import ScriptedChatServer

FACTS = {
    "type": "object",
    "required": ["facts"],
    "additionalProperties": False,
    "properties": {
        "facts": {
            "type": "array",
            "maxItems": 3,
            "items": {
                "type": "object",
                "required": ["tag", "text"],
                "properties": {
                    "tag": {"enum": ["ADD", "UPDATE", "SKIP"]},
                    "text": {"type": "string", "minLength": 1},
                    "importance": {"type": "number", "minimum": 0, "maximum": 1},
                },
            },
        }
    },
}
ASK = [ChatMessage("system", "Extract facts as JSON."), ChatMessage("user", "I moved to Kraków")]


# ---------------------------------------------------------------------- parsing
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"city": "Kraków"}', {"city": "Kraków"}),
        ('```json\n{"city": "Kraków"}\n```', {"city": "Kraków"}),
        ('```\n["a", "b"]\n```', ["a", "b"]),
        ('Here is the JSON you asked for:\n{"city": "Kraków"}\nHope it helps!', {"city": "Kraków"}),
        ('<think>maybe {"city": "Paris"}?</think>\n{"city": "Kraków"}', {"city": "Kraków"}),
        ('{"tags": ["home", "work",],}', {"tags": ["home", "work"]}),
        ("{\u201ccity\u201d: \u201cKraków\u201d}", {"city": "Kraków"}),
        (
            '{"quote": "she said \u201chi\u201d", "n": 1,}',
            {"quote": "she said \u201chi\u201d", "n": 1},
        ),
        ('{"text": "a, ]", }', {"text": "a, ]"}),
        ('I think {this} is it: {"ok": true}', {"ok": True}),
        ("42", 42),
    ],
)
def test_parse_json_reply_finds_the_json(reply: str, expected: object):
    assert parse_json_reply(reply) == expected


def test_a_json_fence_beats_an_example_in_the_prose():
    reply = 'The format is {"facts": []}. Here you go:\n```json\n{"facts": ["x"]}\n```'
    assert parse_json_reply(reply) == {"facts": ["x"]}


@pytest.mark.parametrize("reply", ["", "   ", "<think>only thinking</think>", "no idea, sorry"])
def test_parse_json_reply_without_json_raises(reply: str):
    with pytest.raises(LLMOutputError, match="JSON"):
        parse_json_reply(reply)


def test_the_error_quotes_the_start_of_the_reply():
    with pytest.raises(LLMOutputError, match="I cannot help with that"):
        parse_json_reply("I cannot help with that.")


# ---------------------------------------------------------------------- validation
def test_valid_value_has_no_errors():
    value = {"facts": [{"tag": "ADD", "text": "lives in Kraków", "importance": 0.7}]}
    assert validate(value, FACTS) == []


def test_errors_name_the_json_path():
    value = {
        "facts": [
            {"tag": "ADD", "text": "ok"},
            {"tag": "add", "text": ""},
            {"text": 3, "importance": 1.5},
        ],
        "notes": "extra",
    }
    assert validate(value, FACTS) == [
        'facts[1].tag: must be one of "ADD", "UPDATE", "SKIP" (got "add")',
        "facts[1].text: must have at least 1 characters (has 0)",
        "facts[2].tag: required property is missing",
        "facts[2].text: expected string, got integer",
        "facts[2].importance: must be at most 1 (got 1.5)",
        "notes: unexpected property (allowed: facts)",
    ]


def test_root_and_size_errors():
    assert validate([], FACTS) == ["$: expected object, got array"]
    too_many = {"facts": [{"tag": "SKIP", "text": "x"}] * 4}
    assert validate(too_many, FACTS) == ["facts: must have at most 3 items (has 4)"]
    assert validate({}, FACTS) == ["facts: required property is missing"]


@pytest.mark.parametrize(
    ("value", "schema", "errors"),
    [
        (True, {"type": "integer"}, ["$: expected integer, got boolean"]),
        (2.0, {"type": "integer"}, []),
        (2, {"type": "number", "minimum": 3}, ["$: must be at least 3 (got 2)"]),
        (None, {"type": ["string", "null"]}, []),
        (1, {"type": ["string", "null"]}, ["$: expected string or null, got integer"]),
        (1, {"enum": [True, "1"]}, ['$: must be one of true, "1" (got 1)']),
        ("abcd", {"type": "string", "maxLength": 3}, ["$: must have at most 3 characters (has 4)"]),
        ([1, 2], {"type": "array", "minItems": 3}, ["$: must have at least 3 items (has 2)"]),
        (
            {"my key": 1},
            {"type": "object", "additionalProperties": {"type": "string"}},
            ['["my key"]: expected string, got integer'],
        ),
        ({"x": 1}, {"type": "object", "description": "ignored keyword"}, []),
    ],
)
def test_schema_keywords(value: object, schema: dict, errors: list[str]):
    assert validate(value, schema) == errors


def test_an_unknown_type_in_the_schema_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown JSON Schema type"):
        validate(1, {"type": "int"})


def test_module_examples_run():
    result = doctest.testmod(kronika.providers.jsonout)
    assert result.attempted >= 2 and result.failed == 0


# ---------------------------------------------------------------------- structured calls
def llm_for(server: ScriptedChatServer) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(LLMConfig(server.base_url, "qwen3:8b"), sleep=lambda _: None)


def test_structured_call_asks_for_json_at_temperature_zero():
    good = '{"facts": [{"tag": "ADD", "text": "lives in Kraków"}]}'
    with ScriptedChatServer([f"```json\n{good}\n```"]) as server:
        value = structured_call(llm_for(server), ASK, FACTS, max_tokens=300)
    assert value == {"facts": [{"tag": "ADD", "text": "lives in Kraków"}]}
    (request,) = server.requests
    assert request.body["response_format"] == {"type": "json_object"}
    assert request.body["temperature"] == 0.0
    assert request.body["max_tokens"] == 300


def test_a_bad_reply_is_repaired_on_the_second_turn():
    bad = '{"facts": [{"tag": "MAYBE", "text": "lives in Kraków"}]}'
    good = '{"facts": [{"tag": "ADD", "text": "lives in Kraków"}]}'
    with ScriptedChatServer([bad, good]) as server:
        value = structured_call(llm_for(server), ASK, FACTS)
    assert value["facts"][0]["tag"] == "ADD"
    first, repair = (r.body["messages"] for r in server.requests)
    assert len(first) == 2
    assert repair[:2] == first
    assert repair[2] == {"role": "assistant", "content": bad}
    assert repair[3]["role"] == "user"
    assert (
        'facts[0].tag: must be one of "ADD", "UPDATE", "SKIP" (got "MAYBE")' in repair[3]["content"]
    )
    assert "only the corrected JSON" in repair[3]["content"]


def test_unparseable_reply_is_repaired_too():
    with ScriptedChatServer(["Sure, the user moved.", '{"facts": []}']) as server:
        assert structured_call(llm_for(server), ASK, FACTS) == {"facts": []}
    assert "no JSON found" in server.requests[1].body["messages"][-1]["content"]


def test_structured_call_gives_up_with_the_errors():
    bad = '{"facts": "none"}'
    with ScriptedChatServer([bad, bad, bad]) as server, pytest.raises(LLMOutputError) as caught:
        structured_call(llm_for(server), ASK, FACTS, repair_attempts=2)
    assert "3 replies" in str(caught.value)
    assert "facts: expected array, got string" in str(caught.value)
    assert len(server.requests) == 3
    # each repair replaces the previous one: the prompt does not grow
    assert [len(r.body["messages"]) for r in server.requests] == [2, 4, 4]


def test_no_repair_attempts_means_one_call():
    with (
        ScriptedChatServer(["{}", '{"facts": []}']) as server,
        pytest.raises(LLMOutputError, match="1 reply"),
    ):
        structured_call(llm_for(server), ASK, FACTS, repair_attempts=0)
    assert server.remaining == 1


def test_coerce_fixes_near_misses_before_validation():
    def upper_tags(value):
        for fact in value.get("facts", []) if isinstance(value, dict) else []:
            if isinstance(fact.get("tag"), str):
                fact["tag"] = fact["tag"].upper()
        return value

    with ScriptedChatServer(['{"facts": [{"tag": "add", "text": "likes mate"}]}']) as server:
        value = structured_call(llm_for(server), ASK, FACTS, coerce=upper_tags)
    assert value == {"facts": [{"tag": "ADD", "text": "likes mate"}]}
    assert len(server.requests) == 1
