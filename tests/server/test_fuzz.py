"""A schema fuzz run (schemathesis) against the live server's /openapi.json: whatever
the generated request, the server answers with no 5xx. Two requests in three that name
an agent name one that exists, so bodies reach the memory, not only the 404."""

from __future__ import annotations

from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis (the dev extra) is missing")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from tests.server.conftest import Served  # noqa: E402

EXAMPLES = 15


def test_no_generated_request_makes_a_server_error(served: Served) -> None:
    schema = schemathesis.openapi.from_url(served.url + "/openapi.json")
    headers = {"Authorization": f"Bearer {served.keys['acme-admin']}"}
    failures: list[str] = []
    ran = 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def fuzz(case: Any) -> None:
            nonlocal ran
            ran += 1
            if case.path_parameters and "agent" in case.path_parameters and ran % 3:
                case.path_parameters["agent"] = "alice"  # reach past "no such agent"
            response = case.call(base_url=served.url, headers=headers, timeout=30)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.text[:300]}")

        fuzz()
    assert ran > EXAMPLES * 10
    assert failures == []
