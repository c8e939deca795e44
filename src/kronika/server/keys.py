"""API keys of the server: made once, shown once, stored hashed, revocable.

A key reads ``kro_<id>_<secret>``. The store (``keys.sqlite`` beside the workspace's
index, the owner's alone) keeps the id, the tenant, the agent, the role and the
SHA-256 of the secret, never the secret itself: a stolen keys file opens nothing.
The secret is 32 random bytes, so one unsalted hash is as strong as a password hash
would be (no dictionary can reach it) and checking a request costs microseconds.

Roles:

* ``admin``: everything in its tenant (or its agent, when it names one), writing as
  the person (``user``);
* ``agent``: its agent's memory, writing *as* that agent, so the agent's autonomy
  level and the grants of other agents apply (SPEC C5, C6);
* ``reader``: reads only.

A key may be *bound* to a user, channels and teams: it then reads and writes as that
user, in those channels only (a request's ``X-Kronika-*`` headers may narrow that,
never widen it), with those teams. An unbound key is a trusted integration's: the
user and channel it acts for come from the request.

Revoking takes effect at the next request: every request reads the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from kronika.errors import ConfigError, CorruptFileError, InvalidInput, NotFound
from kronika.stores import held
from kronika.stores.private import make_private_dir, touch_private
from kronika.stores.sqlite.recovery import small_file_problem

KEYS_FILE = "keys.sqlite"
PREFIX = "kro"
_KEY_RE = re.compile(r"^kro_([0-9a-f]{12})_([A-Za-z0-9_-]{20,100})$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    secret_sha256 TEXT NOT NULL,
    tenant TEXT NOT NULL,
    agent TEXT,
    role TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    revoked_at TEXT
)
"""
_BINDING = (("user", "TEXT"), ("channels", "TEXT NOT NULL DEFAULT ''"), ("teams", "TEXT"))
"""Columns added to an older keys file when it is opened."""
_SELECT = "SELECT id, tenant, agent, role, label, created_at, revoked_at, user, channels, teams"


class Role(StrEnum):
    ADMIN = "admin"
    AGENT = "agent"
    READER = "reader"


