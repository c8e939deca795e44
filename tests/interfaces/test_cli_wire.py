"""The command line's ``--json`` prints the JSON the REST API and MCP send
(:mod:`kronika.wire`), which :mod:`kronika.wire` reads back; where it printed a shape of
its own before (a recall hit, a proposal, a write receipt, an audit entry), every key it
printed then is still there with the same value, and docs/cli.md names each one."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory, load_settings, wire
from kronika.cli import main
from kronika.core.model import RecallResult
from kronika.engine.proposals import Proposal
from kronika.engine.write import WriteReceipt
from kronika.ports import AuditEntry

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


# What `--json` printed before its shapes were kronika.wire's, as it printed them.
def _old_hit(result: RecallResult) -> list[dict[str, Any]]:
    return [
        {
            "id": hit.item.id,
            "kind": hit.item.type.value,
            "timestamp": hit.item.created_at.isoformat(),
            "entities": list(hit.item.entities),
            "speaker": hit.item.speaker,
            "key": hit.item.key,
            "content": hit.item.content,
            "retain": hit.item.kind.value if hit.item.kind else None,
            "confidence": hit.item.confidence,
            "citation": hit.citation,
            "turn_ids": list(hit.item.provenance.turn_ids),
            "score": hit.score.total,
            "relevance": hit.score.relevance,
            "importance": hit.score.importance,
            "recency": hit.score.recency,
            "rerank_score": hit.score.rerank_score,
            "status": hit.item.status.value,
            "valid_from": hit.item.valid_from.isoformat() if hit.item.valid_from else None,
            "valid_to": hit.item.valid_to.isoformat() if hit.item.valid_to else None,
            "history": hit.score.history,
            "tokens": hit.tokens,
        }
        for hit in result.hits
    ]


def _old_recall(result: RecallResult) -> dict[str, Any]:
    return {
        "query": result.query,
        "total_tokens": result.total_tokens,
        "budget_tokens": result.budget_tokens,
        "candidates": result.candidates,
        "dropped_for_budget": result.dropped_for_budget,
        "notes": list(result.notes),
    }


def _old_proposal(proposal: Proposal) -> dict[str, Any]:
    return {
        "id": proposal.id,
        "agent": proposal.agent,
        "from": proposal.source_agent,
        "when": proposal.created_at.isoformat(),
        "section": proposal.section,
        "change": proposal.summary,
        "type": type(proposal.change).__name__,
        "status": proposal.status,
    }


def _old_remember(receipt: WriteReceipt) -> dict[str, Any]:
    item = receipt.item
    return {
        "outcome": receipt.outcome,
        "change": type(receipt.change).__name__,
        "item": wire.item(item) if item else None,
        "notes": list(receipt.notes),
        "policy": receipt.policy,
    }


def _old_note(receipt: WriteReceipt) -> dict[str, Any]:
    item = receipt.item
    return {"outcome": receipt.outcome, "item": wire.item(item) if item else None, "notes": []}


def _old_audit(entry: AuditEntry) -> dict[str, Any]:
    return {
        "at": entry.at.isoformat(),
        "action": entry.action,
        "agent": entry.target_agent,
        "by": entry.source_agent,
        "outcome": entry.outcome,
        "item": entry.item_id,
        "summary": entry.summary,
    }


def _keeps(printed: dict[str, Any], old: dict[str, Any]) -> None:
    """Every key printed before is printed still, with the same value."""
    assert {key: printed.get(key, "<missing>") for key in old} == old


def test_a_recall_prints_wire_s_recall_and_every_key_it_printed_before(
    run: Callable[..., str],
) -> None:
    run("init")
    run("remember", "Peter drinks green tea", "--key", "drink")
    run("note", "Peter thinks green tea is the best", "--kind", "O", "--confidence", "0.8")
    printed = json.loads(run("recall", "green", "tea", "--json"))
    result = wire.recall_from_json(printed)  # wire's shape: it reads back
    assert len(result.hits) == 2 and printed["hits"][0]["item"]["id"] == result.hits[0].item.id
    _keeps(printed, _old_recall(result))
    for hit, old in zip(printed["hits"], _old_hit(result), strict=True):
        _keeps(hit, old)
        assert set(hit) >= {"item", "score", "citation", "tokens", "explain", "links"}
    assert {h["retain"] for h in printed["hits"]} == {None, "O"}


def test_a_write_receipt_prints_as_the_server_sends_it(
    run: Callable[..., str], tmp_path: Path
) -> None:
    run("init")
    made = json.loads(run("remember", "Peter drinks green tea", "--key", "drink", "--json"))
    again = json.loads(run("remember", "Peter drinks black tea", "--key", "drink", "--json"))
    noted = json.loads(run("note", "the kettle is broken", "--json"))
    listed = json.loads(run("list", "--json"))
    shown = json.loads(run("get", made["item"]["id"], "--json"))
    history = json.loads(run("history", "drink", "--json"))
    for printed, old in ((made, _old_remember), (again, _old_remember), (noted, _old_note)):
        receipt = wire.write_receipt_from_json(printed)
        assert wire.write_receipt(receipt) == printed
        _keeps(printed, old(receipt))
    assert (made["change"], again["change"], noted["change"]) == (
        "AddFact",
        "SupersedeFact",
        "AppendNote",
    )
    with build_memory(load_settings(tmp_path / "ws")) as memory:
        stored = memory.get(again["item"]["id"])
        assert again["item"] == wire.item(stored)
        assert listed == wire.items(memory.items())
        assert shown == wire.items(memory.history("drink"))[0]
        assert history == wire.items(memory.history("drink"))


def test_a_refused_write_keeps_its_keys(
    run: Callable[..., str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run("init")
    with (tmp_path / "ws" / "kronika.toml").open("a", encoding="utf-8") as config:
        config.write('\n[[policy]]\nname = "never store hr"\nchannels = ["hr-*"]\nstore = false\n')
    assert main(["remember", "payroll", "is", "late", "--channel", "hr-desk", "--json"]) == 6
    printed = json.loads(capsys.readouterr().out)
    _keeps(printed, {"outcome": "refused", "policy": printed["policy"], "item": None})
    assert "never store hr" in printed["policy"] and printed["change"] == "AddFact"
    assert wire.write_receipt(wire.write_receipt_from_json(printed)) == printed


def test_proposals_and_the_audit_trail_keep_every_key_they_printed(
    run: Callable[..., str], tmp_path: Path
) -> None:
    run("init")
    home = tmp_path / "ws"
    with (home / "kronika.toml").open("a", encoding="utf-8") as config:
        config.write("\n[agents.default]\nautonomy = 1\n")
    with build_memory(load_settings(home)) as memory:
        keep = memory.remember(key="city", value="Kraków", source_agent="default").proposal
        drop = memory.remember(key="band", value="likes metal", source_agent="default").proposal
    listed = json.loads(run("proposals", "--json"))
    assert [row["id"] for row in listed] == [keep, drop]
    for row in listed:
        proposal = wire.proposal_from_json(row)
        assert {**wire.proposal(proposal), **_old_proposal(proposal)} == row
    approved = json.loads(run("proposals", "approve", str(keep), "--json"))
    receipt = wire.write_receipt_from_json(approved)
    assert approved == {"approved": keep, **wire.write_receipt(receipt)}
    _keeps(approved, {"approved": keep, **_old_remember(receipt)} | {"policy": None})
    rejected = json.loads(run("proposals", "reject", str(drop), "--json"))["rejected"]
    proposal = wire.proposal_from_json(rejected)
    assert proposal.status == "rejected" and rejected["change"] == "remember **band**: likes metal"
    _keeps(rejected, _old_proposal(proposal))

    trail = json.loads(run("logs", "audit", "--json"))
    assert {"approve", "reject"} <= {row["action"] for row in trail}
    for row in trail:
        entry = wire.audit_entry_from_json(row)
        assert {**wire.audit_entry(entry), **_old_audit(entry)} == row


def test_a_forget_receipt_prints_as_the_server_sends_it(
    run: Callable[..., str], tmp_path: Path
) -> None:
    run("init")
    run("remember", "Peter drinks green tea", "--key", "drink")
    preview = json.loads(run("forget", "--key", "drink", "--dry-run", "--json"))
    with build_memory(load_settings(tmp_path / "ws")) as memory:
        again = memory.forget(key="drink", dry_run=True)
    assert preview == wire.forget_receipt(again)
    assert preview["forgotten"] and preview["outcome"] == "preview"


def test_the_command_line_page_names_every_key_kept_for_scripts() -> None:
    page = DOCS.read_text(encoding="utf-8")
    kept = page[page.index("### Kept for scripts") :]
    kept = kept[: kept.index("\n## ")] if "\n## " in kept else kept
    named = set(re.findall(r"`([a-z_]+)`", kept))
    flat_hit = {
        "id",
        "kind",
        "timestamp",
        "entities",
        "speaker",
        "key",
        "content",
        "retain",
        "confidence",
        "turn_ids",
        "relevance",
        "importance",
        "recency",
        "rerank_score",
        "status",
        "valid_from",
        "valid_to",
        "history",
    }
    missing = (flat_hit | {"when", "change", "approved", "agent", "by", "item"}) - named
    assert not missing, f"docs/cli.md does not name the kept keys {sorted(missing)}"
