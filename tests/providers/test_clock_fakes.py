import doctest
from datetime import UTC, datetime, timedelta

import kronika.testing
from kronika.ports import AuditEntry
from kronika.providers.clock import SystemClock
from kronika.testing import FrozenClock, ListAuditLog


def test_system_clock_is_aware_utc_and_current():
    before = datetime.now(UTC)
    now = SystemClock().now()
    assert now.tzinfo is UTC
    assert before <= now <= datetime.now(UTC) + timedelta(seconds=1)


def test_frozen_clock_moves_only_when_told():
    clock = FrozenClock(datetime(2025, 11, 27, 9, 0))
    assert clock.now() == clock.now() == datetime(2025, 11, 27, 9, 0, tzinfo=UTC)
    clock.advance(minutes=30, seconds=5)
    assert clock.now() == datetime(2025, 11, 27, 9, 30, 5, tzinfo=UTC)
    clock.set(datetime(2030, 1, 1, tzinfo=UTC))
    assert clock.now().year == 2030


def entry(agent: str, summary: str) -> AuditEntry:
    return AuditEntry(
        datetime(2025, 1, 1, tzinfo=UTC), "remember", agent, agent, "User", None, summary, "applied"
    )


def test_list_audit_log_filters_by_agent_and_keeps_the_newest():
    log = ListAuditLog()
    for i in range(5):
        log.append(entry("a" if i % 2 == 0 else "b", f"s{i}"))
    assert [e.summary for e in log.read("a")] == ["s0", "s2", "s4"]
    assert [e.summary for e in log.read(limit=2)] == ["s3", "s4"]
    assert log.read("a", limit=0) == []


def test_testing_docstring_examples_run():
    result = doctest.testmod(kronika.testing)
    assert result.attempted >= 4 and result.failed == 0
