"""The import paths the docs taught before the workflows moved out of ``kronika.engine``
(and the reading context out of ``kronika.memory``) still work, and say where the names
live now with a DeprecationWarning pointing at the line that imported them."""

from __future__ import annotations

import importlib
import sys

import pytest

from kronika import MOVED, Memory

OLD_PATHS = {
    "kronika.engine.charts": ("kronika.workflows.charts", "recall_entries"),
    "kronika.engine.chat": ("kronika.workflows.chat", "ChatAgent"),
    "kronika.engine.consolidate": ("kronika.workflows.consolidate", "Consolidator"),
    "kronika.engine.portability": ("kronika.workflows.portability", "import_export"),
    "kronika.engine.session": ("kronika.workflows.session", "Session"),
    "kronika.engine.tools": ("kronika.workflows.tools", "call_tool"),
    "kronika.memory.context": ("kronika.workflows.context", "ReadingContext"),
    "kronika.engine.sync": ("kronika.engine.indexer", "Indexer"),
    "kronika.stores.markdown.brain": ("kronika.stores.markdown.facts.brain", "ARCHIVE"),
}


def test_every_moved_path_is_tried_here() -> None:
    assert {old: new for old, (new, _) in OLD_PATHS.items()} == MOVED


@pytest.mark.parametrize("old", sorted(OLD_PATHS))
def test_an_old_path_warns_at_the_importer_and_gives_the_same_names(
    old: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    new, name = OLD_PATHS[old]
    monkeypatch.delitem(sys.modules, old, raising=False)  # imported afresh, so it warns

    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated: import from {new}") as w:
        module = __import__(old, fromlist=[name])

    assert [warning.filename for warning in w] == [__file__]  # the importing line, not kronika
    moved = importlib.import_module(new)
    assert getattr(module, name) is getattr(moved, name)
    assert set(module.__all__) <= set(dir(moved))


def test_code_written_against_an_old_path_still_runs(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "kronika.engine.tools", raising=False)
    with pytest.warns(DeprecationWarning, match="kronika.workflows.tools"):
        from kronika.engine.tools import TOOLS, call_tool

    assert "remember" in {tool["function"]["name"] for tool in TOOLS}
    reply = call_tool(memory, "default", "remember", {"key": "city", "value": "Kraków"})
    assert reply["ok"] is True
    assert [(f.key, f.value) for f in memory.facts()] == [("city", "Kraków")]
