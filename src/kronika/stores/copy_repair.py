"""A damaged file of a working copy put back (a part of
:class:`~kronika.stores.working_copy.WorkingCopy`): a file that looks damaged (not
UTF-8, emptied, cut short inside a line, found by the index to have lost items, or a
fact or session file gone without kronika removing it) is never pushed; the record's
version is put back, the damaged file kept under ``.corrupt/`` (``.damaged``) and
said, and the facts written into it since are added to the record's version again."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from kronika.core.model import MemoryItem
from kronika.ports import StoreOfRecord
from kronika.stores.copy_state import Copy, CopyState, agent_folder, file_state
from kronika.stores.markdown.atomic import atomic_write_text
from kronika.stores.markdown.facts.brain import FACT_FILES, parse_facts
from kronika.stores.markdown.files import keep_copy
from kronika.stores.markdown.layout import SourceKind, classify
from kronika.stores.markdown.workspace import MarkdownWorkspace

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class Repairs:
    """Puts the record's version of a damaged file back (see the module docstring)."""

    def __init__(
        self, home: Path, workspace: MarkdownWorkspace, record: StoreOfRecord, state: CopyState
    ) -> None:
        self.home = home
        self.workspace = workspace
        self.record = record
        self.state = state

    def put_back_damaged(self) -> set[tuple[str, str]]:
        """The files the workspace found damaged (:attr:`MarkdownWorkspace.damaged`) that
        the record holds whole: each is put back as the record has it, never pushed."""
        marked = {key for key in self.workspace.damaged if key in self.state.copies}
        self.workspace.damaged.clear()
        # a file given facts written since the damage is pushed with them below
        return {key for key in sorted(marked) if not self.restore(*key)}

    def restore(self, agent: str, path: str) -> bool:
        """Put the record's version of a damaged file back in the folder (a copy of the
        damaged one is kept under ``.corrupt/``); what the file holds that the record's
        version does not (facts written since) is added to it again. True when it was:
        the file then differs from the record and is to be pushed."""
        folder = agent_folder(self.home, agent)
        file = folder / path
        here = file.read_bytes() if file.is_file() else b""
        kept = folder / keep_copy(folder, f"{path}.damaged", here) if here else None
        newer = self._facts_not_in_record(agent, path) if here else []
        latest = self.record.document(agent, path)
        if latest is None or latest.text is None:
            return False
        atomic_write_text(file, latest.text)
        os.utime(file, ns=(latest.modified_ns, latest.modified_ns))
        state = file_state(file)
        if state is not None:
            self.state.copies[(agent, path)] = state
        if newer:
            self.workspace.put_back_facts(agent, path, newer)
        self.workspace.notes.append(
            f"{agent}/{path} was damaged in this working copy; it was not written to the "
            "store of record, and the record's version was put back"
            + (f" (the damaged file was kept at {kept})" if kept else "")
        )
        return bool(newer)

    def _facts_not_in_record(self, agent: str, path: str) -> list[MemoryItem]:
        """The facts a damaged fact file holds that its last pushed version did not
        (written after the damage), to add to the record's version once it is back."""
        if classify(path) is not SourceKind.FACTS:
            return []
        try:
            now = self.workspace.parse_source(agent, path).items
        except OSError:
            return []
        last = self.record.document(agent, path)
        before = {
            item.id: item
            for item in (
                self._parse_text(agent, path, last.text)
                if last is not None and last.text is not None
                else ()
            )
        }
        values = {(i.key or "").casefold(): i.value or "" for i in before.values()}
        return [
            item
            for item in now
            if item.id not in before
            and not item.id.startswith("h-")  # a line without metadata: not kronika's write
            and not _cut_short(item, values)
        ]

    def _parse_text(self, agent: str, path: str, text: str) -> list[MemoryItem]:
        spec = next(s for s in FACT_FILES if s.path == path)
        tenant = self.workspace.tenant_of(agent)
        return list(parse_facts(text, spec=spec, agent=agent, tenant=tenant, mtime=_EPOCH).items)


def looks_damaged(raw: bytes, known: Copy) -> bool:
    """Whether an indexed file's new bytes ``raw`` look damaged rather than edited: not
    UTF-8 text (or NUL bytes), emptied (kronika never empties one), or shorter than the
    record's version and cut inside a line (truncated)."""
    try:
        if "\x00" in raw.decode("utf-8"):
            return True
    except UnicodeDecodeError:
        return True
    if not raw:
        return known.size > 0
    return len(raw) < known.size and not raw.endswith(b"\n")


def vanished(key: tuple[str, str], agents: set[str], removed: set[tuple[str, str]]) -> bool:
    """Whether a fact file or session file missing here went missing by itself: kronika
    did not remove it (a forget), nor its agent. Such files are never removed by hand."""
    agent, path = key
    kind = classify(path)
    lost = kind is SourceKind.FACTS or kind is SourceKind.SESSION
    return lost and agent in agents and key not in removed


def _cut_short(item: MemoryItem, values: dict[str, str]) -> bool:
    """Whether fact ``item`` is the start of the record's value of its key (the line a
    truncation cut, stamped anew since)."""
    was = values.get((item.key or "").casefold())
    now = (item.value or "").rstrip()
    return was is not None and was != item.value and was.startswith(now)
