"""The charts and policies views in a real headless Chromium over a real server: each
chart drawn from a workspace filled here, its bars and points and its accessible text
checked against the store, on a laptop and on a phone; the policies shown read-only."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.server.conftest import Served
from tests.server.test_routes_charts import fill, serve_with_policies
from tests.server.test_ui import colours, page, shoot, sign_in

__all__ = ["page"]  # the browser fixture, shared with test_ui


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serve_with_policies(tmp_path)


def bars(page: Any, chart: str, shape: str = "rect.bar") -> list[tuple[str, str, float]]:
    """(series, day, value) of every bar or point drawn in one chart."""
    found = page.locator(f"figure[data-chart={chart}] svg {shape}")
    return [
        (
            found.nth(n).get_attribute("data-series") or found.nth(n).get_attribute("data-label"),
            found.nth(n).get_attribute("data-label"),
            float(found.nth(n).get_attribute("data-value")),
        )
        for n in range(found.count())
    ]


def described(page: Any, chart: str) -> str:
    """The chart's accessible description: the <desc> its SVG is labelled by."""
    ids = page.get_attribute(f"figure[data-chart={chart}] svg", "aria-labelledby").split()
    assert page.get_attribute(f"figure[data-chart={chart}] svg", "role") == "img"
    return " ".join(page.locator(f"[id='{i}']").text_content() for i in ids)


def figures(page: Any, chart: str) -> list[list[str]]:
    """The rows of the chart's table of figures."""
    rows = page.locator(f"figure[data-chart={chart}] table.chart-data tbody tr")
    return [
        [c.strip() for c in rows.nth(n).locator("th, td").all_text_contents()]
        for n in range(rows.count())
    ]


def open_charts(page: Any) -> None:
    page.click("#tabs button[data-view=charts]")
    page.wait_for_selector("figure[data-chart=llm-purpose]")


def test_each_chart_draws_the_stores_figures(page: Any, served: Served, tmp_path: Path) -> None:
    acme = served.memories["acme"]
    at = fill(acme)
    seen = acme.recall("Burek", agent="alice", k=10, reader=acme.reader())
    sign_in(page, served, "acme-admin", "alice")
    open_charts(page)

    today = acme.clock.now().astimezone(UTC).date()
    first = today - timedelta(days=29)
    kept = acme.items(agent="alice", reader=acme.reader())
    recent = [i for i in kept if i.created_at.astimezone(UTC).date() >= first]
    by_tier = Counter(
        (f"{i.tier.value}-term", i.created_at.astimezone(UTC).date().isoformat()) for i in recent
    )
    drawn = bars(page, "growth-tier")
    assert {(s, d): v for s, d, v in drawn} == by_tier and len(drawn) == len(by_tier) == 4
    by_type = Counter(
        (i.type.value, i.created_at.astimezone(UTC).date().isoformat()) for i in recent
    )
    assert {(s, d): v for s, d, v in bars(page, "growth-type")} == by_type
    size = bars(page, "growth-size", "circle.point")
    assert len(size) == 30 and size[-1][2] == len(kept) == 5 and size[0][2] == 1
    assert f"items: 1 on {first}, 5 on {today}" in described(page, "growth-size")
    assert "long-term: 1 in all" in described(page, "growth-tier")

    recall = bars(page, "recalls")
    day2 = (today - timedelta(days=2)).isoformat()
    assert ("recalls", today.isoformat(), 1) in recall and ("recalls", day2, 1) in recall
    assert ("items recalled", today.isoformat(), len(seen.hits)) in recall
    assert ("items recalled", day2, at["hits 2 days ago"]) in recall
    assert len(recall) == 4
    assert "recalls: 2 in all" in described(page, "recalls")
    uses = len(seen.hits) + at["hits 2 days ago"]
    assert f"2 recall(s) in all, which used items you may see {uses} time(s)" in page.inner_text(
        "figure[data-chart=recalls]"
    )

    wake = served.call("GET", "/v1/agents/alice/wake").body
    meters = page.locator("figure[data-chart=wake] rect.meter")
    assert meters.count() == 3
    assert [int(meters.nth(n).get_attribute("data-value")) for n in range(3)] == [
        wake["parts"][p] for p in ("identity", "memory_block", "active_context")
    ]
    parts, budgets = wake["parts"], wake["budgets"]
    memory_block = f"<memory> block: {parts['memory_block']} of {budgets['memory_block']} tokens"
    assert memory_block in described(page, "wake")

    day1 = (today - timedelta(days=1)).isoformat()
    assert sorted(bars(page, "llm-calls")) == sorted(
        [("ok", day1, 1), ("ok", today.isoformat(), 1), ("failed", today.isoformat(), 1)]
    )
    assert "ok: 2 in all" in described(page, "llm-calls")
    assert figures(page, "llm-tokens") == [
        [day1, "1000", "200"],
        [today.isoformat(), "3500", "500"],
    ]
    assert "tokens in: 4500 in all" in described(page, "llm-tokens")
    purposes = page.locator("figure[data-chart=llm-purpose] rect.meter")
    assert [purposes.nth(n).get_attribute("data-label") for n in range(purposes.count())] == [
        "summary",
        "extraction",
    ]
    assert "summary: 3400 of 3400 tokens (1 call(s))" in described(page, "llm-purpose")
    assert colours(shoot(page, tmp_path, "ui-charts")) > 100

    page.select_option("#chart-days", "7")
    page.wait_for_function(
        "document.querySelectorAll('figure[data-chart=growth-size] circle.point').length === 7"
    )


