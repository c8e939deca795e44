"""Every REST route over real HTTP: what it does, what it refuses (422 naming the
field, never 500), and that no route but /healthz answers without a valid key."""

from __future__ import annotations

import http.client
import re
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.server.conftest import Served


def _concrete(path: str) -> str:
    values = {"agent": "alice", "memory_id": "f-x", "item_id": "f-x", "job_id": "job-x"}
    values |= {"session_id": "s1", "proposal_id": "p-x", "name": "Zofia", "job": "decay"}
    return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], path)


def _routes(served: Served) -> list[tuple[str, str]]:
    spec = served.call("GET", "/openapi.json", key=None).body
    return [
        (method.upper(), path)
        for path, ops in spec["paths"].items()
        for method in ops
        if path != "/healthz"
    ]


def test_health_openapi_and_docs_need_no_key(served: Served) -> None:
    assert served.call("GET", "/healthz", key=None).body == {"status": "ok"}
    spec = served.call("GET", "/openapi.json", key=None).body
    assert "/agents/{agent}/memory" in spec["paths"]
    assert "/v1/agents/{agent}/recall" in spec["paths"]
    with urllib.request.urlopen(served.url + "/docs") as answer:
        page = answer.read().decode()
    assert "/openapi.json" in page
    for asset in re.findall(r'(?:src|href)="(/docs/assets/[^"]+)"', page):
        with urllib.request.urlopen(served.url + asset) as answer:
            assert answer.status == 200
    assert "http" not in " ".join(re.findall(r'(?:src|href)="([^"]+)"', page))  # nothing remote


@pytest.mark.parametrize("key", [None, "not-a-key", "kro_000000000000_" + "x" * 43, "acme-revoked"])
def test_every_route_refuses_a_missing_wrong_or_revoked_key(served: Served, key: Any) -> None:
    routes = _routes(served)
    assert len(routes) >= 30
    for method, path in routes:
        body = {} if method == "POST" else None
        answer = served.call(method, _concrete(path), body, key=key)
        assert answer.status == 401, (method, path, answer)
        assert answer.body["error"] == "Unauthenticated"
        assert answer.headers.get("www-authenticate") == "Bearer"


def test_the_key_may_come_as_x_api_key(served: Served) -> None:
    token = served.keys["acme-admin"]
    answer = served.call("GET", "/v1/me", key=None, headers={"X-API-Key": token})
    expected = {
        "id": token.split("_")[1],
        "tenant": "acme",
        "role": "admin",
        "agent": None,
        "bound": False,
    }
    assert answer.body == expected


def test_remember_recall_history_and_as_of(served: Served) -> None:
    first = served.call("POST", "/v1/agents/alice/memories", {"key": "city", "value": "Kraków"})
    assert first.status == 200 and first.body["outcome"] == "applied"
    assert first.body["item"]["content"] == "city: Kraków"
    time.sleep(0.05)
    second = served.call("POST", "/v1/agents/alice/memories", {"key": "city", "value": "Lviv"})
    assert second.body["change"] == "SupersedeFact"
    history = served.call("GET", "/v1/agents/alice/history?key=city").body["values"]
    assert [h["value"] for h in history] == ["Kraków", "Lviv"]
    now = served.call("POST", "/v1/agents/alice/recall", {"query": "city", "explain": True}).body
    assert now["hits"][0]["item"]["value"] == "Lviv"
    assert set(now["hits"][0]["explain"]) >= {"relevance", "importance", "recency", "total"}
    assert now["hits"][0]["citation"].startswith("brain.md")
    then = history[0]["valid_from"]
    past = served.call("POST", "/v1/agents/alice/recall", {"query": "city", "as_of": then}).body
    assert [h["item"]["value"] for h in past["hits"]] == ["Kraków"]
    filtered = served.call(
        "POST", "/v1/agents/alice/recall", {"query": "city", "types": ["note"]}
    ).body
    assert filtered["hits"] == []


