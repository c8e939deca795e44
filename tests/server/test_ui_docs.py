"""``/docs`` in a real headless Chromium over a real server on 127.0.0.1: the bundled
Swagger UI reads the OpenAPI 3.1 document the server emits and lists kronika's routes,
with no console error, no failed request and nothing fetched from elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.server.conftest import Served
from tests.server.test_ui import CHROMIUM, FLAGS, sync_api

pytest.importorskip("swagger_ui_bundle", reason="swagger-ui-bundle-v2 is not installed")


@pytest.fixture
def watched(served: Served) -> Iterator[tuple[Any, list[str]]]:
    problems: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.on(
            "console",
            lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None,
        )
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
        page.on(
            "response",
            lambda r: problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None,
        )
        page.on(
            "request",
            lambda r: (
                None
                if r.url.startswith((served.url, "data:"))
                else problems.append(f"remote: {r.url}")
            ),
        )
        yield page, problems
        context.close()
        browser.close()


def test_docs_lists_the_routes_of_the_openapi_document(
    served: Served, watched: tuple[Any, list[str]]
) -> None:
    page, problems = watched
    page.goto(served.url + "/docs")
    recall = page.locator(
        ".opblock-post .opblock-summary-path[data-path='/v1/agents/{agent}/recall']"
    )
    recall.wait_for()
    assert recall.count() == 1
    assert page.locator(".opblock").count() >= 20  # every route, not just the first
    assert page.locator(".errors-wrapper").count() == 0  # Swagger UI's own parse errors
    assert "Unable to render this definition" not in page.content()
    assert "kronika" in page.locator(".info .title").inner_text()
    assert problems == []
