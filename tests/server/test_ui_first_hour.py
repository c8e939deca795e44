"""A new user's first hour in the memory browser, in a real headless Chromium, at a
laptop's width and a phone's: the workspace made with the README's commands
(``kronika init``, ``kronika import sample``, ``kronika keys create``), served by
``kronika serve`` in its own process; sign in, browse, search, edit a fact, forget with
a confirmation, filter the items, export, the charts.

The page must make no console error, no failed request and no answer of 400 or more
(the favicon included), and axe-core must find no violation, in every state visited.
The screenshots of docs/ui.md are written to $KRONIKA_UI_SCREENSHOTS by this run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the [server] extra is not installed")

from tests.server.conftest import free_port  # noqa: E402
from tests.server.test_ui import CHROMIUM, FLAGS, SHOTS, sync_api  # noqa: E402

IMAGES = SHOTS  # $KRONIKA_UI_SCREENSHOTS, or none
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


@dataclass
class Workspace:
    url: str
    home: Path
    admin: str
    empty: str
    reader: str


def _kronika(home: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    env.update(KRONIKA_HOME=str(home), KRONIKA_EMBEDDER="hashing")
    done = subprocess.run(
        [sys.executable, "-m", "kronika", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"kronika {args}: {done.stderr}"
    return done.stdout


def _key(home: Path, *args: str) -> str:
    token: str = json.loads(_kronika(home, "keys", "create", *args, "--json"))["token"]
    return token


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[str, str, str]]:
    """The workspace a new user makes with the README's commands, and three keys: the
    tenant's admin, another tenant's (which has no agent yet), and a reader."""
    home = tmp_path_factory.mktemp("first-hour") / ".kronika"
    _kronika(home, "init")
    _kronika(home, "import", "sample")
    _kronika(home, "remember", "--key", "city", "Kraków")
    _kronika(home, "remember", "--key", "drink", "green tea every morning")
    _kronika(home, "remember", "--key", "pet", "a dog called Pixel")
    # another tenant, declared for an agent not made yet: its key sees no agent (a key of
    # a tenant the workspace does not serve at all is refused by `keys create`)
    with (home / "kronika.toml").open("a", encoding="utf-8") as config:
        config.write('\n[agents.helper]\ntenant = "newcomers"\n')
    keys = (
        _key(home, "--tenant", "default"),
        _key(home, "--tenant", "newcomers"),
        _key(home, "--tenant", "default", "--role", "reader"),
    )
    return home, keys


@pytest.fixture
def workspace(template: tuple[Path, tuple[str, str, str]], tmp_path: Path) -> Iterator[Workspace]:
    """A copy of the template, served by ``kronika serve`` in its own process."""
    home = tmp_path / ".kronika"
    shutil.copytree(template[0], home)
    keys = template[1]
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONIKA_")}
    env.update(KRONIKA_HOME=str(home), KRONIKA_EMBEDDER="hashing")
    server = subprocess.Popen(
        [sys.executable, "-m", "kronika", "serve", "--port", str(port), "--rate", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("kronika serve did not start") from None
                time.sleep(0.1)
        yield Workspace(url, home, *keys)
    finally:
        server.terminate()
        server.wait(20)
        if server.stderr is not None:
            server.stderr.close()


@dataclass
class Watched:
    """A page and everything that went wrong on it."""

    page: Any
    width: str
    problems: list[str] = field(default_factory=list)

    def shoot(self, name: str) -> None:
        suffix = "" if self.width == "desktop" else "-phone"
        png: bytes = self.page.screenshot(full_page=False)
        assert png[:8] == b"\x89PNG\r\n\x1a\n", name
        if IMAGES is not None:
            IMAGES.mkdir(parents=True, exist_ok=True)
            (IMAGES / f"first-hour-{name}{suffix}.png").write_bytes(png)

    def clean(self, where: str) -> None:
        """No problem so far, and no axe-core violation on the page as it is now."""
        axe = pytest.importorskip("axe_playwright_python.sync_playwright", reason="no axe-core")
        self.page.wait_for_load_state("networkidle")
        found = [
            f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
            for v in axe.Axe().run(self.page).response["violations"]
        ]
        assert (self.problems, found) == ([], []), f"{self.width}, {where}"


@pytest.fixture(params=sorted(WIDTHS))
def watched(request: pytest.FixtureRequest) -> Iterator[Watched]:
    width, height = WIDTHS[request.param]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        context = browser.new_context(
            viewport={"width": width, "height": height},
            accept_downloads=True,
            timezone_id="Europe/Warsaw",
            locale="en-GB",
        )
        page = context.new_page()
        page.set_default_timeout(20_000)
        seen = Watched(page, request.param)
        page.on(
            "console",
            lambda m: (
                seen.problems.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning")
                else None
            ),
        )
        page.on("pageerror", lambda e: seen.problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: seen.problems.append(f"failed: {r.url}"))
        page.on(
            "response",
            lambda r: seen.problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None,
        )
        yield seen
        context.close()
        browser.close()


def sign_in(seen: Watched, url: str, key: str) -> None:
    page = seen.page
    page.goto(url + "/")
    page.fill("#key", key)
    page.click("#signin button[type=submit]")
    page.wait_for_selector("#who:not([hidden])")


HEADERS_ON_ONE_LINE = """(table) => [...document.querySelectorAll(table + ' thead th')]
  .filter((th) => { const r = document.createRange(); r.selectNodeContents(th);
                    return r.getClientRects().length > 1; })
  .map((th) => th.textContent)"""
FITS = """(selector) => { const t = document.querySelector(selector);
  return t.scrollWidth <= t.parentElement.clientWidth
    && document.documentElement.scrollWidth <= document.documentElement.clientWidth; }"""


def test_the_first_hour(workspace: Workspace, watched: Watched) -> None:
    page, phone = watched.page, watched.width == "phone"
    page.goto(workspace.url + "/")
    page.wait_for_load_state("networkidle")
    assert "kronika keys create --tenant default" in page.inner_text("#signin-help")
    watched.shoot("signin")
    watched.clean("sign-in page")

    sign_in(watched, workspace.url, workspace.admin)
    page.wait_for_selector("#brain-facts tbody tr")
    assert "tenant default, admin key" in page.inner_text("#identity")
    brain = page.inner_text("#brain-facts")
    assert "Kraków" in brain and "green tea every morning" in brain
    assert "tokens" in page.inner_text("#wake")
    watched.shoot("brain")
    watched.clean("brain")

    # facts with readable times: today's, in this browser's zone
    page.click("#tabs button[data-view=facts]")
    page.wait_for_selector("#facts tbody tr")
    facts = page.inner_text("#facts")
    assert re.search(r"today \d\d:\d\d", facts) and not ISO.search(facts)
    exact = page.get_attribute("#facts tbody time", "datetime") or ""
    assert ISO.match(exact)  # the exact time stays in the markup
    watched.clean("facts")

    # search: every header whole, the table inside the page
    page.click("#tabs button[data-view=search]")
    page.fill("#query", "cello lessons")
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#hits tbody tr")
    assert "cello" in page.inner_text("#hits tbody tr:first-child")
    if not phone:
        assert page.evaluate(HEADERS_ON_ONE_LINE, "#hits") == []
    assert page.evaluate(FITS, "#hits")
    page.click("#hits tbody tr:first-child a.citation")
    page.wait_for_selector("#source li.cited")
    assert "cello" in page.inner_text("#source li.cited")
    watched.shoot("search")
    watched.clean("search")

    # edit a fact in a dialog: cancel changes nothing, save keeps the old value as history
    page.click("#tabs button[data-view=brain]")
    page.click("#brain-facts tr:has-text('city') button.edit-fact")
    page.wait_for_selector("#edit-dialog[open]")
    assert "city: Kraków" in page.inner_text("#edit-old")
    page.fill("#edit-value", "")
    page.click("#edit-save")  # an empty value: the field says it is required
    assert page.locator("#edit-dialog[open]").count() == 1
    page.fill("#edit-value", "Gdańsk")
    watched.shoot("edit")
    watched.clean("edit dialog")
    page.click("#edit-cancel")
    assert page.locator("#edit-dialog[open]").count() == 0
    assert "Gdańsk" not in page.inner_text("#brain-facts")
    page.click("#brain-facts tr:has-text('city') button.edit-fact")
    page.fill("#edit-value", "Gdańsk")
    page.click("#edit-save")
    page.wait_for_selector("#brain-facts td:has-text('Gdańsk')")
    # the status line is written once the edit's answer is read: wait for it, not for the table
    page.wait_for_selector("#status:has-text('city is now Gdańsk')")
    history = json.loads(_kronika(workspace.home, "history", "city", "--json"))
    assert [v["value"] for v in history][-2:] == ["Kraków", "Gdańsk"]

    # the items: filters by scope, channel, tier and type
    page.click("#tabs button[data-view=items]")
    page.wait_for_selector("#items tbody tr")
    total = page.locator("#items tbody tr").count()
    page.select_option("#filter-type", "message")
    kinds = set(page.locator("#items tbody tr td:nth-child(2)").all_inner_texts())
    assert kinds == {"message"}
    assert page.locator("#items tbody tr").count() < total
    assert re.match(r"\d+ of \d+ items", page.inner_text("#items-count"))
    for field_ in ("scope", "channel", "tier"):
        assert page.locator(f"#filter-{field_} option").count() >= 2  # "any" and a value
    watched.shoot("items")
    watched.clean("items, filtered")

    page.select_option("#filter-type", "profile")
    assert "green tea every morning" in page.inner_text("#items")

    # forget an item: the dialog says what goes; cancel keeps it; forget gives a receipt
    row = "#items tr:has-text('green tea every morning') button.forget"
    page.click(row)
    page.wait_for_selector("#forget-dialog[open]")
    assert "green tea every morning" in page.inner_text("#forget-items")
    assert "brain.md" in page.inner_text("#forget-places")
    watched.shoot("forget")
    watched.clean("forget dialog")
    page.keyboard.press("Escape")
    page.wait_for_selector("#forget-dialog[open]", state="detached")
    # the dialog's close event comes after its open attribute goes: wait for what it says
    page.wait_for_selector("#status:has-text('Nothing was forgotten')")
    assert "green tea" in _kronika(workspace.home, "show", "brain")
    page.click(row)
    page.click("#forget-go")
    page.wait_for_selector("#receipt h3")
    receipt = page.inner_text("#receipt")
    assert "Forgotten: 1 item(s)" in receipt and "green tea every morning" in receipt
    assert "green tea" not in _kronika(workspace.home, "show", "brain")

    # a topic that names nothing: its own answer, not the last receipt
    page.fill("#forget-topic", "submarines")
    page.click("#forget-form button[type=submit]")
    page.wait_for_selector("#receipt h3:has-text('submarines')")
    assert "Nothing forgotten" in page.inner_text("#receipt")
    assert "Forgotten: 1 item(s)" not in page.inner_text("#receipt")

    # export, then the charts
    page.click("#tabs button[data-view=export]")
    page.click("#export-json")
    page.wait_for_selector("#export-link:not([hidden])")
    with page.expect_download() as download:
        page.click("#export-link")
    saved = Path(download.value.path())
    exported = json.loads(saved.read_text(encoding="utf-8"))
    assert "Gdańsk" in exported["agents"]["default"]["files"]["brain.md"]
    watched.clean("export")
    page.click("#tabs button[data-view=charts]")
    page.wait_for_selector("#charts figure.chart svg")
    watched.shoot("charts")
    watched.clean("charts")


def test_a_tenant_without_an_agent_is_told_how_to_make_one(
    workspace: Workspace, watched: Watched
) -> None:
    sign_in(watched, workspace.url, workspace.empty)
    page = watched.page
    page.wait_for_selector("#no-agent:not([hidden])")
    assert "kronika agents create" in page.inner_text("#no-agent")
    assert page.is_hidden("#tabs")
    watched.clean("a tenant with no agent")  # no request to /v1/agents//wake


def test_a_reader_gets_no_edit_or_forget_controls(workspace: Workspace, watched: Watched) -> None:
    sign_in(watched, workspace.url, workspace.reader)
    page = watched.page
    page.wait_for_selector("#brain-facts tbody tr")
    assert page.locator("button.edit-fact").count() == 0
    page.click("#tabs button[data-view=items]")
    page.wait_for_selector("#items tbody tr")
    assert page.locator("button.forget").count() == 0
    watched.clean("reader")