def test_bad_input_is_a_clear_422_never_a_500(served: Served) -> None:
    cases: list[tuple[str, str, Any, str]] = [
        ("POST", "/v1/agents/alice/memories", {}, "nothing to remember"),
        ("POST", "/v1/agents/alice/memories", {"content": "  "}, "empty"),
        ("POST", "/v1/agents/alice/memories", {"content": "x", "importance": 2}, "importance"),
        ("POST", "/v1/agents/alice/memories", {"content": "x", "colour": "red"}, "colour"),
        ("POST", "/v1/agents/alice/recall", {"query": ""}, "query"),
        ("POST", "/v1/agents/alice/recall", {"query": "x", "k": 0}, "k"),
        ("POST", "/v1/agents/alice/recall", {"query": "x", "since": "a fortnight of"}, "fortnight"),
        ("POST", "/v1/agents/alice/recall", {"query": "x", "types": ["planet"]}, "planet"),
        ("POST", "/v1/agents/alice/recall", {"query": "x", "mode": "psychic"}, "mode"),
        ("POST", "/v1/agents/alice/forget", {}, "forget needs one of"),
        ("POST", "/v1/agents/alice/notes", {"text": ""}, "text"),
        ("POST", "/v1/agents/alice/sessions/s1/turns", {"speaker": "user"}, "content"),
        ("POST", "/agents/alice/memory/distill", {"days": 0}, "days"),
        ("GET", "/agents/alice/memory?scope=weekly", None, "scope: input should be"),
        ("GET", "/agents/alice/memory?scope=weekly", None, "(got 'weekly')"),
        ("GET", "/agents/alice/memory?limit=0", None, "limit"),
        ("GET", "/v1/agents/alice/memories?type=planet", None, "type"),
        ("GET", "/v1/agents/alice/history", None, "key"),
        ("POST", "/v1/import", {"document": {"format": "nonsense"}}, ""),
        ("POST", "/v1/agents", {"name": "../etc"}, ""),
    ]
    for method, path, body, words in cases:
        answer = served.call(method, path, body)
        assert answer.status == 422, (path, body, answer)
        assert answer.body["error"] in {"InvalidInput", "InvalidQuery", "ImportFormatError",
                                        "InvalidAgentName"}, answer  # fmt: skip
        assert words.lower() in answer.body["message"].lower(), answer
    broken = served.call("POST", "/v1/agents/alice/recall", raw=b"{not json")
    assert broken.status == 422 and broken.body["error"] == "InvalidInput"


def test_microdao_list_newest_first_with_scope(served: Served) -> None:
    served.call("POST", "/v1/agents/alice/memories", {"content": "likes tea"})
    time.sleep(0.02)
    served.call("POST", "/v1/agents/alice/memories", {"content": "works in Gdańsk"})
    served.call("POST", "/v1/agents/alice/sessions/s1/turns", {"speaker": "user", "content": "hi"})
    listed = served.call("GET", "/agents/alice/memory?scope=long_term&limit=10").body
    assert listed["scope"] == "long_term"
    assert [i["content"] for i in listed["items"]] == ["works in Gdańsk", "likes tea"]
    short = served.call("GET", "/agents/alice/memory?scope=short_term").body["items"]
    assert [i["content"] for i in short] == ["hi"]
    one = served.call("GET", "/agents/alice/memory?limit=1").body
    assert one["scope"] is None and len(one["items"]) == 1


def test_microdao_delete_forgets_with_receipt_and_it_stays_gone(served: Served) -> None:
    made = served.call("POST", "/v1/agents/alice/memories", {"content": "my PIN hint is owl"})
    item_id = made.body["item"]["id"]
    gone = served.call("DELETE", f"/agents/alice/memory/{item_id}")
    assert gone.status == 200 and gone.body["success"] is True
    assert gone.body["receipt"]["forgotten"][0]["id"] == item_id
    assert any(p["action"] == "removed" for p in gone.body["receipt"]["places"])
    again = served.call("POST", "/v1/agents/alice/recall", {"query": "PIN hint owl"}).body
    assert again["hits"] == []
    assert served.call("GET", f"/v1/agents/alice/memories/{item_id}").status == 404
    assert served.call("DELETE", f"/agents/alice/memory/{item_id}").status == 404


