"""The session files of a Markdown workspace (``workspace.session_files``): a session
written whole (an import), a turn appended (the file started with its header when
missing), the headers of the live sessions, and header fields changed. Their format:
:mod:`kronika.stores.markdown.sessions`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from urllib.parse import unquote

from kronika.core.model import SessionRecord, TurnRecord
from kronika.errors import NotFound
from kronika.stores.markdown import frontmatter, sessions
from kronika.stores.markdown.agentfiles import AgentFiles
from kronika.stores.markdown.files import read_source, write_text
from kronika.stores.markdown.lines import split_lines


class SessionFiles:
    """Sessions written, appended to and listed (see the module docstring)."""

    def __init__(self, files: AgentFiles) -> None:
        self.files = files

    def write_session(self, agent: str, session: SessionRecord) -> str:
        """Write a whole session file (replacing an earlier import); returns its path."""
        folder = self.files.require_agent(agent)
        path = sessions.session_filename(session.session_id)
        write_text(folder / path, sessions.render_session(session))
        return path

    def append_turn(
        self,
        agent: str,
        session_id: str,
        turn: TurnRecord,
        *,
        started_at: datetime,
        header_fields: Mapping[str, str] | None = None,
    ) -> str:
        """Append one turn to the session file (created with its header if absent)."""
        return self.append_turns(
            agent, session_id, (turn,), started_at=started_at, header_fields=header_fields
        )

    def append_turns(
        self,
        agent: str,
        session_id: str,
        turns: Sequence[TurnRecord],
        *,
        started_at: datetime,
        header_fields: Mapping[str, str] | None = None,
    ) -> str:
        """Append ``turns`` to the session file in one write of it (created with its
        header if absent); returns its path."""
        path = sessions.session_filename(session_id)
        header = sessions.session_header(session_id, started_at, extra=header_fields)

        def change(lines: list[str]) -> list[str]:
            text = "".join(lines)
            if text and not text.endswith("\n"):
                text += "\n"
            return split_lines(text + "".join("\n" + sessions.render_turn(t) for t in turns))

        self.files.edit(agent, path, change, header)
        return path

    def session_headers(self, agent: str) -> list[sessions.SessionHeader]:
        """Headers of the live sessions: those kronika recorded itself, oldest first,
        then those ``save_turn`` started (``source: api``), by file name. Imports, whose
        ids have another shape and whose header has another source, are not listed."""
        folder = self.files.require_agent(agent) / "sessions"
        live: list[sessions.SessionHeader] = []
        saved: list[sessions.SessionHeader] = []
        if not folder.is_dir():
            return live
        for file in sorted(folder.glob("*.md")):
            is_live = bool(sessions.LIVE_ID_RE.match(file.stem))
            if not is_live and not sessions.saved_head(file):
                continue  # an import: only its first lines were read
            read = read_source(folder.parent, f"sessions/{file.name}")
            if read is None:
                continue
            fields = sessions.read_header(read.text)
            if is_live:
                live.append(sessions.SessionHeader(file.stem, f"sessions/{file.name}", fields))
            elif fields.get("source") == sessions.SAVED_SOURCE:
                session_id = fields.get("session") or unquote(file.stem)
                saved.append(sessions.SessionHeader(session_id, f"sessions/{file.name}", fields))
        return live + saved

    def turn_item_ids(self, agent: str, turn_id: str) -> dict[str, str]:
        """The item id a turn ``turn_id`` would have in each session file of the agent,
        by session id (the file's name read back): what finds a turn named by the id
        ``save_turn`` gave, whichever session holds it. No file is read."""
        folder = self.files.require_agent(agent) / "sessions"
        if not folder.is_dir():
            return {}
        return {
            sessions.turn_item_id(agent, session_id, sessions.written_turn_id(turn_id)): session_id
            for session_id in (unquote(file.stem) for file in sorted(folder.glob("*.md")))
        }

    def set_session_fields(
        self, agent: str, session_id: str, fields: Mapping[str, str | None]
    ) -> str:
        """Change header fields of an existing session file; returns its path."""
        path = sessions.session_filename(session_id)
        if not (self.files.require_agent(agent) / path).is_file():
            raise NotFound(f"agent {agent!r} has no session {session_id!r}")
        self.files.edit(agent, path, lambda lines: frontmatter.set_fields(lines, fields))
        return path
