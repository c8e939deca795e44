"""Every model call is booked; a spent daily budget makes work wait, never lose it (O1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kronika import build_memory
from kronika.app import USAGE_FILE, build_llm
from kronika.cli import main
from kronika.settings import Settings
from kronika.stores.usage import JsonlUsageLedger
from kronika.testing import FrozenClock, ScriptedChatServer
from kronika.workflows.session import Session

Brainy = Any  # the scripted model of conftest.py


def _extraction(key: str, value: str) -> dict[str, object]:
    return {"facts": [{"tag": "CORE", "key": key, "value": value}], "summary": f"{key}: {value}"}


def _statuses(report: Any) -> list[str]:
    return [o.status for o in report.sessions]


def test_a_spent_budget_queues_the_work_until_the_next_day_and_loses_nothing(
    settings: Settings, clock: FrozenClock, brainy: Brainy, server: ScriptedChatServer
) -> None:
    budgeted = settings.with_overrides(
        llm_base_url=server.base_url, llm_model="m", llm_daily_calls=1, llm_price_input=2.0
    )
    brainy.extractions = [
        _extraction("pet", "a cat named Mruczek"),
        _extraction("hobby", "gardening"),
    ]
    with build_memory(budgeted, create=True, clock=clock) as memory:
        llm = build_llm(budgeted, minion=True, clock=clock)
        first = Session(memory, llm=llm)
        first.user("I have a cat.")
        assert _statuses(first.close()) == ["consolidated"]
        second = Session(memory, llm=llm)
        second.user("Tomatoes again this weekend, the greenhouse is full.")
        report = second.close()
        assert _statuses(report) == ["queued"]
        error = report.sessions[0].error
        assert error is not None and "daily budget of 1 model calls" in error
        assert brainy.calls == ["extraction"]  # the second never reached the model
        assert "gardening" not in {f.value for f in memory.facts()}

        entries = JsonlUsageLedger(Path(budgeted.home) / USAGE_FILE).read()
        assert [(e.purpose, e.agent, e.outcome) for e in entries] == [
            ("extraction", "default", "ok"),
            ("extraction", "default", "over budget"),
        ]
        assert entries[0].tokens_in > 0 and entries[0].tokens_out > 0
        ledger_text = (Path(budgeted.home) / USAGE_FILE).read_text(encoding="utf-8")
        assert "Mruczek" not in ledger_text and "cat" not in ledger_text  # counts, never text

        clock.advance(days=1)
        wake = Session(memory, llm=llm).wake()
        assert wake.recovered is not None
        assert _statuses(wake.recovered) == ["consolidated"]
        assert "gardening" in {f.value for f in memory.facts()}


def test_kronika_usage_totals_calls_tokens_and_cost(
    settings: Settings,
    clock: FrozenClock,
    brainy: Brainy,
    server: ScriptedChatServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = settings.with_overrides(
        llm_base_url=server.base_url, llm_model="m", llm_price_input=1_000_000.0
    )
    brainy.extractions = [_extraction("pet", "a dog")]
    with build_memory(model, create=True) as memory:
        session = Session(memory, llm=build_llm(model, minion=True))
        session.user("I have a dog.")
        session.close()
    monkeypatch.setenv("KRONIKA_HOME", str(settings.home))
    monkeypatch.setenv("KRONIKA_LLM_PRICE_INPUT", "1000000")
    assert main(["logs", "usage", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    [row] = out["rows"]
    assert (row["agent"], row["purpose"], row["model"], row["calls"]) == (
        "default",
        "extraction",
        "m",
        1,
    )
    assert row["cost"] == pytest.approx(row["tokens_in"])  # one unit per prompt token
    assert main(["logs", "usage"]) == 0
    table = capsys.readouterr().out
    assert "extraction" in table and "today, default: 1 calls" in table
    assert main(["logs", "usage", "--days", "0"]) == 2


def test_read_usage_gives_the_calls_booked_oldest_first_and_from_a_moment_on(
    settings: Settings, clock: FrozenClock
) -> None:
    from kronika import init_workspace, read_usage
    from kronika.ports import ChatMessage

    init_workspace(settings)
    assert read_usage(settings) == []  # no ledger yet: no calls
    with ScriptedChatServer(["one", "two words"]) as model:
        chosen = settings.with_overrides(llm_base_url=model.base_url, llm_model="m")
        llm = build_llm(chosen, clock=clock)
        assert llm is not None
        llm.chat([ChatMessage("user", "hi")])
        clock.advance(days=1)
        llm.chat([ChatMessage("user", "hi again")])
    booked = read_usage(chosen)
    assert [(e.model, e.outcome, e.tokens_out) for e in booked] == [("m", "ok", 1), ("m", "ok", 2)]
    assert booked == JsonlUsageLedger(Path(chosen.home) / USAGE_FILE).read()
    assert [e.tokens_out for e in read_usage(chosen, since=clock.now())] == [2]


def test_a_line_separator_in_a_booked_call_keeps_it_one_entry(tmp_path: Path) -> None:
    """JSON leaves U+2028, U+2029 and NEL inside a string as they are: a line of either
    ledger ends at "\\n" only, so a model name or session holding one stays one entry."""
    from datetime import UTC, datetime

    from kronika.core.usage import UsageEntry
    from kronika.stores.usage import JsonlLessonUses

    at = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
    ledger = JsonlUsageLedger(tmp_path / "usage.jsonl")
    odd = "local\u2028model\x85v2\u2029"
    ledger.append(UsageEntry(at, "chat", "main", odd, 12, 3, 0.5, "ok"))
    ledger.append(UsageEntry(at, "chat", "main", "plain", 1, 1, 0.1, "ok"))
    assert [e.model for e in ledger.read()] == [odd, "plain"]
    uses = JsonlLessonUses(tmp_path / "lesson_uses.jsonl")
    uses.append(at, "main", "s\u2028one", ["l-1"])
    uses.append(at, "main", "two", [])
    assert [row["session"] for row in uses.read()] == ["s\u2028one", "two"]