def test_distill_answers_at_once_with_a_job_that_reports_waiting_for_a_model(
    served: Served,
) -> None:
    when = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    old = (datetime.now(UTC) - timedelta(days=30)).isoformat()
    for sid, at in (("2026-11-20_001", when), ("2026-10-01_001", old)):
        served.call(
            "POST", f"/v1/agents/alice/sessions/{sid}/turns",
            {"speaker": "user", "content": "Remember that I'm vegan.", "at": at},
        )  # fmt: skip
    started = served.call("POST", "/agents/alice/memory/distill", {"days": 7})
    assert started.status == 202
    job = started.body["job"]
    assert job["status"] in {"queued", "running", "waiting", "done"}
    assert job["params"] == {"days": 7}
    served.service.jobs.wait(10)
    read = served.call("GET", f"/v1/jobs/{job['id']}").body
    assert read["status"] == "waiting", read
    assert "no language model is configured" in read["message"]
    assert served.call("GET", "/v1/jobs").body["jobs"][0]["id"] == job["id"]
    headers = served.call("GET", "/v1/agents/alice/sessions").body["sessions"]
    status = {h["session_id"]: h["status"] for h in headers}
    # the session of the last 7 days waits for a model (nothing lost); the older one
    # lies outside the period and is left as it was
    assert status == {"2026-10-01_001": "open", "2026-11-20_001": "ended"}
    assert served.call("GET", "/v1/jobs/job-nope").status == 404


def test_notes_turns_sessions_wake_prompt_and_brain(served: Served) -> None:
    assert served.call("POST", "/v1/agents/alice/notes", {"text": "met Ola"}).status == 200
    turn = served.call(
        "POST", "/v1/agents/alice/sessions/chat-1/turns", {"speaker": "user", "content": "hello"}
    )
    assert turn.status == 201
    assert (turn.body["session_id"], turn.body["turn_id"]) == ("chat-1", "chat-1_1")
    assert turn.body["outcome"] == "applied" and turn.body["proposal"] is None
    turns = served.call("GET", "/v1/agents/alice/sessions/chat-1").body["turns"]
    assert [t["content"] for t in turns] == ["hello"]
    served.call(
        "POST", "/v1/agents/alice/sessions/chat-1/turns", {"speaker": "assistant", "content": "hi"}
    )
    (listed,) = served.call("GET", "/v1/agents/alice/sessions").body["sessions"]
    assert (listed["session_id"], listed["status"], listed["turns"]) == ("chat-1", "open", 2)
    assert listed["first_at"] <= listed["last_at"] and listed["fields"]["source"] == "api"
    served.call("POST", "/v1/agents/alice/memories", {"key": "diet", "value": "vegan"})
    wake = served.call("GET", "/v1/agents/alice/wake").body
    assert "diet: vegan" in wake["memory_block"] and wake["tokens"] > 0
    block = served.call("GET", "/v1/agents/alice/prompt?query=food").body["block"]
    assert block.startswith("<memory>") and "vegan" in block
    assert "vegan" in served.call("GET", "/v1/agents/alice/brain").body["brain"]
    facts = served.call("GET", "/v1/agents/alice/facts").body["facts"]
    assert [f["key"] for f in facts] == ["diet"]
    listed = served.call("GET", "/v1/agents/alice/memories?type=note").body["items"]
    assert [i["content"] for i in listed] == ["met Ola"]
    one = served.call("GET", f"/v1/agents/alice/memories/{listed[0]['id']}").body
    assert one["content"] == "met Ola"


