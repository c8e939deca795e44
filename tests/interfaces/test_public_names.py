"""``kronika`` itself offers the names the docs teach, each the object of its home
module, and loads none of them before it is asked for."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kronika


def test_every_public_name_is_listed_once_sorted_and_found_at_its_home() -> None:
    assert kronika.__all__ == sorted(set(kronika.__all__))
    assert set(kronika.__all__) == set(kronika._HOMES)
    for name, home in kronika._HOMES.items():
        assert getattr(kronika, name) is getattr(importlib.import_module(home), name), name
    assert set(kronika.__all__) <= set(dir(kronika))


def test_the_workflows_the_docs_teach_come_from_kronika() -> None:
    from kronika.workflows import chat, consolidate, jobs, portability, session, tools

    assert kronika.Session is session.Session
    assert kronika.extract_from_conversation is session.extract_from_conversation
    assert kronika.ChatAgent is chat.ChatAgent
    assert kronika.Consolidator is consolidate.Consolidator
    assert kronika.run_job is jobs.run_job
    assert (kronika.export_memory, kronika.import_export) == (
        portability.export_memory,
        portability.import_export,
    )
    assert (kronika.TOOLS, kronika.call_tool) == (tools.TOOLS, tools.call_tool)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Sesion'"):
        getattr(kronika, "Sesion")  # noqa: B009


def test_import_kronika_loads_no_workflow_until_one_is_asked_for() -> None:
    code = (
        "import sys, kronika\n"
        "print(sorted(m for m in sys.modules if m.startswith('kronika.')))\n"
        "kronika.Session\n"
        "print('kronika.workflows.session' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    assert out == ["[]", "True"]


DOCS = Path(__file__).resolve().parents[2]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _doc_imports() -> list[tuple[str, str, list[str]]]:
    """``(page, module, names)`` of every ``from kronika… import …`` in the Python
    examples of the README and docs/."""
    found = []
    for page in [DOCS / "README.md", *sorted((DOCS / "docs").glob("*.md"))]:
        for block in _BLOCK.findall(page.read_text(encoding="utf-8")):
            statements = re.findall(r"^from kronika[\w.]* import (?:\([^)]*\)|.*)$", block, re.M)
            for statement in statements:
                node = ast.parse(statement).body[0]
                assert isinstance(node, ast.ImportFrom) and node.module is not None
                found.append((page.name, node.module, [a.name for a in node.names]))
    return found


def test_every_import_the_docs_show_works_from_a_current_home() -> None:
    imports = _doc_imports()
    assert ("python-api.md", "kronika", ["export_memory", "import_export"]) in imports
    for page, module, names in imports:
        try:
            home = importlib.import_module(module)
        except ModuleNotFoundError as exc:  # an extra that is not installed here
            assert exc.name is not None and not exc.name.startswith("kronika"), exc
            continue
        assert not (home.__doc__ or "").startswith("Deprecated"), f"{page}: {module}"
        missing = [name for name in names if not hasattr(home, name)]
        assert not missing, f"{page}: {module} has no {missing}"
