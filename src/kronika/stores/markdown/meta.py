"""The trailing metadata comment of a bullet: ``<!-- id=f-1 src=explicit imp=0.8 -->``.

Grammar: ``<!--`` then space-separated ``key=value`` tokens then ``-->`` at the very
end of the bullet's first line. Values are percent-encoded where they would break the
grammar (``%``, whitespace, ``<``, ``>``, ``,``, control characters), so a value never
contains a space and never closes the comment early; lists (``ent``, ``tags``) are
comma-joined encoded elements. Every other character — including non-ASCII letters —
is written as is, so the comment stays readable.

Timestamps are ISO-8601 UTC with a ``Z`` suffix (``2026-11-22T09:00:00Z``; fractions
of a second only when present).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import unquote

from kronika.core.model import Scope, Source
from kronika.core.visibility import Audience

# The comment body may not contain < or > (they are always encoded), which makes the
# last comment on the line the metadata even if the visible text contains "-->".
_META_RE = re.compile(r"(?:^|[ \t])<!--(?P<body>[^<>]*)-->[ \t]*$")
_UNSAFE_RE = re.compile(r"[%<>,\s\x00-\x1f\x7f]")
# An opened comment that never closes at the end of a line: a write cut short if it
# starts like metadata (see split_torn).
_TORN_RE = re.compile(r"(?:^|[ \t])<!--(?P<body>[ \t]*(?P<first>[a-z]*)(?P<eq>=?)[^<>]*)$")

KNOWN_KEYS = frozenset(
    ("id", "src", "created", "updated", "imp", "multi", "from", "to", "by")
    + ("scope", "channel", "user", "team", "ent", "tags", "conf")
)


def encode_value(value: str) -> str:
    """Percent-encode the characters that would break the comment grammar."""
    return _UNSAFE_RE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), value)


def decode_value(value: str) -> str:
    """Inverse of :func:`encode_value`; ``ValueError`` on invalid escapes."""
    try:
        return unquote(value, errors="strict")
    except UnicodeDecodeError as exc:
        raise ValueError(f"bad escape in {value!r}") from exc


def format_time(moment: datetime) -> str:
    """``2026-11-22T09:00:00Z`` (UTC; naive datetimes are taken as UTC)."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    pattern = "%Y-%m-%dT%H:%M:%S.%fZ" if moment.microsecond else "%Y-%m-%dT%H:%M:%SZ"
    return moment.strftime(pattern)


def parse_time(text: str) -> datetime:
    """Parse an ISO-8601 timestamp into aware UTC; ``ValueError`` if it is not one."""
    moment = datetime.fromisoformat(text.strip())
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def split_meta(line: str) -> tuple[str, str | None]:
    """``(visible text, comment body or None)`` for one line (without its newline)."""
    match = _META_RE.search(line)
    if match is None:
        return line, None
    return line[: match.start()], match.group("body")


def looks_like_meta(body: str) -> bool:
    """Whether a comment body is kronika's metadata (a known ``key=`` comes first),
    however garbled the rest, rather than a comment the writer typed."""
    first = body.split(maxsplit=1)[0] if body.split() else ""
    return first.partition("=")[0] in KNOWN_KEYS and "=" in first


def split_torn(line: str) -> tuple[str, str] | None:
    """``(visible text, comment body so far)`` when ``line`` ends inside a metadata
    comment that was never closed (a torn write); ``None`` otherwise."""
    match = _TORN_RE.search(line)
    if match is None:
        return None
    first, body = match.group("first"), match.group("body")
    # ``<!-- id=…`` is metadata; so is a first word cut before its ``=`` (``<!-- i``)
    # when nothing follows it, or nothing at all after ``<!--``
    if match.group("eq"):
        torn = first in KNOWN_KEYS
    else:
        torn = body.strip() == first and any(key.startswith(first) for key in KNOWN_KEYS)
    return (line[: match.start()], body) if torn else None


