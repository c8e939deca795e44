"""The turns appended to a session file, read alone for the store of record, are the
items a parse of the whole file gives for them; any other change sends the file whole."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kronika.core.model import Scope, TurnRecord
from kronika.core.visibility import Audience
from kronika.stores.markdown.appending import append_turn_in_place
from kronika.stores.markdown.sessions import audience_fields, session_filename
from kronika.stores.markdown.workspace import MarkdownWorkspace
from kronika.stores.record_appends import grown_session

START = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
PATH = session_filename("trip")


@pytest.fixture
def ws(tmp_path: Path) -> MarkdownWorkspace:
    workspace = MarkdownWorkspace(tmp_path, tenant="acme")
    workspace.initialize()
    workspace.create_agent("jaskier")
    return workspace


def _turn(n: int, text: str = "") -> TurnRecord:
    return TurnRecord(f"trip_{n}", "user", text or f"turn {n}", START + timedelta(minutes=n))


def _start(ws: MarkdownWorkspace, **header: str) -> tuple[Path, int, str]:
    """A session of two turns (written whole), and its size and SHA-256."""
    ws.append_turn("jaskier", "trip", _turn(1), started_at=START, header_fields=header)
    ws.append_turn("jaskier", "trip", _turn(2), started_at=START, header_fields=header)
    file = ws.agent_dir("jaskier") / PATH
    raw = file.read_bytes()
    return file, len(raw), hashlib.sha256(raw).hexdigest()


def test_appended_turns_are_sent_as_the_whole_file_parses_them(ws: MarkdownWorkspace) -> None:
    owners = Audience(Scope.CHANNEL, "ann", "kitchen", None)
    file, size, sha = _start(ws, **dict(audience_fields(owners)))
    folder = ws.agent_dir("jaskier")
    append_turn_in_place(folder, PATH, _turn(3, "### [not a header] kept\nsecond line"))
    append_turn_in_place(folder, PATH, _turn(4))

    grown = grown_session(ws, "jaskier", PATH, file, size, sha)
    assert grown is not None
    doc, items, (mtime_ns, now_size, digest) = grown
    raw = file.read_bytes()
    assert doc.text is not None and doc.text.encode() == raw[size:]
    assert doc.appends is not None and doc.appends.base_sha256 == sha
    assert digest == doc.appends.sha256 == hashlib.sha256(raw).hexdigest()
    assert (mtime_ns, now_size) == (file.stat().st_mtime_ns, len(raw))
    # every field of every item, its line and audience included
    assert items == list(ws.parse_source("jaskier", PATH).items[2:])
    assert items[0].content == "### [not a header] kept\nsecond line"
    assert (items[1].channel, items[1].user) == ("kitchen", "ann")


def test_a_file_changed_otherwise_is_sent_whole(ws: MarkdownWorkspace) -> None:
    file, size, sha = _start(ws)
    folder = ws.agent_dir("jaskier")
    append_turn_in_place(folder, PATH, _turn(3))
    assert grown_session(ws, "jaskier", PATH, file, size, "another body") is None
    assert grown_session(ws, "jaskier", PATH, file, size + 1, sha) is None

    with file.open("a", encoding="utf-8") as out:  # a hand edit after kronika's append
        out.write("an added line\n")
    assert grown_session(ws, "jaskier", PATH, file, size, sha) is None


def test_a_session_without_a_readable_start_is_sent_whole(ws: MarkdownWorkspace) -> None:
    file, _, _ = _start(ws)
    text = file.read_text(encoding="utf-8").replace("started:", "begun:", 1)
    file.write_text(text, encoding="utf-8")
    raw = file.read_bytes()
    folder = ws.agent_dir("jaskier")
    append_turn_in_place(folder, PATH, _turn(3))  # reads the file whole: a new chain
    assert (
        grown_session(ws, "jaskier", PATH, file, len(raw), hashlib.sha256(raw).hexdigest()) is None
    )
