"""What a working copy (:mod:`~kronika.stores.working_copy`) knows of the record, shared
by its parts: the last change number it saw and, for each document, the file it left
(time, size, SHA-256); with the few reads of the folder every part makes."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from kronika.stores.manifest import Documents, Entry
from kronika.stores.markdown.layout import validate_agent_name
from kronika.stores.private import make_private_dir

AGENT_FOLDERS = ("sessions", "memory", "summaries/L1", "summaries/L2", "bank/entities")

Copy = Entry
"""What this folder held of one document when it last matched the record."""


@dataclass
class CopyState:
    """The record as this copy last saw it: the newest change number pulled or pushed
    (``change``) and each document's file as left then (``copies``, which notes what
    changed so a save of the manifest writes those alone)."""

    change: int = 0
    copies: Documents = field(default_factory=Documents)


def file_state(file: Path) -> Copy | None:
    """``file``'s time, size and SHA-256 (``None``: no such file)."""
    try:
        raw = file.read_bytes()
        stat = file.stat()
    except FileNotFoundError:
        return None
    return Copy(stat.st_mtime_ns, len(raw), hashlib.sha256(raw).hexdigest())


def digest(text: str | None) -> str | None:
    """The SHA-256 of ``text`` as UTF-8 (``None`` for no text: a document removed)."""
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def agent_folder(home: Path, agent: str) -> Path:
    """``agent``'s folder under ``home``, made with its subfolders when missing (a
    document of the record goes there)."""
    folder = home / "agents" / validate_agent_name(agent, existing=True)
    if not folder.is_dir():
        for sub in AGENT_FOLDERS:
            make_private_dir(folder / sub)
    return folder