def test_forget_by_key_with_receipt_and_delete_route(served: Served) -> None:
    served.call("POST", "/v1/agents/alice/memories", {"key": "pet", "value": "cat"})
    receipt = served.call("POST", "/v1/agents/alice/forget", {"key": "pet"}).body
    assert receipt["outcome"] == "applied" and receipt["forgotten"][0]["key"] == "pet"
    assert receipt["index"]["removed"] >= 1
    made = served.call("POST", "/v1/agents/alice/memories", {"content": "owns a bike"})
    deleted = served.call("DELETE", f"/v1/agents/alice/memories/{made.body['item']['id']}")
    assert deleted.body["outcome"] == "applied"
    assert served.call("POST", "/v1/agents/alice/forget", {"key": "pet"}).status == 404


def test_proposals_approve_and_reject(served: Served) -> None:
    carol = "acme-carol"  # autonomy 1: her writes wait for the person
    first = served.call("POST", "/v1/agents/carol/memories", {"content": "uses Rust"}, key=carol)
    assert first.body["outcome"] == "proposed" and first.body["proposal"]
    served.call("POST", "/v1/agents/carol/memories", {"content": "uses Go"}, key=carol)
    waiting = served.call("GET", "/v1/agents/carol/proposals", key=carol).body["proposals"]
    assert [p["from"] for p in waiting] == ["carol", "carol"]
    first_id = waiting[0]["id"]
    denied = served.call("POST", f"/v1/agents/carol/proposals/{first_id}/approve", key=carol)
    assert denied.status == 403  # approving is the person's act, not the agent's
    ok = served.call("POST", f"/v1/agents/carol/proposals/{waiting[0]['id']}/approve")
    assert ok.status == 200 and ok.body["approved"]["outcome"] == "applied"
    no = served.call("POST", f"/v1/agents/carol/proposals/{waiting[1]['id']}/reject")
    assert no.body["rejected"]["status"] in {"pending", "rejected"}
    assert served.call("GET", "/v1/agents/carol/proposals").body["proposals"] == []
    facts = served.call("GET", "/v1/agents/carol/facts").body["facts"]
    assert [f["content"] for f in facts] == ["uses Rust"]
    missing = served.call("POST", "/v1/agents/carol/proposals/p-nope/approve")
    assert missing.status == 404


def test_a_turn_saved_at_autonomy_1_answers_that_it_awaits_approval(served: Served) -> None:
    """As a fact does: the answer names the proposal, and the session holds the turn only
    once the person approved it (over REST, through the client and in process)."""
    from kronika.client import Client

    carol, path = "acme-carol", "/v1/agents/carol/sessions/chat-7/turns"
    said = served.call("POST", path, {"speaker": "user", "content": "I moved"}, key=carol)
    assert said.status == 201
    assert said.body["outcome"] == "proposed" and said.body["proposal"].startswith("p-")
    waiting = served.call("GET", "/v1/agents/carol/proposals").body["proposals"]
    assert [p["id"] for p in waiting] == [said.body["proposal"]]  # the owner sees it
    other = {"X-Kronika-User": "bob"}  # another reader: not his session
    hidden = served.call("GET", "/v1/agents/carol/proposals", headers=other).body
    assert hidden == {"proposals": []}
    before = served.call("GET", "/v1/agents/carol/sessions/chat-7").body
    assert before["turns"] == []  # not yet
    client = Client(served.url, served.keys[carol])
    again = client.save_turn("chat-7", "assistant", "Where to?", agent="carol")
    assert (again.outcome, again.proposal is not None) == ("proposed", True)
    in_process = served.memories["acme"].save_turn(
        "chat-8", "user", "hello", agent="carol", source_agent="carol"
    )
    assert in_process.outcome == "proposed" and in_process.proposal is not None
    ok = served.call("POST", f"/v1/agents/carol/proposals/{said.body['proposal']}/approve")
    assert ok.status == 200
    session = served.call("GET", "/v1/agents/carol/sessions/chat-7").body
    assert [t["content"] for t in session["turns"]] == ["I moved"]
    mine = served.call("POST", path, {"speaker": "user", "content": "to Lisbon"})  # the person
    # "Where to?" still waits as chat-7_2: the person's turn passes over its id
    assert again == "chat-7_2"
    assert mine.body == {
        "session_id": "chat-7", "turn_id": "chat-7_3", "outcome": "applied",
        "proposal": None, "policy": None,
    }  # fmt: skip