def test_the_charts_fit_a_phone(page: Any, served: Served, tmp_path: Path) -> None:
    fill(served.memories["acme"])
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, served, "acme-admin", "alice")
    open_charts(page)
    widths = page.eval_on_selector_all(
        "figure.chart svg", "all => all.map((s) => s.getBoundingClientRect().right)"
    )
    assert len(widths) == 8 and max(widths) <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert colours(shoot(page, tmp_path, "ui-charts-phone")) > 100
    page.click("#tabs button[data-view=policies]")
    page.wait_for_selector("#policies tbody tr")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.locator("#policies tbody tr").first.is_visible()


def test_policies_are_shown_and_a_reader_can_change_nothing(
    page: Any, served: Served, tmp_path: Path
) -> None:
    acme = served.memories["acme"]
    fill(acme)
    sign_in(page, served, "acme-reader", "alice")
    page.click("#tabs button[data-view=policies]")
    page.wait_for_selector("#policies tbody tr")
    rules = page.locator("#policies tbody tr").all_inner_texts()
    assert [r.split("\t")[0] for r in rules] == [
        "no DMs in long-term memory",
        "never store #hr-private",
    ]
    assert "channel hr-private" in rules[1] and "never store" in rules[1]
    assert "keep at most in mid-term" in rules[0]
    retention = page.locator("#retention tbody tr").all_inner_texts()
    assert retention[0].split("\t") == ["short", "conversation turns", "90 days"]
    assert retention[2].endswith("for ever")
    assert "kronika.toml" in page.inner_text("#policies-note")
    controls = "#view-policies button, #view-policies input, #view-policies textarea"
    assert page.locator(controls).count() == 2  # the form's, hidden: no edit control shown
    assert page.locator(controls).filter(visible=True).count() == 0
    assert page.locator("#policies-form").is_hidden()
    assert colours(shoot(page, tmp_path, "ui-policies")) > 20
    for method in ("POST", "DELETE"):
        refused = served.call(method, "/v1/agents/alice/policies", {"x": 1}, key="acme-reader")
        assert refused.status == 405
    edit = {"toml": '[[policy]]\nname = "x"\nstore = false\n'}
    assert served.call("PUT", "/v1/agents/alice/policies", edit, key="acme-reader").status == 403
    assert (
        served.call("POST", "/v1/agents/alice/memories", {"content": "x"}, key="acme-reader").status
        == 403
    )

    # the reader's charts count what it may see: in channel #vet one note more
    open_charts(page)
    assert sum(v for s, _, v in bars(page, "growth-tier") if s == "mid-term") == 1
    page.fill("#channel", "vet")
    page.select_option("#chart-days", "7")
    page.wait_for_function(
        "document.querySelectorAll('figure[data-chart=growth-size] circle.point').length === 7"
    )
    assert sum(v for s, _, v in bars(page, "growth-tier") if s == "mid-term") == 2
    assert re.search(r"mid-term: 2 in all", described(page, "growth-tier"))


def test_axe_finds_no_serious_violation_in_the_charts_or_the_policies(
    page: Any, served: Served
) -> None:
    axe = pytest.importorskip("axe_playwright_python.sync_playwright", reason="no axe-core")
    fill(served.memories["acme"])
    sign_in(page, served, "acme-admin", "alice")
    open_charts(page)
    page.click("figure[data-chart=llm-tokens] details summary")  # the table of figures too
    found = {"charts": axe.Axe().run(page).response["violations"]}
    page.click("#tabs button[data-view=policies]")
    page.wait_for_selector("#policies tbody tr")
    found["policies"] = axe.Axe().run(page).response["violations"]
    serious = {
        view: [(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in found[view]]
        for view in found
        if any(v["impact"] in ("serious", "critical") for v in found[view])
    }
    assert serious == {}
