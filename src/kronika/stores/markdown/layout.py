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
from functools import lru_cache
from pathlib import PurePosixPath

from kronika.core.model import RetainKind
from kronika.core.text import any_case
from kronika.errors import InvalidAgentName, InvalidInput

AGENT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_NAME_CHAR_RE = re.compile(r"[A-Za-z0-9._-]")
MAX_FILE_STEM = 200
"""Bytes of a file name kronika derives from a session id (most file systems allow 255)."""
IDENTITY = "identity.md"
PROPOSALS = "proposals.md"
CORRUPT_DIR = ".corrupt"
_DAY_RE = re.compile(r"^\d{4}-\d\d-\d\d$")
BANK_KINDS = {
    "world.md": RetainKind.WORLD,
    "experience.md": RetainKind.EXPERIENCE,
    "opinions.md": RetainKind.OPINION,
}


WINDOWS_RESERVED = frozenset(
    ("con", "prn", "aux", "nul")
    + tuple(f"{port}{n}" for port in ("com", "lpt") for n in "0123456789¹²³")
)
"""Names Windows gives to devices, whatever the case or extension (``nul.md``, ``Com1``)."""


AGENT_NAME_PATTERN = (
    "^(?!(?:"
    + "|".join(any_case(w) for w in ("con", "prn", "aux", "nul"))
    + "|"
    + "|".join(any_case(w) + "[0-9]" for w in ("com", "lpt"))
    + r")(?:\.|$))[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?$"
)
"""The name of a new agent as one regular expression (ECMA-262, for the OpenAPI
document): :data:`AGENT_NAME_RE` without a device name or a trailing dot, what
:func:`validate_agent_name` accepts."""


def mangled_name_problem(name: str) -> str | None:
    """Why a file system would not keep ``name`` as written, or ``None`` when it would.

    Windows turns ``CON``, ``NUL``, ``COM1``… (any case, any extension) into devices
    and drops a trailing dot or space; a name that is ``.`` or ``..`` is a folder
    already.
    """
    if name in {".", ".."}:
        return "it names a folder already"
    if name.split(".", 1)[0].rstrip(" ").casefold() in WINDOWS_RESERVED:
        return "Windows reserves it for a device"
    if name.endswith((".", " ")):
        return "Windows drops a trailing dot or space"
    return None


def validate_agent_name(agent: str, *, existing: bool = False) -> str:
    """``agent`` if it is a safe folder name, else :class:`InvalidAgentName`.

    ``existing``: the folder is there already, so a name only some other file system
    would mangle (see :func:`mangled_name_problem`) is still read.
    """
    rule = "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
    if not isinstance(agent, str) or not AGENT_NAME_RE.fullmatch(agent):
        raise InvalidAgentName(f"invalid agent name {agent!r}: {rule}")
    problem = None if existing else mangled_name_problem(agent)
    if problem is not None:
        raise InvalidAgentName(f"invalid agent name {agent!r}: {problem}; {rule}")
    return agent


def session_file_stem(session_id: str) -> str:
    """The file name (without ``.md``) of a session: one name per id, never shared.

    Letters, digits, ``_`` and ``-`` stay as they are, and so does ``.`` except first
    or last; every other character becomes ``%`` and the hex of its UTF-8 bytes
    (``a/b`` → ``a%2Fb``, ``%`` → ``%25``), as does the first letter of a name
    Windows reserves (``CON`` → ``%43ON``). The mapping is reversible
    (``urllib.parse.unquote``), so ``a/b`` and ``a_b`` never share a file.
    :class:`InvalidInput` for an empty id or one whose name would pass 200 bytes.
    """
    if not session_id:
        raise InvalidInput("a session id cannot be empty")
    last = len(session_id) - 1
    stem = "".join(
        char
        if _NAME_CHAR_RE.fullmatch(char) and not (char == "." and i in (0, last))
        else "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
        for i, char in enumerate(session_id)
    )
    if mangled_name_problem(stem) is not None:
        stem = f"%{ord(stem[0]):02X}{stem[1:]}"
    if len(stem) > MAX_FILE_STEM:
        raise InvalidInput(
            f"session id {session_id[:40]!r}… is too long: its file name would be"
            f" {len(stem)} bytes, the limit is {MAX_FILE_STEM}"
        )
    return stem


class SourceKind(StrEnum):
    """What parser reads an indexed file."""

    FACTS = "facts"
    ACTIVE_CONTEXT = "active_context"
    SESSION = "session"
    DAILY_LOG = "daily_log"
    SUMMARY = "summary"
    BANK = "bank"
    ENTITY = "entity"
    LESSONS = "lessons"
    SENSORY = "sensory"


@lru_cache(maxsize=4096)  # a write asks a dozen times of the same few paths
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
        case ("lessons.md",):
            return SourceKind.LESSONS
        case ("sessions", _):
            return SourceKind.SESSION
        case ("memory", _) if _DAY_RE.match(stem):
            return SourceKind.DAILY_LOG
        case ("sensory", _) if _DAY_RE.match(stem):
            return SourceKind.SENSORY
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
    "lessons.md",
    "sessions/*.md",
    "memory/*.md",
    "sensory/*.md",
    "summaries/L1/*.md",
    "summaries/L2/*.md",
    "bank/*.md",
    "bank/entities/*.md",
)

SOURCE_NAMES = frozenset(p for p in SOURCE_GLOBS if "/" not in p)
"""The indexed files at the top of an agent's folder."""
SOURCE_FOLDERS = tuple(p.removesuffix("/*.md") for p in SOURCE_GLOBS if "/" in p)
"""The folders whose Markdown files are indexed (each alone, not the folders below)."""
FOLDERS_ON_THE_WAY = tuple(
    dict.fromkeys(
        str(parent) if str(parent) != "." else ""
        for pattern in SOURCE_GLOBS
        for parent in reversed(PurePosixPath(pattern).parents)
    )
)
"""Every folder an indexed file can be in or below, relative to the agent's folder, with
the folders on the way to it (``""`` is the agent's folder itself)."""
assert all("*" not in p for p in SOURCE_NAMES) and all(
    p.endswith("/*.md") and "*" not in p.removesuffix("/*.md") for p in SOURCE_GLOBS if "/" in p
), "SOURCE_GLOBS: names, or a folder's *.md"
