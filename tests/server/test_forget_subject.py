"""``POST /v1/agents/{agent}/forget {"topic": …}`` forgets a subject said only in a
conversation, with a receipt naming the transcript; another tenant's memory keeps it."""

from __future__ import annotations

from tests.server.conftest import Served

from kronika.engine.session import Session


def _said(served: Served, key: str) -> list[str]:
    hits = served.call("POST", "/v1/agents/alice/recall", {"query": "Nubank"}, key=key).body
    return [h["item"]["content"] for h in hits["hits"] if "nubank" in h["item"]["content"].lower()]


def test_a_company_said_in_a_turn_is_forgotten_by_topic_for_one_tenant(served: Served) -> None:
    for tenant in ("acme", "globex"):
        Session(served.memories[tenant], agent="alice").user("I'm now a data engineer at Nubank.")
    assert _said(served, "acme-alice") and _said(served, "globex-alice")
    done = served.call("POST", "/v1/agents/alice/forget", {"topic": "Nubank"}, key="acme-alice")
    assert done.status == 200, done.body
    assert any(p["path"].startswith("sessions/") for p in done.body["places"])
    assert _said(served, "acme-alice") == []
    assert _said(served, "globex-alice") == ["I'm now a data engineer at Nubank."]
    again = served.call("POST", "/v1/agents/alice/forget", {"topic": "Nubank"}, key="acme-alice")
    assert again.status == 404 and "Nubank" in str(again.body)