@dataclass(frozen=True, slots=True)
class Meta:
    """The decoded metadata of one bullet; ``None`` / empty means "not given"."""

    id: str | None = None
    source: Source | None = None
    created: datetime | None = None
    updated: datetime | None = None
    importance: float | None = None
    multi: bool = False
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    scope: Scope | None = None
    channel: str | None = None
    user: str | None = None
    team: str | None = None
    entities: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    confidence: float | None = None
    unknown: tuple[str, ...] = ()


def decode_meta(body: str) -> Meta:
    """Decode a comment body; ``ValueError`` when it is not ``key=value`` tokens."""
    raw: dict[str, str] = {}
    for token in body.split():
        key, sep, value = token.partition("=")
        if not sep or not key or key in raw:
            raise ValueError(f"expected key=value, got {token!r}")
        raw[key] = value
    if not raw:
        raise ValueError("empty metadata comment")

    def text(key: str) -> str | None:
        return decode_value(raw[key]) if key in raw else None

    def moment(key: str) -> datetime | None:
        return parse_time(raw[key]) if key in raw else None

    def number(key: str) -> float | None:
        return float(raw[key]) if key in raw else None

    def listing(key: str) -> tuple[str, ...]:
        return tuple(decode_value(v) for v in raw.get(key, "").split(",") if v)

    src, scope = text("src"), text("scope")
    return Meta(
        id=text("id") or None,
        source=Source(src) if src is not None else None,
        created=moment("created"),
        updated=moment("updated"),
        importance=number("imp"),
        multi=raw.get("multi", "0") in {"1", "true"},
        valid_from=moment("from"),
        valid_to=moment("to"),
        superseded_by=text("by"),
        scope=Scope(scope) if scope is not None else None,
        channel=text("channel"),
        user=text("user"),
        team=text("team"),
        entities=listing("ent"),
        tags=listing("tags"),
        confidence=number("conf"),
        unknown=tuple(sorted(set(raw) - KNOWN_KEYS)),
    )


def render_meta(pairs: list[tuple[str, str | None]]) -> str:
    """``<!-- k=v ... -->`` from ``(key, value)`` pairs, skipping ``None`` values.

    Values must already be in their written form: :func:`encode_value` for text,
    :func:`join_list` for lists, :func:`format_time` for timestamps.
    """
    tokens = [f"{key}={value}" for key, value in pairs if value is not None]
    return "<!-- " + " ".join(tokens) + " -->"


def join_list(values: tuple[str, ...]) -> str | None:
    """Encode each element and join with commas; ``None`` for an empty list."""
    return ",".join(encode_value(v) for v in values if v) or None


def audience_pairs(owners: Audience) -> list[tuple[str, str | None]]:
    """The ``scope``, ``channel``, ``user`` and ``team`` tokens of an item for ``owners``
    (none for the owner's personal memory: files written before readers existed are
    unchanged)."""
    return [
        ("scope", owners.scope.value if owners.scope is not Scope.PERSONAL else None),
        ("channel", encode_value(owners.channel) if owners.channel else None),
        ("user", encode_value(owners.user) if owners.user else None),
        ("team", encode_value(owners.team) if owners.team else None),
    ]


def number_text(value: float) -> str:
    """Shortest readable form of a number (``0.8``, ``1``)."""
    return f"{value:g}"


def decode_torn(body: str) -> Meta:
    """What can be trusted of a torn comment body: its whole ``key=value`` tokens.

    The last token is dropped unless whitespace follows it (it may be cut: ``id=f-3a``
    would name another fact), and so is every token that does not decode alone.
    """
    tokens = body.split()
    if tokens and not body[-1:].isspace():
        tokens = tokens[:-1]
    whole: list[str] = []
    for token in tokens:
        try:
            decode_meta(token)
        except ValueError:
            continue
        whole.append(token)
    return decode_meta(" ".join(whole)) if whole else Meta()
