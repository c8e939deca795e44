"""The memory browser's linked pages in a real headless Chromium over a real server:
entity pages, opinions and their evidence, a fact's explanation, a session's summary,
the Markdown zip, import, an axe-core check of every view, a phone screen and the
keyboard — each checked in the page and in the store; and the read routes behind them,
scoped like every other route."""

from __future__ import annotations

import io
import json
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.server.conftest import Served

from kronika import Memory, build_memory, load_settings
from kronika.engine.changes import WriteSummary
from kronika.providers.llm import LLMConfig, OpenAICompatibleLLM
from kronika.testing import ScriptedChatServer
from kronika.workflows.consolidate import Consolidator
from kronika.workflows.explain import explain
from kronika.workflows.jobs import run_job
from kronika.workflows.portability import export_memory

try:  # the browser tests need Playwright and Chromium; the route tests do not
    from tests.server.test_ui import CHROMIUM, FLAGS, colours, shoot, sign_in, sync_api
except pytest.skip.Exception as missing:
    BROWSER: str | None = str(missing)
else:
    BROWSER = None

SESSION = "2026-11-25_001"
HIDDEN = "2026-11-25_002"
SUMMARY = "Rozmowa o psie Burku i o tym, że Zofia woli herbatę."
VIEWS = (
    "brain", "facts", "search", "items", "sessions", "summaries", "entities", "opinions",
    "lessons", "proposals", "audit", "export", "charts", "policies",
)  # fmt: skip


@pytest.fixture
def browser() -> Iterator[Any]:
    if BROWSER is not None:
        pytest.skip(BROWSER)
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield launched
        launched.close()


