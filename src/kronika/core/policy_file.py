"""The storage-policy section of ``kronika.toml``, as text: read it out, put a new one in.

The section is every ``[retention]`` table and every ``[[policy]]`` table of the file,
each from its header line to the next header of another table. Everything else — the
settings before the first table, ``[agents.*]``, ``[teams]``, other tables and their
comments — is kept byte for byte (:func:`with_section`); the new section goes at the
end of the file. Comments written inside the old section go with it (they belong to
the tables they sit in), but for those just above the header of another table, which
are that table's; a comment in the new text is kept.

:func:`checked_section` reads a new section and refuses anything but those tables;
:func:`with_section` then refuses a file that would not read back to the same policies
(a policy set some other way, e.g. a dotted ``retention.short`` key at the top, or a
multi-line string that looks like a header).
"""

from __future__ import annotations

import re
import tomllib

from kronika.core.policies import StoragePolicies, parse_policies
from kronika.errors import ConfigError, InvalidInput

SECTION_TABLES = ("retention", "policy")
_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\"' -]+?)\s*\]\]?\s*(?:#.*)?$")


def _is_policy_header(name: str) -> bool:
    return name.strip().strip("\"'") in SECTION_TABLES


def split(text: str) -> tuple[str, str]:
    """``(rest, section)``: the file's lines outside and inside the policy tables."""
    rest: list[str] = []
    section: list[str] = []
    inside = False
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header:
            ours = _is_policy_header(header.group(1))
            if inside and not ours:  # comments just above a header are that table's
                lead: list[str] = []
                while section and (not section[-1].strip() or section[-1].lstrip().startswith("#")):
                    lead.insert(0, section.pop())
                rest += lead
            inside = ours
        (section if inside else rest).append(line)
    return "".join(rest), "".join(section)


def checked_section(section: str, source: str = "the policies") -> StoragePolicies:
    """The policies ``section`` sets; :class:`InvalidInput` (naming the line) when it
    is not TOML, holds anything but ``[retention]`` and ``[[policy]]`` tables, or a
    rule that ``kronika.toml`` would refuse."""
    try:
        raw = tomllib.loads(section)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{source} are not valid TOML: {exc}") from None
    others = sorted(set(raw) - set(SECTION_TABLES))
    if others:
        raise InvalidInput(
            f"{source} may hold only [retention] and [[policy]] tables, not {', '.join(others)}"
        )
    try:
        return parse_policies(raw.get("policy"), raw.get("retention"), text=section, source=source)
    except ConfigError as exc:  # a bad rule is the caller's input here
        raise InvalidInput(str(exc)) from None


def file_policies(text: str, source: str = "kronika.toml") -> StoragePolicies:
    """The policies a whole ``kronika.toml`` sets, read as loading the settings reads
    them (none when it has no policy tables); :class:`ConfigError` naming the line
    when the file is not TOML or holds a rule it may not."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source} is not valid TOML: {exc}") from None
    return parse_policies(raw.get("policy"), raw.get("retention"), text=text, source=source)


def with_section(text: str, section: str) -> str:
    """``text`` with its policy section replaced by ``section`` (at the end of the
    file); :class:`InvalidInput` when the result would not read back to exactly the
    policies ``section`` sets."""
    wanted = checked_section(section)
    rest, _ = split(text)
    parts = [part for part in (rest.rstrip(), section.strip()) if part]
    new = "\n\n".join(parts) + "\n" if parts else ""
    try:
        raw = tomllib.loads(new)
        found = parse_policies(raw.get("policy"), raw.get("retention"), text=new)
    except (tomllib.TOMLDecodeError, ConfigError) as exc:
        raise InvalidInput(f"kronika.toml cannot take these policies: {exc}") from None
    if found != wanted:
        raise InvalidInput(
            "kronika.toml sets storage policies outside its [retention] and [[policy]] "
            "tables; edit the file itself"
        )
    return new
