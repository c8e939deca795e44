"""The memory browser in a real headless Chromium over a real server on 127.0.0.1:
sign in, look, search, open a citation, edit a Brain line, forget with a receipt,
approve a proposal, export — each checked in the page and in the store."""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.server.conftest import Served

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
CHROMIUM = os.environ.get("KRONIKA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip("no Chromium (apt-get install chromium)", allow_module_level=True)

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def page(served: Served, tmp_path: Path) -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(20_000)
        yield page
        context.close()
        browser.close()


def sign_in(page: Any, served: Served, key: str, agent: str) -> None:
    page.goto(served.url + "/")
    page.fill("#key", served.keys[key])
    page.click("#signin button[type=submit]")
    page.wait_for_selector("#who:not([hidden])")
    page.select_option("#agent", agent)
    page.wait_for_selector("#brain-facts tbody tr")


# $KRONIKA_UI_SCREENSHOTS (e.g. docs/images): where a run also saves its screenshots;
# the pictures of docs/ui.md are made that way. Unset: kept in the test's own folder.
_SAVED = os.environ.get("KRONIKA_UI_SCREENSHOTS")
SHOTS: Path | None = Path(_SAVED) if _SAVED else None


def shoot(page: Any, tmp_path: Path, name: str) -> bytes:
    """A full-page screenshot, also saved to :data:`SHOTS` when that is set."""
    png: bytes = page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        (SHOTS / f"{name}.png").write_bytes(png)
    return png


def colours(png: bytes) -> int:
    """How many distinct pixel rows a PNG has (a blank page has one)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = [], 8
    width = height = 0
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind = png[at + 4 : at + 8]
        data = png[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", data[:8])
        elif kind == b"IDAT":
            chunks.append(data)
        at += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    stride = len(raw) // height
    return len({raw[n * stride + 1 : (n + 1) * stride] for n in range(height)}) if width else 0


def test_an_admin_looks_searches_edits_forgets_approves_and_exports(
    page: Any, served: Served, tmp_path: Path
) -> None:
    acme = served.memories["acme"]
    acme.remember("Kraków", key="city", agent="alice")
    acme.remember("Zofia lubi pierogi z jagodami", key="ulubione", agent="alice")
    acme.save_turn("2026-11-25_001", "user", "Mój pies ma na imię Burek", agent="alice")
    acme.save_turn("2026-11-25_001", "assistant", "Burek to piękne imię", agent="alice")
    acme.remember("tea", key="drink", agent="carol", source_agent="carol")  # waits
    sign_in(page, served, "acme-admin", "alice")

    wake = page.inner_text("#wake")
    assert "tokens" in wake and "city" in wake
    assert "pierogi z jagodami" in page.inner_text("#brain-facts")  # Polish text shown whole
    assert colours(shoot(page, tmp_path, "ui-brain")) > 50

    page.click("#brain-facts tr:has-text('city') button.edit-fact")
    page.wait_for_selector("#edit-dialog[open]")
    assert "city: Kraków" in page.inner_text("#edit-old")
    page.fill("#edit-value", "Gdańsk")
    page.click("#edit-save")
    page.wait_for_selector("#brain-facts td:has-text('Gdańsk')")
    assert page.locator("#edit-dialog[open]").count() == 0
    history = acme.history("city", agent="alice")
    assert [(f.value, f.status.value) for f in history] == [
        ("Kraków", "superseded"),
        ("Gdańsk", "current"),
    ]
    assert any(e.action == "supersede" for e in acme.audit(agent="alice"))

    page.click("#tabs button[data-view=search]")
    page.fill("#query", "Burek")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#hits tbody tr")
    assert "Burek" in page.inner_text("#hits")
    page.click("#hits tr:has-text('pies') a.citation")
    page.wait_for_selector("#source li.cited")
    assert "Mój pies ma na imię Burek" in page.inner_text("#source li.cited")
    assert "Burek to piękne imię" in page.inner_text("#source")  # the transcript around it
    assert colours(shoot(page, tmp_path, "ui-search")) > 50

    page.click("#tabs button[data-view=sessions]")
    page.click("#sessions a.session:has-text('2026-11-25_001')")
    page.wait_for_selector("#transcript li")
    assert page.locator("#transcript li").all_inner_texts() == [
        "user: Mój pies ma na imię Burek",
        "assistant: Burek to piękne imię",
    ]

    acme.record_outcome(
        "deploy billing", "make deploy", ok=False, reasons=["exit 2"], agent="alice"
    )
    page.click("#tabs button[data-view=lessons]")
    page.wait_for_selector("#lessons tbody tr")
    assert "exit 2" in page.inner_text("#lessons") and "0.50" in page.inner_text("#lessons")

    page.click("#tabs button[data-view=items]")
    page.wait_for_selector("#items tbody tr")
    page.click("#items tr:has-text('pierogi') button.forget")
    page.wait_for_selector("#forget-dialog[open]")
    assert "pierogi z jagodami" in page.inner_text("#forget-items")
    assert "pierogi" in (acme.workspace.agent_dir("alice") / "brain.md").read_text()  # asked first
    page.click("#forget-go")
    page.wait_for_selector("#receipt h3")
    assert "Forgotten: 1 item(s) (applied)" in page.inner_text("#receipt")
    assert "brain.md" in page.inner_text("#receipt")
    assert colours(shoot(page, tmp_path, "ui-forget")) > 20
    assert "pierogi" not in (acme.workspace.agent_dir("alice") / "brain.md").read_text()

    page.select_option("#agent", "carol")
    page.click("#tabs button[data-view=proposals]")
    page.wait_for_selector("#proposals tbody tr")
    assert "tea" in page.inner_text("#proposals")
    page.click("#proposals button.approve")
    page.wait_for_selector("#status:has-text('approved')")
    assert {f.key: f.value for f in acme.facts(agent="carol")} == {"drink": "tea"}

    page.click("#tabs button[data-view=audit]")
    page.wait_for_selector("#audit tbody tr")
    page.fill("#audit-filter", "approve")
    assert all("approve" in row for row in page.locator("#audit tbody tr").all_inner_texts())

    page.click("#tabs button[data-view=export]")
    page.click("#export-json")
    page.wait_for_selector("#export-link:not([hidden])")
    with page.expect_download() as download:
        page.click("#export-link")
    saved = tmp_path / "export.json"
    download.value.save_as(saved)
    assert '"drink"' in saved.read_text(encoding="utf-8") or "tea" in saved.read_text()


def test_a_reader_sees_no_edit_controls_and_the_server_refuses_edits_anyway(
    page: Any, served: Served
) -> None:
    served.memories["acme"].remember("Lviv", key="city", agent="alice")
    sign_in(page, served, "acme-reader", "alice")
    assert page.locator("button.edit-fact").count() == 0
    page.click("#tabs button[data-view=items]")
    page.wait_for_selector("#items tbody tr")
    assert page.locator("#items tbody tr").count() >= 1
    assert page.locator("button.forget").count() == 0
    assert not page.is_visible("#forget-form")
    refused = served.call(
        "POST", "/v1/agents/alice/memories", {"key": "city", "value": "Odesa"}, key="acme-reader"
    )
    assert refused.status == 403
    assert {f.key: f.value for f in served.memories["acme"].facts(agent="alice")} == {
        "city": "Lviv"
    }


def test_a_wrong_key_is_refused_on_the_page(page: Any, served: Served) -> None:
    page.goto(served.url + "/")
    page.fill("#key", "not-a-key")
    page.click("#signin button[type=submit]")
    page.wait_for_selector("#status.bad")
    assert "401" in page.inner_text("#status")
    assert page.is_hidden("#tabs")