def open_page(browser: Any, width: int = 1280, height: int = 900) -> Any:
    context = browser.new_context(
        viewport={"width": width, "height": height}, accept_downloads=True
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    return page


@pytest.fixture
def page(browser: Any) -> Any:
    return open_page(browser)


@pytest.fixture
def filled(served: Served) -> dict[str, str]:
    """alice's memory: facts in Polish, Spanish and Ukrainian, an opinion about Zofia
    with a piece of evidence linked to it, what only the user bob may see, a session
    summarised by the summarize job (a scripted model) and an L1 summary over it."""
    acme = served.memories["acme"]
    acme.remember("Kraków", key="city", agent="alice")
    acme.remember("Gdańsk", key="city", agent="alice")
    acme.remember("Me gusta el café de Colombia", key="bebida", agent="alice")
    acme.remember("Улюблене місто — Львів", key="місто", agent="alice")
    acme.note("@Zofia mieszka w Krakowie od 2020 roku", agent="alice", kind="W")
    opinion = acme.note("@Zofia woli herbatę niż kawę", agent="alice", kind="O", confidence=0.7)
    piece = acme.note("@Zofia zamówiła herbatę z cytryną", agent="alice", kind="B")
    assert opinion.item is not None and piece.item is not None
    acme.link(piece.item.id, opinion.item.id, agent="alice")
    acme.note("@Zofia tajemnica Boba", agent="alice", user="bob")
    acme.note("@Taras прийде завтра", agent="alice", user="bob")
    run_job(acme, "reflect", agent="alice")
    acme.save_turn(SESSION, "user", "Mój pies ma na imię Burek", agent="alice")
    acme.save_turn(SESSION, "assistant", "Burek to piękne imię", agent="alice")
    Consolidator(acme, None).end("alice", SESSION, "shutdown")
    reply = json.dumps({"facts": [], "summary": SUMMARY})
    with ScriptedChatServer([reply]) as server:
        llm = OpenAICompatibleLLM(LLMConfig(server.base_url, model="scripted"))
        report = run_job(acme, "summarize", agent="alice", llm=llm)
    assert report.done == [f"session {SESSION}: 0 fact(s)"]
    l1 = (("id", "l1-alice-001"), ("sessions", SESSION), ("created", "2026-11-25T12:00:00Z"))
    body = f"Alicja rozmawiała o Burku.\n\nSources: [{SESSION}](../../sessions/{SESSION}.md)\n"
    first = WriteSummary("summaries/L1/L1_001.md", body, l1)
    acme.memory_write("alice", "summaries", first, "alice")
    secret = (("id", "l1-alice-002"), l1[1], ("user", "bob"))
    second = WriteSummary("summaries/L1/L1_002.md", "Sekret Boba.\n", secret)
    acme.memory_write("alice", "summaries", second, "alice")
    acme.save_turn(HIDDEN, "user", "Tylko dla Boba", agent="alice")
    hidden = acme.workspace.agent_dir("alice") / "sessions" / f"{HIDDEN}.md"
    hidden.write_text(hidden.read_text().replace("---\n", "---\nuser: bob\n", 1))
    return {"opinion": opinion.item.id, "evidence": piece.item.id}


# ---------------------------------------------------------------- the routes
def test_an_entity_page_shows_what_the_reader_may_see_and_links_its_opinion_evidence(
    served: Served, filled: dict[str, str]
) -> None:
    acme = served.memories["acme"]
    listed = served.call("GET", "/v1/agents/alice/entities")
    assert listed.status == 200
    pages = acme.workspace.agent_dir("alice") / "bank" / "entities"
    assert {p.stem for p in pages.glob("*.md")} >= {"Zofia", "Taras"}
    names = [e["name"] for e in listed.body["entities"]]
    assert "Zofia" in names and "Taras" not in names  # only bob sees what is said of Taras
    page = served.call("GET", "/v1/agents/alice/entities/zofia")
    assert page.status == 200 and page.body["path"] == "bank/entities/Zofia.md"
    said = [n["content"] for n in page.body["notes"]]
    assert said == ["@Zofia mieszka w Krakowie od 2020 roku", "@Zofia zamówiła herbatę z cytryną"]
    (opinion,) = page.body["opinions"]
    assert (opinion["id"], opinion["confidence"]) == (filled["opinion"], 0.7)
    assert [e["item"]["id"] for e in opinion["evidence"]] == [filled["evidence"]]
    assert "tajemnica" not in json.dumps(page.body)  # the page file lists it: never sent
    assert "tajemnica Boba" in (pages / "Zofia.md").read_text(encoding="utf-8")
    as_bob = served.call(
        "GET", "/v1/agents/alice/entities/Zofia", headers={"X-Kronika-User": "bob"}
    )
    assert as_bob.status == 200 and "tajemnica Boba" in json.dumps(as_bob.body, ensure_ascii=False)
    assert served.call("GET", "/v1/agents/alice/entities/Taras").status == 404
    opinions = served.call("GET", "/v1/agents/alice/opinions", key="acme-reader")
    assert opinions.status == 200
    assert [o["id"] for o in opinions.body["opinions"]] == [filled["opinion"]]


def test_summaries_and_explain_are_read_as_the_caller(
    served: Served, filled: dict[str, str]
) -> None:
    acme = served.memories["acme"]
    found = served.call("GET", f"/v1/agents/alice/sessions/{SESSION}/summary", key="acme-reader")
    assert found.status == 200 and found.body["summary"] == SUMMARY
    assert [s["content"] for s in found.body["summaries"]] == [
        f"Alicja rozmawiała o Burku.\n\nSources: [{SESSION}](../../sessions/{SESSION}.md)"
    ]
    listed = served.call("GET", "/v1/agents/alice/summaries")
    assert [s["session_id"] for s in listed.body["sessions"]] == [SESSION]
    assert "Sekret" not in json.dumps(listed.body, ensure_ascii=False)
    assert served.call("GET", f"/v1/agents/alice/sessions/{HIDDEN}/summary").status == 404
    as_bob = served.call("GET", "/v1/agents/alice/summaries", headers={"X-Kronika-User": "bob"})
    assert "Sekret Boba." in [s["content"] for s in as_bob.body["summaries"]]

    sessions = served.call("GET", "/v1/agents/alice/sessions", key="acme-reader")
    assert [s["session_id"] for s in sessions.body["sessions"]] == [SESSION]
    as_bob = served.call("GET", "/v1/agents/alice/sessions", headers={"X-Kronika-User": "bob"})
    assert HIDDEN in [s["session_id"] for s in as_bob.body["sessions"]]

    why = served.call("GET", "/v1/agents/alice/explain/city")
    assert why.status == 200
    expected = explain(acme, "city", agent="alice")
    assert why.body["item"]["id"] == expected.item.id and why.body["item"]["value"] == "Gdańsk"
    assert why.body["origin"]["how"] == "remembered" and why.body["origin"]["by"] == "user"
    assert [v["value"] for v in why.body["lineage"]] == ["Kraków", "Gdańsk"]
    assert [e["action"] for e in why.body["events"]] == [e.action for e in expected.events]
    secret = next(it for it in acme.items(agent="alice") if "tajemnica" in it.content)
    assert served.call("GET", f"/v1/agents/alice/explain/{secret.id}").status == 404


@pytest.mark.parametrize(
    "path",
    [
        "/v1/agents/alice/summaries",
        f"/v1/agents/alice/sessions/{SESSION}/summary",
        "/v1/agents/alice/entities",
        "/v1/agents/alice/entities/Zofia",
        "/v1/agents/alice/opinions",
        "/v1/agents/alice/explain/city",
        "/v1/export/markdown?agent=alice",
    ],
)
def test_every_page_route_wants_a_key_and_hides_other_agents(
    served: Served, filled: dict[str, str], path: str
) -> None:
    assert served.call("GET", path, key=None).status == 401
    assert served.call("GET", path, key="acme-revoked").status == 401
    assert served.call("GET", path, key="acme-reader-bob").status == 404  # bob's key: no alice
    assert served.call("GET", path, key="initech-admin").status == 404  # a tenant not held here
    if "export" not in path:
        other = served.call("GET", path, key="globex-admin")  # globex has an alice of its own
        said = json.dumps(other.body, ensure_ascii=False)
        assert other.status in (200, 404)
        assert "herbat" not in said and "Gdańsk" not in said and "Burek" not in said
        assert served.call("GET", path, key="acme-admin").status == 200


def test_bad_input_gets_422(served: Served, filled: dict[str, str]) -> None:
    for path in (
        "/v1/agents/alice/entities/%20",
        "/v1/agents/alice/entities/a%5Cb",
        "/v1/agents/alice/entities/" + "Z" * 81,
        "/v1/agents/alice/explain/" + "x" * 201,
        "/v1/export/markdown?agent=",
    ):
        answer = served.call("GET", path)
        assert answer.status == 422, (path, answer.body)


def test_the_markdown_zip_is_the_workspace_and_only_a_whole_tenant_admin_gets_it(
    served: Served, filled: dict[str, str]
) -> None:
    request = urllib.request.Request(
        served.url + "/v1/export/markdown?agent=alice",
        headers={"Authorization": f"Bearer {served.keys['acme-admin']}"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.headers["Content-Type"] == "application/zip"
        assert 'filename="kronika-alice.zip"' in answer.headers["Content-Disposition"]
        data = answer.read()
    assert_zip_is_workspace(data, served.memories["acme"], "alice")
    for key, headers in (
        ("acme-reader", {}),
        ("acme-alice", {}),
        ("acme-admin-bob", {}),
        ("acme-admin", {"X-Kronika-User": "bob"}),
    ):
        refused = served.call("GET", "/v1/export/markdown?agent=alice", key=key, headers=headers)
        assert refused.status in (403, 404), key
        assert refused.status == 403 or key == "acme-admin-bob"


def assert_zip_is_workspace(data: bytes, memory: Memory, agent: str) -> None:
    folder = memory.workspace.agent_dir(agent)
    on_disk = {
        f"{agent}/{p.relative_to(folder).as_posix()}": p.read_bytes()
        for p in folder.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(folder).parts)
    }
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        zipped = {name: archive.read(name) for name in archive.namelist()}
    assert zipped == on_disk
    assert f"{agent}/bank/entities/Zofia.md" in zipped and f"{agent}/brain.md" in zipped


# ---------------------------------------------------------------- the page
def test_an_entity_page_leads_to_the_evidence_of_its_opinion(
    page: Any, served: Served, filled: dict[str, str], tmp_path: Path
) -> None:
    sign_in(page, served, "acme-admin", "alice")
    page.click("#tabs button[data-view=entities]")
    page.click("#entity-list a:has-text('Zofia')")
    page.wait_for_selector("#entity-page h3:has-text('Zofia')")
    text = page.inner_text("#entity-page")
    assert "mieszka w Krakowie" in text and "tajemnica" not in text
    assert "0.70" in text
    page.click("#entity-page a.opinion-link")
    page.wait_for_selector("#evidence ul.evidence li")
    assert page.is_visible("#view-opinions") and not page.is_visible("#view-entities")
    acme = served.memories["acme"]
    (linked,) = acme.links(filled["opinion"], agent="alice")
    other = linked.to_id if linked.from_id == filled["opinion"] else linked.from_id
    evidence = acme.get(other, agent="alice")
    assert evidence.content in page.inner_text("#evidence")
    assert page.locator("#opinions tr.chosen").inner_text().count("herbatę niż kawę") == 1
    page.click("#evidence a.why")
    page.wait_for_selector("#evidence .explanation h3")
    assert "remembered by user" in page.inner_text("#evidence .explanation")
    assert colours(shoot(page, tmp_path, "ui-entity")) > 30


def test_a_fact_opens_its_explanation_and_a_session_its_summary(
    page: Any, served: Served, filled: dict[str, str], tmp_path: Path
) -> None:
    acme = served.memories["acme"]
    sign_in(page, served, "acme-admin", "alice")
    page.click("#tabs button[data-view=facts]")
    page.click("#facts tr:has-text('Gdańsk') button.explain")
    page.wait_for_selector("#explain table.lineage")
    why = explain(acme, "city", agent="alice")
    shown = page.inner_text("#explain")
    assert why.item.id in shown and "remembered by user" in shown
    lineage = page.locator("#explain table.lineage tbody tr").all_inner_texts()
    assert [row.split("\t")[0] for row in lineage] == [v.value for v in why.lineage]
    actions = page.locator("#explain table.events tbody td:nth-child(2)").all_inner_texts()
    assert actions == [e.action for e in why.events]
    assert colours(shoot(page, tmp_path, "ui-explain")) > 30

    page.click("#tabs button[data-view=sessions]")
    page.click(f"#sessions tr:has-text('{SESSION}') a.summary-of")
    page.wait_for_selector("#summary-page .session-summary")
    header = next(h for h in acme.workspace.session_headers("alice") if h.session_id == SESSION)
    assert page.inner_text("#summary-page .session-summary") == header.fields["summary"] == SUMMARY
    assert "Alicja rozmawiała o Burku." in page.inner_text("#summary-page")
    assert HIDDEN not in page.inner_text("#session-summaries")
    page.click("#summary-page a.transcript-link")
    page.wait_for_selector("#transcript li")
    assert "Mój pies ma na imię Burek" in page.inner_text("#transcript")


def test_the_markdown_zip_and_an_import_from_the_page(
    page: Any, served: Served, filled: dict[str, str], tmp_path: Path
) -> None:
    acme = served.memories["acme"]
    sign_in(page, served, "acme-admin", "alice")
    page.click("#tabs button[data-view=export]")
    page.click("#export-zip")
    page.wait_for_selector("#export-zip-link:not([hidden])")
    with page.expect_download() as download:
        page.click("#export-zip-link")
    saved = tmp_path / "alice.zip"
    download.value.save_as(saved)
    assert_zip_is_workspace(saved.read_bytes(), acme, "alice")

    other = build_memory(
        load_settings(tmp_path / "other", environ={}, embedder="hashing", tenant="acme"),
        create=True,
    )
    with other:
        other.create_agent("dave")
        other.remember("Ми зустрічаємося щочетверга о 18:00", key="зустріч", agent="dave")
        other.remember("La reunión es en Málaga", key="lugar", agent="dave")
        document = export_memory(other, ["dave"])
    exported = tmp_path / "dave.json"
    exported.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    page.set_input_files("#import-file", str(exported))
    page.click("#import-form button[type=submit]")
    page.wait_for_selector("#import-report h3")
    assert "agents: 1" in page.inner_text("#import-report")
    assert "dave" in page.locator("#agent option").all_inner_texts()  # the list is fresh
    assert {f.key: f.value for f in acme.facts(agent="dave")} == {
        "зустріч": "Ми зустрічаємося щочетверга о 18:00",
        "lugar": "La reunión es en Málaga",
    }
    page.select_option("#agent", "dave")
    page.click("#tabs button[data-view=items]")
    page.wait_for_selector("#items tbody tr")
    items = page.inner_text("#items")
    assert "щочетверга о 18:00" in items and "Málaga" in items
    assert "Ми зустрічаємося" in (acme.workspace.agent_dir("dave") / "brain.md").read_text()


def test_a_reader_gets_no_import_control_and_the_server_refuses_it(
    page: Any, served: Served, filled: dict[str, str]
) -> None:
    sign_in(page, served, "acme-reader", "alice")
    page.click("#tabs button[data-view=export]")
    page.wait_for_selector("#export-zip")
    assert not page.is_visible("#import-form")
    document = served.call("GET", "/v1/export?agent=alice").body
    for key in ("acme-reader", "acme-alice"):
        refused = served.call(
            "POST", "/v1/import", {"document": document, "replace": True}, key=key
        )
        assert refused.status == 403
    page.click("#export-zip")
    page.wait_for_selector("#status.bad")
    assert "403" in page.inner_text("#status")


def serious(page: Any) -> list[str]:
    """The serious and critical axe-core violations on the page as it is now."""
    axe = pytest.importorskip("axe_playwright_python.sync_playwright", reason="no axe-core")
    results = axe.Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def test_axe_finds_no_serious_violation_in_any_view(
    page: Any, served: Served, filled: dict[str, str]
) -> None:
    page.goto(served.url + "/")
    assert serious(page) == []  # the sign-in screen
    sign_in(page, served, "acme-admin", "alice")
    found = {}
    for view in VIEWS:
        page.click(f"#tabs button[data-view={view}]")
        page.wait_for_selector(f"#view-{view}:not([hidden])")
        page.wait_for_load_state("networkidle")
        found[view] = serious(page)
    page.click("#tabs button[data-view=entities]")
    page.click("#entity-list a:has-text('Zofia')")
    page.wait_for_selector("#entity-page h3")
    found["entity page"] = serious(page)
    page.click("#entity-page a.opinion-link")
    page.wait_for_selector("#evidence li")
    found["evidence"] = serious(page)
    page.click("#tabs button[data-view=facts]")
    page.click("#facts tr:has-text('Gdańsk') button.explain")
    page.wait_for_selector("#explain table")
    found["explain"] = serious(page)
    assert {view: v for view, v in found.items() if v} == {}
    broken = "<input id='unlabelled'><p style='color:#ccc'>faint</p>"
    page.evaluate(f"document.querySelector('main').insertAdjacentHTML('beforeend', \"{broken}\")")
    assert {v.split(" ")[0] for v in serious(page)} == {"label", "color-contrast"}  # it looks


def test_on_a_phone_nothing_scrolls_sideways_and_every_control_is_there(
    browser: Any, served: Served, filled: dict[str, str], tmp_path: Path
) -> None:
    page = open_page(browser, 390, 844)
    sign_in(page, served, "acme-admin", "alice")
    wide = "document.documentElement.scrollWidth > document.documentElement.clientWidth"
    for view in VIEWS:
        page.click(f"#tabs button[data-view={view}]")
        page.wait_for_selector(f"#view-{view}:not([hidden])")
        page.wait_for_load_state("networkidle")
        assert not page.evaluate(wide), view
    page.click("#tabs button[data-view=items]")
    page.wait_for_selector("#items button.forget")
    assert page.locator("#items button.forget").first.is_visible()  # no column is left out
    page.click("#tabs button[data-view=facts]")
    page.wait_for_selector("#facts button.explain")
    assert page.locator("#facts button.explain").first.is_visible()
    # the labels follow each render of the table in the next frame: wait for the phone
    # layout to name the third cell by its column (a time-out if it never does)
    page.wait_for_function(
        "() => { const td = document.querySelectorAll('#facts tbody td')[2];"
        " return !!td && getComputedStyle(td, '::before').content.includes('valid from'); }"
    )
    page.click("#tabs button[data-view=entities]")
    page.click("#entity-list a:has-text('Zofia')")
    page.wait_for_selector("#entity-page h3")
    assert not page.evaluate(wide)
    page.click("#tabs button[data-view=brain]")
    page.wait_for_selector("#brain-facts td:has-text('Улюблене місто — Львів')")
    assert page.locator("#brain-facts td:has-text('Me gusta el café')").is_visible()
    assert colours(shoot(page, tmp_path, "ui-phone")) > 30


def test_the_keyboard_reaches_the_nav_and_the_search_box(
    page: Any, served: Served, filled: dict[str, str]
) -> None:
    sign_in(page, served, "acme-admin", "alice")
    page.reload()  # the key stays in the tab: signed in again, the focus at the start
    page.wait_for_selector("#brain-facts tbody tr")
    seen = []
    for _ in range(40):
        page.keyboard.press("Tab")
        seen.append(
            page.evaluate(
                "(() => { const e = document.activeElement;"
                " return e.dataset.view ? 'nav:' + e.dataset.view : e.id || e.className; })()"
            )
        )
        if seen[-1] == "nav:search":
            break
    assert seen[0] == "skip"  # the link that skips to the view comes first
    assert "nav:brain" in seen and seen[-1] == "nav:search"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # the focus is visible
    focused = "document.activeElement.dataset.view"
    for key, view in (("ArrowRight", "items"), ("ArrowLeft", "search"), ("End", VIEWS[-1])):
        page.keyboard.press(key)
        assert page.evaluate(focused) == view
    page.keyboard.press("Home")
    assert page.evaluate(focused) == "brain"
    for _ in range(2):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.wait_for_selector("#view-search:not([hidden])")
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "query":
            break
    assert page.evaluate("document.activeElement.id") == "query"
    page.keyboard.type("Zofia")
    page.keyboard.press("Enter")
    page.wait_for_selector("#hits tbody tr")
    assert "Zofia" in page.inner_text("#hits")
