"""Generated documentation stays current."""

from __future__ import annotations

from pathlib import Path

from kronika.settings import SETTINGS_TABLE, settings_markdown

ROOT = Path(__file__).parents[2]


def test_settings_doc_is_generated_from_the_table() -> None:
    assert (ROOT / "docs" / "settings.md").read_text() == settings_markdown(), (
        "docs/settings.md is stale: run scripts/gen-docs"
    )
    assert all(f"`{spec.name}`" in settings_markdown() for spec in SETTINGS_TABLE)


def test_readme_has_the_two_commands_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "scripts/test" in readme
    assert "kronika init" in readme
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text()


def test_settings_table_and_dataclass_agree() -> None:
    from dataclasses import fields

    from kronika.settings import Settings

    names = {f.name for f in fields(Settings)} - {"agents"}
    assert names == {spec.name for spec in SETTINGS_TABLE}
    defaults = Settings()
    for spec in SETTINGS_TABLE:
        if spec.name != "home":
            assert getattr(defaults, spec.name) == spec.default, spec.name
