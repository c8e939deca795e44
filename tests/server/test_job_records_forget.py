"""A job record keeps counts, never what a step worked on: a forgotten name is not left
in ``server-jobs.sqlite`` by the jobs that once wrote about it, and records an earlier
kronika kept with each step's wording are rewritten when the records are opened."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.server.conftest import Served

from kronika.server.jobstore import JOBS_FILE, PostgresJobRecords, SqliteJobRecords
from kronika.stores.postgres import migrations

NAME = "Kovalenko"


def _bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.glob(JOBS_FILE + "*") if p.is_file())


def test_a_forgotten_name_is_not_kept_by_the_records_of_jobs_that_wrote_about_it(
    served: Served,
) -> None:
    said = served.call(
        "POST", "/v1/agents/alice/notes", {"text": f"Lunch with @{NAME} about the bid"}
    )
    assert said.status in (200, 201), said.body
    started = served.call("POST", "/v1/agents/alice/jobs/reflect", {"days": 7})
    assert started.status == 202, started.body
    served.service.jobs.wait(10)
    read = served.call("GET", f"/v1/jobs/{started.body['id']}").body
    assert read["status"] == "done", read
    # the job did write the entity page, and says how much it did without naming it
    assert read["result"]["done"] >= 1 and read["result"]["job"] == "reflect"
    assert NAME not in json.dumps(read)
    page = served.memories["acme"].workspace.agent_dir("alice") / f"bank/entities/{NAME}.md"
    assert page.is_file()

    gone = served.call("POST", "/v1/agents/alice/forget", {"topic": NAME})
    assert gone.status == 200, gone.body
    listed = served.call("GET", "/v1/jobs").body
    assert listed["jobs"] and NAME not in json.dumps(listed)
    folder = Path(served.memories["acme"].settings.home)
    assert (folder / JOBS_FILE).is_file()
    assert NAME.encode() not in _bytes(folder)


_WORDING = {
    "job": "reflect",
    "agent": "alice",
    "mode": "full",
    "done": [f"bank/entities/{NAME}.md: 2 item(s)"],
    "waiting": [f"opinions about {NAME} (no language model)"],
    "unchanged": 0,
    "seconds": 0.1,
}
_OLD_ROW = (
    "INSERT INTO server_jobs VALUES ({m}, 'reflect', 'default', 'alice', '{{}}', 'waiting',"
    " '2026-11-01T10:00:00+00:00', NULL, NULL, {m}, {m}, 'host:1:x', 0)"
)
_OLD_VALUES = (
    "job-old",
    f"no language model is configured: opinions about {NAME} (no language model)"
    " stay queued for the next run",
    json.dumps(_WORDING),
)


def _counted(records: SqliteJobRecords | PostgresJobRecords) -> None:
    try:
        record = records.get("job-old")
        assert record is not None
        assert record.fields["result"]["done"] == 1 and record.fields["result"]["waiting"] == 1
        assert record.fields["message"] == (
            "no language model is configured: 1 step(s) stay queued for the next run"
        )
        assert NAME not in json.dumps(record.fields)
    finally:
        records.close()


def test_records_that_kept_each_steps_wording_are_rewritten_to_counts(tmp_path: Path) -> None:
    path = tmp_path / JOBS_FILE
    SqliteJobRecords(path).close()
    with sqlite3.connect(path) as db:  # as an earlier kronika wrote a waiting job
        db.execute(_OLD_ROW.format(m="?"), _OLD_VALUES)
    db.close()
    assert NAME.encode() in _bytes(tmp_path)
    _counted(SqliteJobRecords(path))
    assert NAME.encode() not in _bytes(tmp_path)


def test_postgres_records_that_kept_each_steps_wording_are_rewritten(postgres_url: str) -> None:
    from kronika.stores.postgres.connect import connect

    ddl = Path(migrations.__file__).with_name("0400_server_jobs.sql").read_text(encoding="utf-8")
    with connect(postgres_url, autocommit=True) as db:
        db.execute(ddl)
        db.execute(_OLD_ROW.format(m="%s"), _OLD_VALUES)
        before = db.execute("SELECT pg_relation_filenode('server_jobs')").fetchone()
    _counted(PostgresJobRecords(postgres_url))
    with connect(postgres_url, autocommit=True) as db:
        after = db.execute("SELECT pg_relation_filenode('server_jobs')").fetchone()
    assert after != before  # rewritten: the old row versions with the wording are gone