def test_audit_export_import_and_stats(served: Served) -> None:
    served.call("POST", "/v1/agents/alice/memories", {"key": "tool", "value": "vim"})
    entries = served.call("GET", "/v1/agents/alice/audit?limit=5").body["entries"]
    assert entries[-1]["action"] in {"remember", "add"} or entries[-1]["target_agent"] == "alice"
    assert all(e["target_agent"] == "alice" for e in entries)
    assert served.call("GET", "/v1/audit").status == 200
    document = served.call("GET", "/v1/export").body
    assert set(document["agents"]) == {"alice", "bob", "carol", "default"}
    stats = served.call("GET", "/v1/stats").body
    assert stats["agents"]["alice"] >= 1 and stats["index"]
    fresh = served.call("POST", "/v1/import", {"document": document})
    assert fresh.status == 422  # alice holds memories: refused unless replace
    assert "replace" in fresh.body["message"]
    replaced = served.call("POST", "/v1/import", {"document": document, "replace": True})
    assert replaced.status == 200 and replaced.body["agents"] == 4
    assert served.call("GET", "/v1/agents").body["agents"] == ["alice", "bob", "carol", "default"]


def test_create_agent(served: Served) -> None:
    assert served.call("POST", "/v1/agents", {"name": "dave"}).status == 201
    assert "dave" in served.call("GET", "/v1/agents").body["agents"]


def test_body_size_limit_is_413_declared_or_streamed(served: Served) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    declared = http.client.HTTPConnection(host, int(port), timeout=10)
    declared.putrequest("POST", "/v1/agents/alice/memories")
    declared.putheader("Authorization", f"Bearer {served.keys['acme-admin']}")
    declared.putheader("Content-Type", "application/json")
    declared.putheader("Content-Length", str(50 * 1024 * 1024))
    declared.endheaders()
    answer = declared.getresponse()
    assert answer.status == 413 and b"RequestTooLarge" in answer.read()
    declared.close()

    def chunks() -> Iterator[bytes]:
        yield b'{"content": "'
        for _ in range(5):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    streamed = http.client.HTTPConnection(host, int(port), timeout=10)
    streamed.request(
        "POST", "/v1/agents/alice/memories", body=chunks(), encode_chunked=True,
        headers={"Authorization": f"Bearer {served.keys['acme-admin']}",
                 "Content-Type": "application/json", "Transfer-Encoding": "chunked"},
    )  # fmt: skip
    answer = streamed.getresponse()
    assert answer.status == 413 and b"RequestTooLarge" in answer.read()
    streamed.close()
    assert served.call("GET", "/v1/agents/alice/facts").body["facts"] == []


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/healthz", {"GET"}),
        ("DELETE", "/v1/agents/alice/recall", {"POST"}),
        ("PUT", "/v1/agents/alice/memories/f-x", {"GET", "DELETE"}),
        ("PATCH", "/v1/agents/alice/memories", {"GET", "POST"}),
        ("POST", "/ui/app.js", {"GET", "HEAD"}),
    ],
)
def test_405_names_every_method_the_path_takes(
    served: Served, method: str, path: str, allowed: set[str]
) -> None:
    answer = served.call(method, path, raw=b"" if method != "DELETE" else None)
    assert answer.status == 405
    assert answer.body["error"] == "HTTPError" and answer.body["message"]
    allow = {k.lower(): v for k, v in answer.headers.items()}["allow"]
    named = {m.strip() for m in allow.split(",")}
    assert allowed <= named and method not in named
    for each in named:  # and no method it names is refused so
        assert _status(served, each, path) != 405


def _status(served: Served, method: str, path: str) -> int:
    token = served.keys["acme-admin"]
    sent = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    data = None if method in ("GET", "HEAD", "DELETE") else b"{}"
    request = urllib.request.Request(served.url + path, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code