@dataclass(frozen=True, slots=True)
class ApiKey:
    """What a key may do (never its secret)."""

    id: str
    tenant: str
    role: Role
    agent: str | None = None
    label: str = ""
    created_at: str = ""
    revoked_at: str | None = None
    user: str | None = None
    """The user the key acts as; ``None``: an unbound key (the request names one)."""
    channels: tuple[str, ...] = ()
    """The channels a key bound to a user may act in; none: it reads no channel."""
    teams: tuple[str, ...] | None = None
    """The teams of a bound key's user; ``None``: those ``[teams]`` gives the user."""

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    @property
    def bound(self) -> bool:
        """Bound to a user, channels or teams (else a trusted integration's key)."""
        return self.user is not None or bool(self.channels) or self.teams is not None


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key just made: ``token`` is shown to the user once and stored nowhere."""

    key: ApiKey
    token: str


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _words(value: str | None) -> tuple[str, ...]:
    return tuple(part for part in (value or "").split("\n") if part)


def _row(r: tuple[object, ...]) -> ApiKey:
    id_, tenant, agent, role, label, created, revoked, user, channels, teams = r
    return ApiKey(
        str(id_),
        str(tenant),
        Role(str(role)),
        None if agent is None else str(agent),
        str(label),
        str(created),
        None if revoked is None else str(revoked),
        None if user is None else str(user),
        _words(None if channels is None else str(channels)),
        None if teams is None else _words(str(teams)),
    )


def _label(value: str | None, what: str) -> str | None:
    """A user, channel or team a key is bound to: 1-200 characters, no line breaks."""
    if value is None:
        return None
    clean = value.strip()
    if not clean or len(clean) > 200 or any(c in clean for c in "\r\n\t"):
        raise InvalidInput(f"{what} {value!r} must be 1-200 characters on one line")
    return clean


def _name(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    if not _NAME_RE.match(value):
        raise InvalidInput(
            f"{what} {value!r} must be 1-100 letters, digits, '.', '_' or '-' (not first)"
        )
    return value


class KeyStore:
    """The API keys in one SQLite file; safe to share between threads and processes."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        make_private_dir(self.path.parent)
        if not self.path.exists():
            touch_private(self.path)
        try:
            with self._connect() as db:
                problem = small_file_problem(db)
                if problem is not None:
                    raise sqlite3.DatabaseError(problem)
                db.execute(_SCHEMA)
                have = {row[1] for row in db.execute("PRAGMA table_info(api_keys)")}
                for column, kind in _BINDING:
                    if column not in have:
                        db.execute(f"ALTER TABLE api_keys ADD COLUMN {column} {kind}")
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"the API keys file {self.path} cannot be used ({exc}); if it is damaged, "
                "`kronika doctor --fix` moves it aside (every key must then be made again)"
            ) from exc

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = sqlite3.connect(self.path, timeout=10)
            try:
                with db:
                    yield db
            finally:
                db.close()

    def create(
        self,
        tenant: str,
        *,
        role: Role | str = Role.ADMIN,
        agent: str | None = None,
        label: str = "",
        user: str | None = None,
        channels: tuple[str, ...] | list[str] = (),
        teams: tuple[str, ...] | list[str] | None = None,
    ) -> NewKey:
        """Make a key; its token is in the result and nowhere else. ``user``,
        ``channels``, ``teams``: bind it (see the module docstring); channels and teams
        need a user."""
        try:
            chosen = Role(role)
        except ValueError as exc:
            raise InvalidInput(f"unknown role {role!r}: use admin, agent or reader") from exc
        clean_tenant = _name(tenant, "the tenant")
        clean_agent = _name(agent, "the agent")
        if chosen is Role.AGENT and clean_agent is None:
            raise InvalidInput("an agent key must name its agent (--agent)")
        bound_user = _label(user, "the user")
        bound_channels = tuple(dict.fromkeys(str(_label(c, "the channel")) for c in channels))
        bound_teams = (
            None
            if teams is None
            else tuple(dict.fromkeys(str(_label(t, "the team")) for t in teams))
        )
        if bound_user is None and (bound_channels or bound_teams is not None):
            raise InvalidInput("a key bound to channels or teams must be bound to a user (--user)")
        key_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        before = held.sqlite_ids(self.path, "api_keys")
        now = datetime.now(UTC).isoformat(timespec="seconds")
        key = ApiKey(
            key_id,
            str(clean_tenant),
            chosen,
            clean_agent,
            label.strip()[:200],
            now,
            user=bound_user,
            channels=bound_channels,
            teams=bound_teams,
        )
        with self._connect() as db:
            db.execute(
                "INSERT INTO api_keys (id, secret_sha256, tenant, agent, role, label, created_at,"
                " user, channels, teams) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.id,
                    _digest(secret),
                    key.tenant,
                    key.agent,
                    key.role.value,
                    key.label,
                    now,
                    key.user,
                    "\n".join(key.channels),
                    None if key.teams is None else "\n".join(key.teams),
                ),
            )
        self._record(before)
        return NewKey(key, f"{PREFIX}_{key_id}_{secret}")

    def _record(self, before: set[str]) -> None:
        """Record the keys there are now, and keep a copy of the file while no key
        recorded is missing (:mod:`kronika.stores.held`)."""
        home = self.path.parent
        if held.note_ids(home, KEYS_FILE, before, held.sqlite_ids(self.path, "api_keys")):
            with contextlib.suppress(OSError, sqlite3.Error):
                held.copy_sqlite(self.path, held.copy_path(home, KEYS_FILE))

    def verify(self, token: str) -> ApiKey | None:
        """The active key ``token`` is, or ``None`` (unknown, malformed or revoked)."""
        found = _KEY_RE.match(token.strip())
        if found is None:
            return None
        key_id, secret = found.groups()
        # one connection kept for every request's check (opening one cost more than a
        # millisecond); each SELECT reads the file as it is now, so a key revoked by
        # another process is refused from its next request on
        with self._lock:
            if self._reader is None:
                self._reader = sqlite3.connect(self.path, timeout=10, check_same_thread=False)
            try:
                row = self._reader.execute(
                    f"SELECT secret_sha256, {_SELECT.removeprefix('SELECT ')}"
                    " FROM api_keys WHERE id = ?",
                    (key_id,),
                ).fetchone()
            except (sqlite3.Error, UnicodeDecodeError) as exc:
                self._reader.close()
                self._reader = None
                raise CorruptFileError(
                    f"the API keys file {self.path} cannot be read ({exc}); `kronika doctor`"
                    " checks it",
                    path=str(self.path),
                ) from exc
        if row is None or row[7] is not None:
            return None
        if not hmac.compare_digest(row[0], _digest(secret)):
            return None
        return _row(row[1:])

    def close(self) -> None:
        """Close the connection :meth:`verify` keeps (it opens again when needed)."""
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def list(self) -> list[ApiKey]:
        with self._connect() as db:
            rows = db.execute(f"{_SELECT} FROM api_keys ORDER BY created_at, id").fetchall()
        return [_row(r) for r in rows]

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key by its id (the part after ``kro_``) or by the whole token."""
        found = _KEY_RE.match(key_id.strip())
        wanted = found.group(1) if found else key_id.strip()
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._connect() as db:
            db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (now, wanted),
            )
        self._record(held.sqlite_ids(self.path, "api_keys"))
        for key in self.list():
            if key.id == wanted:
                return key
        raise NotFound(f"no API key with id {wanted!r} (see `kronika keys list`)")


def keys_path(home: Path) -> Path:
    return Path(home) / KEYS_FILE
