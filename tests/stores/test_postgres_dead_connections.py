"""A connection the server ended is known dead before it is used, so the pool hands
out another and the request succeeds: also in a process with more than 1,024 files
open (a busy server), whose sockets ``select`` cannot watch."""

from __future__ import annotations

import os
import resource
import time

import pytest

pytest.importorskip("psycopg", reason="the postgres extra is not installed")


@pytest.mark.parametrize("files_open", [0, 1_100], ids=["few-files", "many-files"])
def test_a_connection_the_server_ended_is_known_dead(postgres_url: str, files_open: int) -> None:
    import psycopg

    from kronika.stores.postgres.connect import connect, gone

    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < files_open + 100:
        pytest.skip(f"this process may not open {files_open + 100} files (ulimit -n)")
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(files_open)]
    try:
        conn = connect(postgres_url, autocommit=True)
        try:
            assert files_open == 0 or conn.fileno() > 1_024
            assert not gone(conn)
            with psycopg.connect(postgres_url, autocommit=True) as other:
                other.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
            deadline = time.monotonic() + 10
            while not gone(conn) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert gone(conn)
        finally:
            conn.close()
    finally:
        for fd in held:
            os.close(fd)
