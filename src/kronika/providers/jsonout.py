"""Structured output from chat models: tolerant JSON parsing, a small schema check, repair.

Models wrap JSON in fences, add a sentence before it, leave a trailing comma, or
think out loud first. :func:`parse_json_reply` finds the JSON anyway;
:func:`validate` checks it against a small JSON Schema subset with readable error
paths; :func:`structured_call` puts both together and asks the model to fix its own
reply before giving up.

>>> parse_json_reply('Sure! ```json\\n{"city": "Kraków", "tags": ["home",],}\\n```')
{'city': 'Kraków', 'tags': ['home']}
>>> validate({"facts": [{"tag": "x"}]}, {"type": "object", "properties": {"facts": {
...     "type": "array", "items": {"type": "object", "required": ["tag", "text"]}}}})
['facts[0].text: required property is missing']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from kronika.errors import LLMOutputError
from kronika.ports import LLM, ChatMessage
from kronika.prompts.base import Prompt
from kronika.providers.llm import strip_think

__all__ = ["parse_json_reply", "structured_call", "validate"]

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_MAX_OPENINGS = 64  # JSON starts tried in prose before giving up
_MAX_LISTED_ERRORS = 20
_SMART_OPEN = "\u201c"
_SMART_CLOSE = "\u201d"


class _NotFound(Exception):
    pass


def parse_json_reply(text: str) -> Any:
    """The JSON value in a model reply.

    Accepts ```` ```json ```` fences, prose before and after, a ``<think>`` block,
    single trailing commas, and smart quotes (“ ”) used as JSON quotes. When the reply
    holds several JSON texts, the whole reply wins, then the first fenced block, then
    the first object or array in the prose. Raises :class:`LLMOutputError` when
    nothing parseable is there.
    """
    cleaned = strip_think(text)
    if not cleaned:
        raise LLMOutputError("the reply is empty (no JSON in it)")
    for candidate in _candidates(cleaned):
        for variant in (candidate, _repair(candidate)):
            try:
                return json.loads(variant)
            except ValueError:
                pass
    for candidate in _candidates(cleaned):
        for variant in (candidate, _repair(candidate)):
            try:
                return _first_embedded(variant)
            except _NotFound:
                pass
    preview = " ".join(cleaned.split())
    preview = preview[:160] + ("…" if len(preview) > 160 else "")
    raise LLMOutputError(f"no JSON found in the reply: {preview!r}")


def _candidates(text: str) -> Iterator[str]:
    """The reply itself, then the inside of each fenced block (``json`` ones first)."""
    yield text
    blocks = [(m.group(1).lower(), m.group(2).strip()) for m in _FENCE.finditer(text)]
    yield from (body for lang, body in blocks if lang == "json")
    yield from (body for lang, body in blocks if lang != "json")


def _first_embedded(text: str) -> Any:
    """The first object or array that parses, starting at some ``{`` or ``[`` in ``text``."""
    decoder = json.JSONDecoder()
    tried = 0
    for match in re.finditer(r"[\[{]", text):
        if tried == _MAX_OPENINGS:
            break
        tried += 1
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict | list):
            return value
    raise _NotFound


def _repair(text: str) -> str:
    """``text`` with trailing commas dropped and smart quotes turned into JSON quotes.

    Only characters outside ordinary JSON strings change, so a “quoted” word inside a
    string value stays as it is.
    """
    out: list[str] = []
    quote: str | None = None  # the quote that closes the current string
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if quote is not None:
            if char == "\\" and i + 1 < n:
                out.append(text[i : i + 2])
                i += 2
                continue
            if char == quote or (quote == _SMART_CLOSE and char == _SMART_OPEN):
                out.append('"')
                quote = None
            elif char == '"':  # a plain quote inside a “smart” string
                out.append('\\"')
            else:
                out.append(char)
        elif char == '"':
            out.append(char)
            quote = '"'
        elif char in (_SMART_OPEN, _SMART_CLOSE):
            out.append('"')
            quote = _SMART_CLOSE
        elif char == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if not (j < n and text[j] in "}]"):
                out.append(char)
        else:
            out.append(char)
        i += 1
    return "".join(out)


# ---------------------------------------------------------------------- validation
_TYPE_NAMES = ("object", "array", "string", "integer", "number", "boolean", "null")


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _is_type(value: Any, name: str) -> bool:
    actual = _type_of(value)
    if name == "number":
        return actual in ("integer", "number")
    if name == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == name


def _json_equal(a: Any, b: Any) -> bool:
    kind_a, kind_b = _type_of(a), _type_of(b)
    numbers = ("integer", "number")
    if kind_a in numbers and kind_b in numbers:
        return bool(a == b)
    if kind_a != kind_b:
        return False
    if kind_a == "array":
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if kind_a == "object":
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return bool(a == b)


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(value: Any, schema: Mapping[str, Any]) -> list[str]:
    """Errors of ``value`` against a small JSON Schema subset; an empty list means valid.

    Each error starts with a JSON path such as ``facts[2].tag`` (``$`` for the value
    itself). Understood keywords: ``type`` (``object``, ``array``, ``string``,
    ``integer``, ``number``, ``boolean``, ``null``, or a list of them), ``properties``,
    ``required``, ``additionalProperties`` (``false``, or a schema for the extra
    properties), ``items``, ``enum``, ``minItems``, ``maxItems``, ``minLength``,
    ``maxLength``, ``minimum`` and ``maximum``; other keywords are ignored. An unknown
    type name raises :class:`ValueError` (a mistake in the schema, not in the value).
    """
    errors: list[str] = []
    _check(value, schema, "", errors)
    return errors


def _check(value: Any, schema: Mapping[str, Any], path: str, errors: list[str]) -> None:
    where = path or "$"
    expected = schema.get("type")
    if expected is not None:
        names = [expected] if isinstance(expected, str) else list(expected)
        for name in names:
            if name not in _TYPE_NAMES:
                raise ValueError(f"unknown JSON Schema type {name!r} at {where}")
        if not any(_is_type(value, name) for name in names):
            wanted = " or ".join(names)
            errors.append(f"{where}: expected {wanted}, got {_type_of(value)}")
            return
    if "enum" in schema and not any(_json_equal(value, option) for option in schema["enum"]):
        options = ", ".join(_show(option) for option in schema["enum"])
        errors.append(f"{where}: must be one of {options} (got {_show(value)})")
    kind = _type_of(value)
    if kind == "string":
        _check_bounds(len(value), schema, "minLength", "maxLength", "characters", where, errors)
    elif kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{where}: must be at least {schema['minimum']} (got {value})")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{where}: must be at most {schema['maximum']} (got {value})")
    elif kind == "array":
        _check_bounds(len(value), schema, "minItems", "maxItems", "items", where, errors)
        items = schema.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                _check(item, items, _child(path, index), errors)
    elif kind == "object":
        _check_object(value, schema, path, errors)


def _check_bounds(
    size: int,
    schema: Mapping[str, Any],
    low: str,
    high: str,
    unit: str,
    where: str,
    errors: list[str],
) -> None:
    if low in schema and size < schema[low]:
        errors.append(f"{where}: must have at least {schema[low]} {unit} (has {size})")
    if high in schema and size > schema[high]:
        errors.append(f"{where}: must have at most {schema[high]} {unit} (has {size})")


def _check_object(
    value: Mapping[str, Any], schema: Mapping[str, Any], path: str, errors: list[str]
) -> None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            errors.append(f"{_child(path, name)}: required property is missing")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties:
            _check(item, properties[name], _child(path, name), errors)
        elif extra is False:
            allowed = ", ".join(properties) or "none"
            errors.append(f"{_child(path, name)}: unexpected property (allowed: {allowed})")
        elif isinstance(extra, Mapping):
            _check(item, extra, _child(path, name), errors)


# ---------------------------------------------------------------------- the call
def _listing(errors: Sequence[str]) -> str:
    shown = [f"- {error}" for error in errors[:_MAX_LISTED_ERRORS]]
    if len(errors) > _MAX_LISTED_ERRORS:
        shown.append(f"- … and {len(errors) - _MAX_LISTED_ERRORS} more")
    return "\n".join(shown)


def _repair_request(errors: Sequence[str], schema: Mapping[str, Any]) -> str:
    return (
        "Your reply is not valid:\n"
        f"{_listing(errors)}\n\n"
        "It must be JSON matching this schema:\n"
        f"{json.dumps(schema, ensure_ascii=False)}\n\n"
        "Reply with only the corrected JSON: no explanation, no code fences."
    )


def structured_call(
    llm: LLM,
    messages: Sequence[ChatMessage],
    schema: Mapping[str, Any],
    *,
    repair_attempts: int = 1,
    max_tokens: int | None = None,
    coerce: Callable[[Any], Any] | None = None,
) -> Any:
    """Ask ``llm`` for JSON matching ``schema`` and return the parsed, valid value.

    The model is asked with ``json_output=True`` at temperature 0. The reply is
    parsed with :func:`parse_json_reply`, passed through ``coerce`` when given (a hook
    that may normalise near-misses, e.g. upper-case an enum value; it should return
    what it does not recognise unchanged), then checked with :func:`validate`. On a
    parse or validation failure the model gets one repair turn — its own reply, then
    a user message listing the errors and asking for only the corrected JSON — up to
    ``repair_attempts`` times (each repair replaces the previous one, so the prompt
    does not grow). Then :class:`LLMOutputError` lists the last errors. Invalid data
    is never returned. Errors of the LLM itself (:class:`LLMUnavailable`…) propagate.
    """
    if repair_attempts < 0:
        raise ValueError("repair_attempts must not be negative")
    conversation = list(messages)
    errors: list[str] = []
    for _attempt in range(repair_attempts + 1):
        reply = llm.chat(conversation, json_output=True, temperature=0.0, max_tokens=max_tokens)
        try:
            value = parse_json_reply(reply.content)
        except LLMOutputError as exc:
            errors = [f"$: {exc}"]
        else:
            if coerce is not None:
                value = coerce(value)
            errors = validate(value, schema)
            if not errors:
                return value
        conversation = [
            *messages,
            ChatMessage("assistant", reply.content),
            ChatMessage("user", _repair_request(errors, schema)),
        ]
    calls = "1 reply" if repair_attempts == 0 else f"{repair_attempts + 1} replies"
    raise LLMOutputError(
        f"the model {llm.model!r} gave no valid JSON in {calls}; last errors:\n{_listing(errors)}"
    )


def ask(llm: LLM, prompt: Prompt, user: str, *, task: str, agent: str, **values: object) -> Any:
    """What ``llm`` answers ``prompt`` with (:func:`structured_call`): ``user`` is the
    user message, ``agent`` and ``values`` fill the system prompt; the call is counted
    as ``task`` of ``agent`` (:func:`~kronika.providers.ledger.llm_task`)."""
    from kronika.providers.ledger import llm_task

    with llm_task(task, agent):
        return structured_call(
            llm,
            prompt.messages(user, agent=agent, **values),
            prompt.schema,
            coerce=prompt.coerce,
        )
