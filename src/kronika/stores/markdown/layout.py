"""Where things live inside ``<home>/agents/<agent>/`` and which files are indexed.

::

    identity.md             persona (read at wake, not indexed)
    active_context.md       summary of the last session
    brain.md                current facts
    brain_archive.md        facts moved out of the Brain (still searchable)
    history.md              superseded fact values
    sessions/<id>.md        conversation transcripts
    memory/YYYY-MM-DD.md    daily logs
    summaries/L1/*.md       summaries of sessions; summaries/L2/*.md of L1 summaries
    bank/world.md, bank/experience.md, bank/opinions.md, bank/entities/<Name>.md
    proposals.md            changes waiting for the person's approval (not indexed)
    .corrupt/               copies of files that could not be read cleanly
"""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import PurePosixPath

from kronika.core.model import RetainKind
from kronika.errors import InvalidAgentName

AGENT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
IDENTITY = "identity.md"
PROPOSALS = "proposals.md"
CORRUPT_DIR = ".corrupt"
_DAY_RE = re.compile(r"^\d{4}-\d\d-\d\d$")
BANK_KINDS = {
    "world.md": RetainKind.WORLD,
    "experience.md": RetainKind.EXPERIENCE,
    "opinions.md": RetainKind.OPINION,
}


def validate_agent_name(agent: str) -> str:
    """``agent`` if it is a safe folder name, else :class:`InvalidAgentName`."""
    if not isinstance(agent, str) or agent in {".", ".."} or not AGENT_NAME_RE.match(agent):
        raise InvalidAgentName(
            f"invalid agent name {agent!r}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return agent


class SourceKind(StrEnum):
    """What parser reads an indexed file."""

    FACTS = "facts"
    ACTIVE_CONTEXT = "active_context"
    SESSION = "session"
    DAILY_LOG = "daily_log"
    SUMMARY = "summary"
    BANK = "bank"
    ENTITY = "entity"


def classify(path: str) -> SourceKind | None:
    """The kind of an agent-relative posix path, ``None`` when it is not indexed."""
    parts = PurePosixPath(path).parts
    if not parts or not parts[-1].endswith(".md") or any(p.startswith(".") for p in parts):
        return None
    stem = parts[-1][:-3]
    match parts:
        case ("brain.md" | "brain_archive.md" | "history.md",):
            return SourceKind.FACTS
        case ("active_context.md",):
            return SourceKind.ACTIVE_CONTEXT
        case ("sessions", _):
            return SourceKind.SESSION
        case ("memory", _) if _DAY_RE.match(stem):
            return SourceKind.DAILY_LOG
        case ("summaries", "L1" | "L2", _):
            return SourceKind.SUMMARY
        case ("bank", _) if parts[-1] in BANK_KINDS:
            return SourceKind.BANK
        case ("bank", "entities", _):
            return SourceKind.ENTITY
    return None


SOURCE_GLOBS = (
    "brain.md",
    "brain_archive.md",
    "history.md",
    "active_context.md",
    "sessions/*.md",
    "memory/*.md",
    "summaries/L1/*.md",
    "summaries/L2/*.md",
    "bank/*.md",
    "bank/entities/*.md",
)
