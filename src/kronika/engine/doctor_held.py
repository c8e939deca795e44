"""``kronika doctor``'s check of the small files that read as never made when they are
gone or emptied: ``kronika.toml``, ``keys.sqlite``, ``server-jobs.sqlite``,
``audit.jsonl`` and each agent's ``proposals.md``, against what kronika recorded they
held (:mod:`kronika.stores.held`).

Each finding says what the file held and what is lost; :func:`mend_held` (``doctor
--fix``) puts back the last good copy where one is kept (the settings, the keys), and
otherwise takes the file as it is now, saying what was lost. ``proposals.md`` is also
parsed: a proposal line that cannot be read (cut short) is found, and ``--fix`` sets it
aside (the file as it was is kept under ``.corrupt/``).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from kronika.engine.doctor_server import sqlite_problem
from kronika.engine.findings import PROBLEM, Finding
from kronika.settings import CONFIG_FILE
from kronika.stores import held
from kronika.stores.markdown import proposals
from kronika.stores.markdown.files import keep_copy, read_source, write_text
from kronika.stores.markdown.layout import PROPOSALS
from kronika.stores.private import make_private_dir, write_private_bytes
from kronika.stores.sqlite.recovery import move_aside

KEYS = "keys.sqlite"
JOBS = "server-jobs.sqlite"
AUDIT = "audit.jsonl"
_TABLES = {KEYS: "api_keys", JOBS: "server_jobs"}
_ROWS = {
    KEYS: (
        "keys",
        "every request made with them gets 401 until they are back",
        "make keys again with `kronika keys create`",
    ),
    JOBS: (
        "job records",
        "they only told what the server's background jobs did (their results are in the "
        "memory itself)",
        "nothing to do but take the file as it is",
    ),
}


def check_held(home: Path, agents: list[str]) -> list[Finding]:
    """Every file that held something kronika recorded and lost it (read-only)."""
    found = [f for f in (_settings(home), _rows(home, KEYS), _rows(home, JOBS)) if f]
    found += [f for f in [_audit(home)] if f]
    for agent in agents:
        found += _proposals(home, agent)
    return found


def _state(file: Path) -> str:
    if not file.exists():
        return "is missing"
    return "was emptied" if file.stat().st_size == 0 else "lost part of what it held"


# ------------------------------------------------------------------- the settings
def _has_settings(raw: bytes) -> bool:
    """Whether ``raw`` holds a setting (a line that is not blank or a comment)."""
    text = raw.decode("utf-8", errors="replace")
    return any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines())


def watch_settings(home: Path) -> str | None:
    """Keep a last good copy of ``kronika.toml`` while it holds something (it was read
    whole: a command refuses one it cannot read); say when it is gone or emptied though
    the copy holds settings. Reads two small files; writes only when the file changed."""
    read = _settings_and_copy(home)
    if read is None:
        return None
    raw, kept = read
    if raw.strip() and raw != kept:
        try:
            make_private_dir(held.copy_path(home, CONFIG_FILE).parent)
            write_private_bytes(held.copy_path(home, CONFIG_FILE), raw)
        except OSError:
            pass
    return settings_lost(home, raw, kept)


def _settings_and_copy(home: Path) -> tuple[bytes, bytes] | None:
    """``kronika.toml`` and its last good copy, each empty when missing (``None``:
    either cannot be read)."""
    file, copy = Path(home) / CONFIG_FILE, held.copy_path(home, CONFIG_FILE)
    try:
        return (
            file.read_bytes() if file.is_file() else b"",
            copy.read_bytes() if copy.is_file() else b"",
        )
    except OSError:
        return None


def settings_lost(home: Path, raw: bytes, kept: bytes) -> str | None:
    """What to say when ``kronika.toml`` (``raw``) is gone or blank though its last good
    copy (``kept``) holds settings (``None``: nothing)."""
    if raw.strip() or not _has_settings(kept):
        return None
    file = Path(home) / CONFIG_FILE
    copy = held.copy_path(home, CONFIG_FILE)
    return (
        f"{file} {_state(file)}: it held settings, read as the defaults now (the agents' "
        f"policies in it are not applied); a copy of it was kept at {copy}; "
        "`kronika doctor --fix` puts it back"
    )


def _settings(home: Path) -> Finding | None:
    read = _settings_and_copy(home)
    said = settings_lost(home, *read) if read is not None else None
    return None if said is None else _found(CONFIG_FILE, said, "put back the last good copy")


# ---------------------------------------------------------------- the SQLite files
def _rows(home: Path, name: str) -> Finding | None:
    record = held.read_held(home, name)
    if record is None or not record.ids:
        return None
    file = Path(home) / name
    if file.is_file() and file.stat().st_size > 0 and _unreadable(file):
        return None  # damaged: the server check says it, and --fix moves it aside first
    missing = set(record.ids) - held.sqlite_ids(file, _TABLES[name])
    if not missing:
        return None
    what, effect, act = _ROWS[name]
    copy = held.copy_path(home, name)
    said = (
        f"{name} {_state(file)}: it held {len(record.ids)} {what} when kronika last wrote "
        f"it ({record.at}), {len(missing)} of them are not there; {effect}"
    )
    if copy.is_file():
        return _found(name, said, "put back the last good copy (kept at " + str(copy) + ")")
    return _found(name, said + f"; no copy is kept: {act}", None, accept=True)


def keys_lost(home: Path) -> str | None:
    """What to say when ``keys.sqlite`` lacks keys kronika recorded (the server logs it
    at start: every request made with them gets 401)."""
    found = _rows(home, KEYS)
    return None if found is None else f"{found.what}; {found.fix}"


def _unreadable(file: Path) -> bool:
    return sqlite_problem(file) is not None


# ------------------------------------------------------------------ the audit trail
def _audit(home: Path) -> Finding | None:
    record = held.read_held(home, AUDIT)
    file = Path(home) / AUDIT
    size = file.stat().st_size if file.is_file() else 0
    if record is None or record.size <= size:
        return None
    said = (
        f"{AUDIT} {_state(file)}: it held {record.size} bytes of entries when kronika last "
        f"wrote it ({record.at}), {size} now; the entries lost are not kept anywhere else"
    )
    return _found(AUDIT, said, None, accept=True)


# ---------------------------------------------------------------------- proposals
def _proposals(home: Path, agent: str) -> list[Finding]:
    rel = f"agents/{agent}/{PROPOSALS}"
    file = Path(home) / rel
    found = []
    record = held.read_held(home, rel)
    if record is not None and record.count and (not file.is_file() or file.stat().st_size == 0):
        said = (
            f"{rel} {_state(file)}: it held {record.count} proposal(s) waiting for approval "
            f"when kronika last wrote it ({record.at}); they are lost (kronika keeps no copy "
            "of their text): the agents propose them again"
        )
        found.append(_found(rel, said, None, accept=True))
    read = read_source(file.parent, PROPOSALS) if file.is_file() else None
    torn = proposals.parse_proposals(read.text).warnings if read is not None else ()
    if torn:
        said = (
            f"{rel}: {len(torn)} proposal line(s) cannot be read (cut short or overwritten?): "
            + "; ".join(torn[:2])
        )
        found.append(_found(rel, said, "set the unreadable lines aside (the file is kept)"))
    return found


def _found(where: str, what: str, repair: str | None, *, accept: bool = False) -> Finding:
    if accept:
        fix = "`kronika doctor --fix` takes the file as it is now (what is lost stays lost)"
        repair = "take the file as it is now"
    else:
        fix = f"`kronika doctor --fix` will {repair}"
    return Finding("held", PROBLEM, where, what, fix, repair)


# ------------------------------------------------------------------------ repair
def mend_held(home: Path, where: str) -> str:
    """What ``doctor --fix`` does about the finding at ``where``; returns it in words."""
    home = Path(home)
    file = home / where
    copy = held.copy_path(home, where)
    if where == CONFIG_FILE:
        write_private_bytes(file, copy.read_bytes())
        return f"{where}: put back the last good copy (from {copy})"
    if where in _TABLES:
        if copy.is_file():
            return f"{where}: " + _put_back_rows(file, copy, _TABLES[where])
        held.write_held(
            home, where, held.Held(tuple(sorted(held.sqlite_ids(file, _TABLES[where]))))
        )
        return f"{where}: taken as it is; the {_ROWS[where][0]} it lost are lost"
    if where == AUDIT:
        size = file.stat().st_size if file.is_file() else 0
        held.write_held(home, AUDIT, held.Held(size=size))
        return f"{where}: taken as it is ({size} bytes); the entries it lost are lost"
    return _mend_proposals(home, where)


def _put_back_rows(file: Path, copy: Path, table: str) -> str:
    """The copy's rows, with every row the file still holds as the file holds it: a row
    made since is added, and one changed since (a key revoked) is the file's, newer."""
    pending = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    held.copy_sqlite(copy, pending)
    if file.is_file() and file.stat().st_size > 0:
        try:
            conn = sqlite3.connect(f"file:{pending}", uri=True)
            try:
                conn.execute("ATTACH DATABASE ? AS now", (f"file:{file}?mode=ro",))
                conn.execute(f"INSERT OR REPLACE INTO main.{table} SELECT * FROM now.{table}")  # noqa: S608
                conn.commit()
            finally:
                conn.close()
        except sqlite3.Error:
            pass
        aside = move_aside(file)
        kept = f"; the file as it was is kept at {aside}"
    else:
        kept = ""
        for side in ("-wal", "-shm"):
            file.with_name(file.name + side).unlink(missing_ok=True)
    os.replace(pending, file)
    file.chmod(0o600)
    count = len(held.sqlite_ids(file, table))
    home = file.parent
    held.write_held(home, file.name, held.Held(tuple(sorted(held.sqlite_ids(file, table)))))
    return f"put back the last good copy: {count} row(s) now{kept}"


def _mend_proposals(home: Path, rel: str) -> str:
    file = home / rel
    folder = file.parent
    read = read_source(folder, PROPOSALS) if file.is_file() else None
    if read is None or not read.text.strip():
        held.note_count(home, rel, 0)
        return f"{rel}: taken as it is; the proposals it held are lost"
    parsed = proposals.parse_proposals(read.text)
    readable = {entry.line for entry in parsed.entries}
    lines = read.text.splitlines(keepends=True)
    kept_lines = [
        line
        for n, line in enumerate(lines, 1)
        if n in readable or not line.lstrip().startswith(("- ", "* ", "+ "))
    ]
    copy = keep_copy(folder, PROPOSALS, read.raw)
    text = "".join(kept_lines)
    write_text(file, text if text.endswith("\n") else text + "\n")
    held.note_count(home, rel, len(parsed.entries))
    dropped = len(lines) - len(kept_lines)
    return f"{rel}: set {dropped} unreadable line(s) aside (the file as it was: {copy})"
