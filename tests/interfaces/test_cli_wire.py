"""The command line's ``--json`` prints an item and a forget receipt as the REST API
and MCP send them (:mod:`kronika.wire`), and keeps its own documented shapes for the
objects :mod:`kronika.wire` names as differing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from kronika import build_memory, load_settings, wire


def test_an_item_prints_as_the_server_sends_it(run: Callable[..., str], tmp_path: Path) -> None:
    run("init")
    made = json.loads(run("remember", "Peter drinks green tea", "--key", "drink", "--json"))
    listed = json.loads(run("list", "--json"))
    shown = json.loads(run("get", made["item"]["id"], "--json"))
    history = json.loads(run("history", "drink", "--json"))
    with build_memory(load_settings(tmp_path / "ws")) as memory:
        stored = memory.get(made["item"]["id"])
        assert made["item"] == wire.item(stored)
        assert listed == wire.items(memory.items())
        assert shown == wire.item(stored)
        assert history == wire.items(memory.history("drink"))
    # the write receipt keeps the command's own shape (kronika.wire's docstring)
    assert set(made) == {"outcome", "change", "item", "notes", "policy"}


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
