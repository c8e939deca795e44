"""Learning over HTTP: an outcome recorded through the REST API (and the client) becomes
a lesson for the caller's audience, as `Memory.record_outcome` does in process, and
every memory job can be started as a server job."""

from __future__ import annotations

import json

from tests.server.conftest import Served

from kronika.client import Client
from kronika.core.lessons import exit_code
from kronika.engine.learning import OutcomeReport

FAILED = exit_code(2, "error: relation users does not exist")
TASK = "migrate the billing database"


def test_a_failed_outcome_over_rest_becomes_a_lesson_of_the_caller(served: Served) -> None:
    sent = served.call(
        "POST",
        "/v1/agents/alice/outcomes",
        {"task": TASK, "action": "alembic upgrade head", "evaluation": FAILED.as_dict()},
        key="acme-alice",
        headers={"X-Kronika-User": "zofia"},
    )
    assert sent.status == 201, sent
    assert sent.body["is_ok"] is False and sent.body["event"]
    [lesson] = [x for x in sent.body["learned"] if x["kind"] == "reflection"]
    assert "relation users does not exist" in lesson["text"]
    assert (lesson["user"], lesson["scope"]) == ("zofia", "personal")

    # In the store, for zofia alone, and written as the key's agent.
    memory = served.memories["acme"]
    mine = memory.lessons(agent="alice", reader=memory.reader(user="zofia"))
    assert [x.id for x in mine] == [lesson["id"]]
    assert memory.lessons(agent="alice", reader=memory.reader(user="piotr")) == []
    written = {sent.body["event"], lesson["id"]}
    entries = [e for e in memory.audit(agent="alice") if e.item_id in written]
    assert {e.item_id for e in entries} == written
    assert {e.source_agent for e in entries} == {"alice"}
    theirs = served.call(
        "GET", "/v1/agents/alice/lessons", key="acme-alice", headers={"X-Kronika-User": "piotr"}
    )
    assert theirs.body["lessons"] == []

    # The same task succeeding later credits the lesson zofia was served.
    again = served.call(
        "POST",
        "/v1/agents/alice/outcomes",
        {"task": TASK, "action": "create the users table first", "ok": True},
        key="acme-alice",
        headers={"X-Kronika-User": "zofia"},
    )
    assert again.status == 201, again
    assert lesson["id"] in [x["id"] for x in again.body["credited"]]


def test_the_client_records_outcomes_as_memory_does(served: Served) -> None:
    client = Client(served.url, served.keys["acme-alice"], user="zofia")
    over_http = client.record_outcome(TASK, "alembic upgrade head", FAILED)
    in_process = served.memories["acme"].record_outcome(
        TASK, "alembic upgrade head", FAILED, agent="bob", user="jan"
    )
    assert type(over_http) is OutcomeReport and over_http.evaluation == FAILED
    assert [(x.kind, x.text) for x in over_http.learned] == [
        (x.kind, x.text) for x in in_process.learned
    ]
    [reflection] = [x for x in over_http.learned if x.kind == "reflection"]
    stored = served.memories["acme"].lessons(
        agent="alice", reader=served.memories["acme"].reader(user="zofia")
    )
    assert stored == [reflection]  # every field comes back, not a look-alike
    credited = client.record_outcome(TASK, "create the users table first", ok=True)
    assert reflection.id in [x.id for x in credited.credited]


def test_outcomes_are_refused_to_readers_other_tenants_and_bad_bodies(served: Served) -> None:
    body = {"task": TASK, "action": "alembic upgrade head", "ok": False, "reasons": ["boom"]}
    assert served.call("POST", "/v1/agents/alice/outcomes", body, key=None).status == 401
    assert served.call("POST", "/v1/agents/alice/outcomes", body, key="acme-reader").status == 403
    # another tenant's key: alice of globex is not acme's alice
    served.call("POST", "/v1/agents/alice/outcomes", body, key="globex-alice")
    assert served.memories["acme"].lessons(agent="alice") == []
    # an agent key writes where its agent may write: bob's grant names alice; carol's
    # does not, and to alice's key carol is not even there
    assert served.call("POST", "/v1/agents/carol/outcomes", body, key="acme-alice").status == 404
    assert served.call("POST", "/v1/agents/bob/outcomes", body, key="acme-alice").status == 201
    assert served.memories["acme"].lessons(agent="carol") == []
    for bad in (
        {"task": TASK, "action": "x"},  # neither an evaluation nor ok
        {"task": "", "action": "x", "ok": True},
        {"task": TASK, "action": "x", "ok": True, "verdict": "fine"},
        {"task": TASK, "action": "x", "evaluation": {"is_ok": False, "score": 7}},
    ):
        answer = served.call("POST", "/v1/agents/alice/outcomes", bad)
        assert answer.status == 422, (bad, answer)
        assert "message" in json.dumps(answer.body)


def test_every_memory_job_runs_as_a_server_job_and_can_be_read(served: Served) -> None:
    memory = served.memories["acme"]
    memory.remember("prefers green tea", agent="alice")
    for job in ("decay", "reflect", "dream", "summarize", "distill"):
        started = served.call(
            "POST", f"/v1/agents/alice/jobs/{job}", {"days": 3, "mode": "lite"}, key="acme-alice"
        )
        assert started.status == 202, started
        assert (started.body["kind"], started.body["params"]["days"]) == (job, 3)
        served.service.jobs.wait(20)
        done = served.call("GET", f"/v1/jobs/{started.body['id']}", key="acme-alice")
        assert done.body["status"] in ("done", "waiting"), done
        assert done.body["result"]["job"] == job and done.body["result"]["mode"] == "lite"
    dreamt = served.call("GET", f"/v1/jobs/{started.body['id']}", key="acme-alice")
    assert dreamt.body["agent"] == "alice"

    assert served.call("POST", "/v1/agents/alice/jobs/sleep", {}).status == 422
    assert served.call("POST", "/v1/agents/alice/jobs/decay", {}, key="acme-reader").status == 403
    assert served.call("POST", "/v1/agents/alice/jobs/decay", {"days": 0}).status == 422
    client = Client(served.url, served.keys["acme-alice"])
    job = client.run_job("decay", days=2)
    served.service.jobs.wait(20)
    assert client.job(job["id"])["result"]["job"] == "decay"
