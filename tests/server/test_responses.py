"""Every answer of the REST API has a model (``kronika.server.responses`` and the route
modules), ``/openapi.json`` shows it, and the answers are what the models say, field
for field: over real HTTP, compared with the JSON the one function per result object
makes (``kronika.wire``; a key: ``kronika.server.views``), with nothing added, dropped or
turned into another type (a ``0`` stays ``0``; a field that is absent stays absent)."""

from __future__ import annotations

import json
import urllib.request
from dataclasses import fields
from typing import Any

import pytest
from tests.server.conftest import Served

from kronika import wire
from kronika.core.model import MemoryItem
from kronika.server import responses, views


def _spec(served: Served) -> dict[str, Any]:
    body: dict[str, Any] = served.call("GET", "/openapi.json", key=None).body
    return body


def test_every_json_answer_of_the_openapi_document_is_a_named_model(served: Served) -> None:
    spec = _spec(served)
    named = spec["components"]["schemas"]
    checked = 0
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            success = [c for c in operation["responses"] if c.startswith("2")]
            assert len(success) == 1, (method, path)
            content = operation["responses"][success[0]].get("content", {})
            if "application/zip" in content:
                continue  # the Markdown files of an export
            schema = content["application/json"]["schema"]
            assert "$ref" in schema, (method, path, schema)  # never an untyped object
            model = named[schema["$ref"].rsplit("/", 1)[1]]
            assert model["type"] == "object" and model["properties"], (method, path)
            assert model.get("additionalProperties") is False, (method, path)
            checked += 1
    assert checked >= 45
    item = named["Item"]["properties"]
    assert list(item) == [f.name for f in fields(MemoryItem)] + ["citation"]
    assert "from" in named["Proposal"]["properties"]  # as the answer spells it


def test_an_item_and_its_receipts_are_sent_as_the_wire_makes_them(served: Served) -> None:
    made = served.call(
        "POST", "/v1/agents/alice/memories",
        {"content": "Ola rides a bike to work", "importance": 1, "tags": ["travel"]},
    )  # fmt: skip
    assert made.status == 200
    receipt = made.body
    assert list(receipt) == list(responses.WriteReceipt.model_fields)
    item_id = receipt["item"]["id"]
    acme = served.memories["acme"]
    stored = acme.get(item_id, agent="alice")
    one = served.call("GET", f"/v1/agents/alice/memories/{item_id}").body
    assert one == wire.item(stored)
    assert list(one) == list(wire.item(stored))  # in the same order
    forgot = served.call("POST", "/v1/agents/alice/forget", {"id": item_id, "dry_run": True})
    assert forgot.body["outcome"] == "preview"
    assert forgot.body["forgotten"] == [wire.item(stored)]


def test_recall_sends_the_parts_of_a_score_only_when_asked(served: Served) -> None:
    served.call("POST", "/v1/agents/alice/memories", {"content": "Ola drinks green tea"})
    plain = served.call("POST", "/v1/agents/alice/recall", {"query": "tea", "k": 3}).body
    asked = {"query": "tea", "k": 3, "explain": True}
    explained = served.call("POST", "/v1/agents/alice/recall", asked).body
    assert plain["hits"] and explained["hits"]
    assert "explain" not in plain["hits"][0]  # absent, not null
    parts = explained["hits"][0]["explain"]
    assert list(parts) == list(responses.ScoreParts.model_fields)
    assert parts["total"] == explained["hits"][0]["score"]


def test_me_names_a_binding_only_for_a_bound_key(served: Served) -> None:
    unbound = served.call("GET", "/v1/me").body
    assert set(unbound) == {"id", "tenant", "role", "agent", "bound"}
    token = served.store.create("acme", role="reader", user="anna", channels=("general",))
    bound = served.call("GET", "/v1/me", key=token.token).body
    assert bound == views.api_key(token.key)
    assert (bound["user"], bound["channels"], bound["teams"]) == ("anna", ["general"], None)


def test_a_whole_number_is_sent_as_it_was_made(served: Served) -> None:
    """The model-usage chart's cost is 0 on a day without calls: sent as ``0``, as the
    chart made it, not turned into ``0.0`` by a model's ``float``."""
    request = urllib.request.Request(
        served.url + "/v1/agents/alice/charts/llm?days=2",
        headers={"Authorization": f"Bearer {served.keys['acme-admin']}"},
    )
    with urllib.request.urlopen(request) as answer:
        text = answer.read().decode()
    assert json.loads(text)["cost"] == [0, 0]
    assert '"cost":[0,0]' in text.replace(" ", "")


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("DELETE", "/agents/alice/memory/{id}", None),
        ("DELETE", "/v1/agents/alice/memories/{id}", None),
        ("POST", "/v1/agents/alice/forget", {"id": "{id}"}),
    ],
)
def test_the_three_forgetting_routes_give_one_receipt(
    served: Served, method: str, path: str, body: dict[str, str] | None
) -> None:
    made = served.call("POST", "/v1/agents/alice/memories", {"content": "PIN hint: owl"})
    item_id = made.body["item"]["id"]
    sent = {k: v.format(id=item_id) for k, v in body.items()} if body else None
    answer = served.call(method, path.format(id=item_id), sent)
    assert answer.status == 200
    receipt = answer.body.get("receipt", answer.body)  # the MicroDAO route wraps it
    assert receipt["outcome"] == "applied"
    assert [i["id"] for i in receipt["forgotten"]] == [item_id]
    assert served.call("GET", f"/v1/agents/alice/memories/{item_id}").status == 404


@pytest.mark.parametrize(
    "path",
    ["/agents/alice/memory/distill", "/v1/agents/alice/distill", "/v1/agents/alice/jobs/distill"],
)
def test_the_three_distilling_routes_queue_one_job(served: Served, path: str) -> None:
    answer = served.call("POST", path, {"days": 3})
    assert answer.status == 202
    job = answer.body.get("job", answer.body)  # the MicroDAO route wraps it
    assert (job["kind"], job["agent"], job["params"]) == ("distill", "alice", {"days": 3})
    served.service.jobs.wait(10)
    done = served.call("GET", f"/v1/jobs/{job['id']}").body
    assert done["status"] in {"done", "waiting"}
    assert list(done) == list(responses.Job.model_fields)
