"""Changing the storage policies in the page, in a real headless Chromium: an admin key
of the whole tenant sees the policy tables of ``kronika.toml``, a bad rule is refused
with its reason on the page and the file untouched, a good one is saved and shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.server.conftest import Served
from tests.server.test_policy_edit import HEAD, NEW, OLD, config, write_config
from tests.server.test_ui import colours, page, shoot, sign_in

__all__ = ["page"]  # the browser fixture, shared with test_ui


def test_an_admin_changes_them_in_the_page_and_a_bad_rule_is_shown(
    page: Any, served: Served, tmp_path: Path
) -> None:
    write_config(served, HEAD + OLD)
    served.memories["acme"].remember("Kraków", key="city", agent="alice")
    sign_in(page, served, "acme-admin", "alice")
    page.click("#tabs button[data-view=policies]")
    page.wait_for_selector("#policies-form:not([hidden])")
    assert page.input_value("#policies-toml") == OLD.strip() + "\n"
    page.fill("#policies-toml", '[[policy]]\nname = "x"\n')
    page.click("#policies-form button[type=submit]")
    page.wait_for_selector("#status.bad")
    assert "does nothing" in page.inner_text("#status")
    assert config(served) == HEAD + OLD
    page.fill("#policies-toml", NEW)
    page.click("#policies-form button[type=submit]")
    page.wait_for_function(
        "document.querySelector('#policies tbody').innerText.includes('never store #hr-private')"
    )
    assert config(served) == HEAD + NEW
    assert page.input_value("#policies-toml") == NEW
    assert colours(shoot(page, tmp_path, "ui-policies-edit")) > 20
    axe = pytest.importorskip("axe_playwright_python.sync_playwright", reason="no axe-core")
    found = axe.Axe().run(page).response["violations"]
    assert [v["id"] for v in found if v["impact"] in ("serious", "critical")] == []
