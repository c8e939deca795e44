"""``proposals.md``: changes an agent proposed that wait for the person's approval.

One bullet per proposal, readable by a person, with kronika's bookkeeping in a
trailing comment::

    # Proposals

    - [ ] remember **city**: Lviv — from jaskier, 2026-11-22T10:00:00Z <!-- proposal=p-1a2b3c … -->

The comment holds ``proposal`` (the id), ``by``, ``at``, ``section`` and ``change``:
``change`` is the change itself as compact JSON, base64url-encoded without padding, so
nothing it holds can end the comment early; ``by`` and ``section`` are percent-encoded
like the Brain's metadata. The comment is what counts: the text before it is only for
reading. A bullet whose comment cannot be read is reported and skipped; every other
line is kept exactly as written. The file is not indexed: proposals are never recalled.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kronika.stores.markdown.layout import PROPOSALS
from kronika.stores.markdown.lines import bare
from kronika.stores.markdown.meta import (
    decode_value,
    encode_value,
    format_time,
    parse_time,
    render_meta,
    split_meta,
)

PATH = PROPOSALS
TEMPLATE = (
    "# Proposals\n\n"
    "Changes agents proposed, waiting for your approval: "
    "`kronika proposals approve ID` applies one, `kronika proposals reject ID` drops it.\n\n"
)
MAX_TEXT = 200
_BULLET_RE = re.compile(r"^[-*+][ \t]")


@dataclass(frozen=True, slots=True)
class ProposalEntry:
    """One proposal as written: ``payload`` is the change as JSON, ``text`` the readable
    part, ``line`` its 1-based line (0 before it is written)."""

    id: str
    source_agent: str
    created_at: datetime
    section: str
    text: str
    payload: dict[str, Any]
    line: int = 0


@dataclass(frozen=True, slots=True)
class ParsedProposals:
    entries: tuple[ProposalEntry, ...]
    warnings: tuple[str, ...]


def new_proposal_id(taken: Collection[str]) -> str:
    """A short id (``p-1a2b3c``) not in ``taken``."""
    while True:
        candidate = f"p-{secrets.token_hex(3)}"
        if candidate not in taken:
            return candidate


def readable(text: str) -> str:
    """``text`` on one line, shortened to :data:`MAX_TEXT` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_TEXT else flat[: MAX_TEXT - 1] + "…"


def encode_payload(payload: dict[str, Any]) -> str:
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def decode_payload(text: str) -> dict[str, Any]:
    """Inverse of :func:`encode_payload`; ``ValueError`` when it is not one."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        data = json.loads(raw.decode("utf-8"))
    except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the change cannot be decoded ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError("the change is not a JSON object")
    return data


def render_entry(entry: ProposalEntry) -> str:
    """The entry's line, newline included."""
    meta = render_meta(
        [
            ("proposal", entry.id),
            ("by", encode_value(entry.source_agent)),
            ("at", format_time(entry.created_at)),
            ("section", encode_value(entry.section)),
            ("change", encode_payload(entry.payload)),
        ]
    )
    when = format_time(entry.created_at)
    return f"- [ ] {readable(entry.text)} — from {entry.source_agent}, {when} {meta}\n"


def _parse_line(line: str, number: int) -> ProposalEntry:
    text, body = split_meta(bare(line))
    if body is None:
        raise ValueError("it has no <!-- proposal=… --> comment")
    fields: dict[str, str] = {}
    for token in body.split():
        key, sep, value = token.partition("=")
        if not sep or key in fields:
            raise ValueError(f"unexpected {token[:40]!r} in its comment")
        fields[key] = value
    missing = [key for key in ("proposal", "by", "at", "change") if not fields.get(key)]
    if missing:
        raise ValueError(f"its comment lacks {', '.join(missing)}")
    shown = _BULLET_RE.sub("", text, count=1).removeprefix("[ ] ").removeprefix("[x] ")
    return ProposalEntry(
        id=fields["proposal"],
        source_agent=decode_value(fields["by"]),
        created_at=parse_time(fields["at"]),
        section=decode_value(fields.get("section", "")),
        text=shown.rpartition(" — from ")[0].strip() or shown.strip(),
        payload=decode_payload(fields["change"]),
        line=number,
    )


def parse_proposals(text: str) -> ParsedProposals:
    """Every readable proposal bullet of ``text``; other bullets become warnings."""
    entries: list[ProposalEntry] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(text.split("\n"), 1):
        if not _BULLET_RE.match(line):
            continue
        try:
            entry = _parse_line(line, number)
            if entry.id in seen:
                raise ValueError(f"its id {entry.id} is used by an earlier line")
        except ValueError as exc:
            warnings.append(
                f"{PATH} line {number} is not a proposal kronika can read: {exc}; it was skipped "
                "(fix or delete the line)"
            )
            continue
        seen.add(entry.id)
        entries.append(entry)
    return ParsedProposals(tuple(entries), tuple(warnings))


def append_entry(lines: list[str], entry: ProposalEntry) -> list[str]:
    """``lines`` with ``entry`` added at the end."""
    if lines and not lines[-1].endswith("\n"):
        lines = [*lines[:-1], lines[-1] + "\n"]
    return [*lines, render_entry(entry)]


def remove_entry(lines: list[str], proposal_id: str) -> list[str]:
    """``lines`` without the bullet of proposal ``proposal_id`` (unchanged if none)."""
    token = f"proposal={proposal_id}"
    for index, line in enumerate(lines):
        body = split_meta(bare(line))[1] if _BULLET_RE.match(line) else None
        if body is not None and token in body.split():
            return lines[:index] + lines[index + 1 :]
    return lines
